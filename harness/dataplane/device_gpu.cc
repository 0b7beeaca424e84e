// The data plane as GPU kernels: generation, prefill and the layout's initOwn hook on the host (as
// the host driver does them, on a copy of this rank's buffer), the run as a kernel
// (src/gpu_kernels: the built-in layouts' own, or a registered layout's from its team's .cu), and
// its outcome and device trace turned into the host's Result.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "dataplane/device.h"
#include "dataplane/device_mapping.h"
#include "dataplane/driver.h"
#include "gpu_kernels/protocol_kernels.h"
#include "layout/clocked_mem_ops.h"
#include "layout/engine.h"
#include "layout/generation.h"
#include "layout/layout_names.h"

namespace peerconf::harness::dataplane {

using model::DataplaneOutcome;
using model::Result;
using model::Spec;

bool deviceDataPlaneBuilt() { return true; }

namespace {
// The built-in registered layouts' kernels, in the registry before any scenario is validated.
const bool kBuiltinKernelsRegistered = (gpu_kernels::registerBuiltinLayoutKernels(), true);
}  // namespace

void warmUpDevice() {
  // A refusal leaves runs allocating their own arrays (and the memory check may then see them).
  (void)gpu_kernels::warmUp(static_cast<std::uint32_t>(kMaxDeviceTraceEvents), kDeviceTraceNotes);
}

namespace {

// This rank's buffer made ready on a host copy, as the host driver does it in place: the
// generation agreed (collective), the earlier life prefilled, and the layout's hook run (only this
// rank's own region is the hook's to touch), then copied back before the barrier that lets peers
// write. Throws what the group or the backend throws.
void readyOwnBuffer(const Spec& spec, const layout::Engine& engine, const layout::Shape& shape,
                    int rank, int ranks, DeviceBytes local, IpcBackend& backend, Group* group,
                    Result& result) {
  std::vector<layout::Word> own((engine.bytes(shape) + sizeof(layout::Word) - 1) /
                                sizeof(layout::Word));
  const std::size_t bytes = own.size() * sizeof(layout::Word);
  backend.copyToHost(own.data(), local.data, bytes);
  result.generation = layout::agreeGeneration(
      group, [&](std::uint32_t g) { return engine.generationInUse(shape, own.data(), g); });
  prefill(spec, engine, shape, rank, own.data(), result.generation);
  std::vector<layout::Word*> buffers(static_cast<std::size_t>(ranks), nullptr);
  buffers[static_cast<std::size_t>(rank)] = own.data();
  const layout::Context context{shape, rank, result.generation, buffers.data(),
                                static_cast<std::uint64_t>(result.timeoutNs)};
  engine.initOwn(context, spec.startEpoch);
  layout::ClockedMemOps::drain();
  backend.copyToDevice(local.data, own.data(), bytes);
  if (group != nullptr) group->allReduceMin(1);  // every buffer ready before any push
}

}  // namespace

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

  const layout::Registered* registered = layout::findLayout(spec.layout);
  const bool builtIn = layout::layoutKindFromName(spec.layout).has_value();
  try {
    readyOwnBuffer(spec, *engine, shape, rank, ranks, local, backend, group, result);
  } catch (const std::exception& e) {
    result.outcome = DataplaneOutcome::kError;
    result.detail = std::string("could not start the data plane: ") + e.what();
    result.elapsedNs = elapsed();
    return result;
  }

  run.generation = result.generation;
  gpu_kernels::Trace trace = traceRequest(spec, ranks);
  const gpu_kernels::ProtocolOutcome outcome =
      builtIn
          ? gpu_kernels::runProtocol(run, rank, addresses, hostBound, &trace)
          : gpu_kernels::runLayout(registered->gpuLaunch, run, rank, addresses, hostBound, &trace);
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
  applyTrace(builtIn ? &run.layout : nullptr, rank, outcome.trace, trace.events, trace.notes,
             result);

  closingBarrier(group, result);
  result.elapsedNs = elapsed();
  return result;
}

}  // namespace peerconf::harness::dataplane
