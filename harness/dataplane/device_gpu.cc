// The data plane as GPU kernels: generation and prefill on the host (as the host driver does
// them, on a copy of this rank's buffer), the run as a kernel (src/gpu_kernels), and its outcome
// and device trace turned into the host's Result.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "dataplane/device.h"
#include "dataplane/device_mapping.h"
#include "dataplane/driver.h"
#include "gpu_kernels/protocol_kernels.h"
#include "layout/generation.h"

namespace peerconf::harness::dataplane {

using model::DataplaneOutcome;
using model::Prefill;
using model::Result;
using model::Spec;

bool deviceDataPlaneBuilt() { return true; }

void warmUpDevice() {
  // A refusal leaves runs allocating their own arrays (and the memory check may then see them).
  (void)gpu_kernels::warmUp(static_cast<std::uint32_t>(kMaxDeviceTraceEvents), kDeviceTraceNotes);
}

Result runOnDevice(const Spec& spec, int rank, const std::vector<std::int64_t>& addresses,
                   DeviceBytes local, IpcBackend& backend, Group* group,
                   std::chrono::milliseconds timeout, std::chrono::milliseconds hostBound) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start)
        .count();
  };
  const int ranks = static_cast<int>(addresses.size());
  Result result;
  describeRun(spec, ranks, timeout, result);
  result.clockDomain = deviceClockDomain(gpu_kernels::currentDevice());

  // Decided alike on every rank (same scenario, same buffer size) before any group call.
  layout::Shape shape;
  const layout::Engine* engine = startLayout(spec, ranks, local.size, result, shape);
  if (engine == nullptr) return result;
  gpu_kernels::ProtocolRun run;
  try {
    run = toProtocolRun(spec, ranks, timeout);
  } catch (const std::exception& e) {
    result.outcome = DataplaneOutcome::kError;
    result.detail = std::string("the GPU data plane cannot run this spec: ") + e.what();
    return result;
  }

  try {
    const layout::Layout& layout = run.layout;
    std::vector<layout::Word> own(layout.words());
    backend.copyToHost(own.data(), local.data, layout.bytes());
    result.generation = layout::agreeGeneration(
        group, [&](std::uint32_t g) { return layout::generationInUse(layout, own.data(), g); });
    if (spec.prefill != Prefill::kNone) {
      prefill(spec, *engine, shape, rank, own.data(), result.generation);
      backend.copyToDevice(local.data, own.data(), layout.bytes());
    }
    if (group != nullptr) group->allReduceMin(1);  // every buffer prefilled before any push
  } catch (const std::exception& e) {
    result.outcome = DataplaneOutcome::kError;
    result.detail = std::string("could not start the data plane: ") + e.what();
    result.elapsedNs = elapsed();
    return result;
  }

  run.generation = result.generation;
  gpu_kernels::Trace trace = traceRequest(spec, ranks);
  const gpu_kernels::ProtocolOutcome outcome =
      gpu_kernels::runProtocol(run, rank, addresses, hostBound, &trace);
  if (outcome.end == gpu_kernels::ProtocolOutcome::End::kHostTimeout) {
    // The kernel still runs over the PeerBuffer: it can be neither freed nor waited for. Only
    // the end of the process releases the device; mpirun then ends the job, visibly.
    std::fprintf(stderr,
                 "peerconf: rank %d: the data-plane kernel still runs %lld ms after the host's "
                 "bound and its abort; ending the process\n",
                 rank, static_cast<long long>(hostBound.count()));
    std::fflush(stderr);
    std::_Exit(3);
  }
  applyOutcome(outcome, spec, rank, timeout, hostBound, result);
  applyTrace(run.layout, rank, outcome.trace, trace.events, trace.notes, result);

  closingBarrier(group, result);
  result.elapsedNs = elapsed();
  return result;
}

}  // namespace peerconf::harness::dataplane
