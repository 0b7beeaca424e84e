// The rank runner's entry into the data plane: after the handshake and the C4 check, every rank
// runs the scenario's data-plane workload over its PeerBuffer and records the outcome in its
// RankResult (dataPlane) and the phase in its event log.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "group.h"
#include "ipc_backend.h"
#include "model/core_under_test.h"
#include "model/dataplane_spec.h"
#include "model/event_log.h"
#include "model/run_record.h"
#include "peer_buffer.h"

namespace peerconf::harness::dataplane {

// Under `--runtime gpu`: run the data plane as GPU kernels (dataplane/device.h) over the same
// addresses, instead of the host driver.
struct OnDevice {
  IpcBackend* backend = nullptr;           // the real backend: copies of this rank's own buffer
  std::chrono::milliseconds hostBound{0};  // the kernel's bound on the host (the run's bound)
};

// Runs `spec` on `rank` over the buffers at `addresses` (this rank's own is `local`). Every rank
// whose handshake succeeded calls it at the same point, after the C4 check: it makes three calls
// on `harnessGroup` (null for a single rank) whatever happens. Waits time out after
// waitTimeout(spec, deadline). With `device`, the run is a GPU kernel a rank (runOnDevice; a
// build without GPU kernels reports an error result). Without, the host driver touches the
// memory directly, so it runs only when every address is host memory mapped by the mocked HIP
// runtime in this process (its ledger shows the allocation and the mappings); otherwise
// result.dataPlane says "skipped", which C6/C7/C8 fail: a data plane asked for and not run.
// Logs a "dataplane" phase (and a fault event for a planted stop or prefill). Never throws; also
// registers the C6/C7/C8 checkers.
void runDataPlane(const model::Spec& spec, std::chrono::milliseconds deadline, int rank,
                  const std::vector<std::int64_t>& addresses, DeviceBytes local,
                  Group* harnessGroup, model::EventLog& log, model::RankResult& result,
                  const OnDevice* device = nullptr);

// The same over a buffer under test (the rank runner's CoreBuffer, or a PeerBuffer).
void runDataPlane(const model::Spec& spec, std::chrono::milliseconds deadline, int rank,
                  const model::CoreBuffer& buffer, Group* harnessGroup, model::EventLog& log,
                  model::RankResult& result, const OnDevice* device = nullptr);
void runDataPlane(const model::Spec& spec, std::chrono::milliseconds deadline, int rank,
                  const PeerBuffer& buffer, Group* harnessGroup, model::EventLog& log,
                  model::RankResult& result, const OnDevice* device = nullptr);

// True when `local` is a live allocation of the mocked HIP runtime in this process and every
// other address one of its live mappings (device `device`'s ledger).
bool hostMapped(int device, const std::vector<std::int64_t>& addresses, DeviceBytes local);

}  // namespace peerconf::harness::dataplane
