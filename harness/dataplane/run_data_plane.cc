// The rank runner's entry into the data plane.
#include "dataplane/run_data_plane.h"

#include <algorithm>
#include <exception>
#include <string>

#include "dataplane/device.h"
#include "dataplane/driver.h"
#include "mock_hip/control.h"

namespace peerconf::harness::dataplane {

using model::CoreBuffer;
using model::DataplaneOutcome;
using model::EventLog;
using model::Prefill;
using model::RankResult;
using model::Result;
using model::Spec;
using model::waitTimeout;

bool hostMapped(int device, const std::vector<std::int64_t>& addresses, DeviceBytes local) {
  const auto allocations = mock_hip::liveAllocations(device);
  const auto mappings = mock_hip::liveMappings(device);
  const auto holds = [](const std::vector<mock_hip::LedgerEntry>& entries, std::uint64_t ptr,
                        std::size_t size) {
    return std::any_of(entries.begin(), entries.end(), [&](const mock_hip::LedgerEntry& e) {
      return e.ptr == ptr && e.size >= size;
    });
  };
  if (local.data == 0 || !holds(allocations, local.data, local.size)) return false;
  for (std::int64_t address : addresses) {
    const auto ptr = static_cast<std::uint64_t>(address);
    if (ptr != local.data && !holds(mappings, ptr, local.size)) return false;
  }
  return true;
}

void runDataPlane(const Spec& spec, std::chrono::milliseconds deadline, int rank,
                  const std::vector<std::int64_t>& addresses, DeviceBytes local,
                  Group* harnessGroup, EventLog& log, RankResult& result, const OnDevice* device) {
  log.record(harness::model::EventKind::kPhaseBegin, "dataplane");
  Result dp;
  try {
    if (device != nullptr && device->backend != nullptr) {
      if (spec.prefill != Prefill::kNone) {
        log.record(harness::model::EventKind::kFault, "dataplane-prefill", -1,
                   toString(spec.prefill));
      }
      dp = runOnDevice(spec, rank, addresses, local, *device->backend, harnessGroup,
                       waitTimeout(spec, deadline), device->hostBound);
      if (dp.outcome == DataplaneOutcome::kStopped) {
        log.record(harness::model::EventKind::kFault, "dataplane-stop", -1, dp.detail);
      }
    } else if (!hostMapped(rank, addresses, local)) {
      // Decided alike on every rank (one runtime per run), so no rank is left in a group call.
      dp.layout = spec.layout;
      dp.workload = toString(spec.workload);
      dp.stepsPlanned = spec.steps;
      dp.outcome = DataplaneOutcome::kSkipped;
      dp.detail =
          "not run: the host driver needs the mocked HIP runtime's host-mapped memory (GPU "
          "memory runs the data plane as kernels, under --runtime gpu)";
    } else {
      RankMemory memory;
      memory.rank = rank;
      memory.bytes = local.size;
      for (std::int64_t address : addresses) {
        memory.buffers.push_back(
            reinterpret_cast<layout::Word*>(static_cast<std::uintptr_t>(address)));
      }
      if (spec.prefill != Prefill::kNone) {
        log.record(harness::model::EventKind::kFault, "dataplane-prefill", -1,
                   toString(spec.prefill));
      }
      dp = runRank(spec, memory, harnessGroup, waitTimeout(spec, deadline));
      if (dp.outcome == DataplaneOutcome::kStopped) {
        log.record(harness::model::EventKind::kFault, "dataplane-stop", -1, dp.detail);
      }
    }
  } catch (const std::exception& e) {
    dp.outcome = DataplaneOutcome::kError;
    dp.detail = std::string("the data plane failed: ") + e.what();
  }
  log.record(harness::model::EventKind::kPhaseEnd, "dataplane", -1,
             toString(dp.outcome) + (dp.detail.empty() ? "" : ": " + dp.detail));
  result.dataPlane = std::move(dp);
}

void runDataPlane(const Spec& spec, std::chrono::milliseconds deadline, int rank,
                  const CoreBuffer& buffer, Group* harnessGroup, EventLog& log, RankResult& result,
                  const OnDevice* device) {
  runDataPlane(spec, deadline, rank, buffer.addresses(), buffer.bytes(), harnessGroup, log, result,
               device);
}

void runDataPlane(const Spec& spec, std::chrono::milliseconds deadline, int rank,
                  const PeerBuffer& buffer, Group* harnessGroup, EventLog& log, RankResult& result,
                  const OnDevice* device) {
  runDataPlane(spec, deadline, rank, buffer.addresses(), buffer.bytes(), harnessGroup, log, result,
               device);
}

}  // namespace peerconf::harness::dataplane
