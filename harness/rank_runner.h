// RankRunner: what one rank does in one run of a scenario, the same under every launcher:
// construct the PeerBuffer through the decorated seams, check its addresses with the other
// ranks (and read its device table back), close it twice, snapshot what close() left, destroy
// it (the "destroy" phase: whatever it releases there is the destructor's), and describe the
// outcome as a RankResult.
#pragma once

#include <functional>

#include "backend_factory.h"
#include "core_under_test.h"
#include "event_log.h"
#include "group.h"
#include "ipc_backend.h"
#include "run_record.h"
#include "scenario.h"

namespace peerconf::harness {

// Thrown by a launcher's RankControl when a planted death or hang stops a rank. It is not a
// std::exception, so nothing in the core mistakes it for an error it could handle.
struct RankStopped {
  RankStatus status = RankStatus::kDead;  // kDead or kHung
  Point at = Point::kBeforeConstruct;
};

struct RankSeams {
  IpcBackend& core;     // what the core under test sees (recording over faults over real)
  Group& coreGroup;     // likewise for the group
  IpcBackend& plain;    // the real backend, for the harness's own writes and reads
  Group* harnessGroup;  // a group separate from the core's, for the harness's barriers
  // The length of this rank's runtime ledger now, where the runtime keeps one (the mock); C3
  // judges close() on the ledger as it was at the end of the close phase (ledgerAtClose).
  std::function<std::size_t()> ledgerLength = {};
  // The device runtime: under kGpu the data plane runs as GPU kernels (dataplane/device.h).
  Runtime runtime = Runtime::kMock;
};

// Runs `rank` of `scenario`. `atPoint` applies the faults planned at a point outside the seams
// (before the constructor). Never throws: everything, RankStopped included, ends in the result.
// `core` builds the buffer under test (the production PeerBuffer unless a test swaps it).
RankResult runRank(const Scenario& scenario, int rank, const RankSeams& seams, EventLog& log,
                   const std::function<void(Point)>& atPoint,
                   const CoreFactory& core = productionCore());

// Whether the scenario plans a death or a hang anywhere (then the harness skips its barriers).
bool plansStoppedRanks(const Scenario& scenario);

}  // namespace peerconf::harness
