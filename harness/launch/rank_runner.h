// RankRunner: what one rank does in one run of a scenario, the same under every launcher:
// construct the PeerBuffer through the decorated seams (or each buffer of `buffers:` in turn, with
// its size and label: model/buffers.h), check its addresses with the other ranks (and read its
// device table back), close it twice, snapshot what close() left, destroy it (the "destroy"
// phase: whatever it releases there is the destructor's), and describe the outcome as a
// RankResult.
#pragma once

#include <functional>
#include <stdexcept>

#include "backend_factory.h"
#include "group.h"
#include "ipc_backend.h"
#include "model/core_under_test.h"
#include "model/event_log.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

// Thrown by a launcher's RankControl when a planted death or hang stops a rank. It is not a
// std::exception, so nothing in the core mistakes it for an error it could handle.
struct RankStopped {
  model::RankStatus status = model::RankStatus::kDead;  // kDead, kHung or kExited
  model::Point at = model::Point::kBeforeConstruct;
  int code = 0;  // kExited: the exit status the rank's process would end with
};

struct RankSeams {
  IpcBackend& core;     // what the core under test sees (recording over faults over real)
  Group& coreGroup;     // likewise for the group
  IpcBackend& plain;    // the real backend, for the harness's own writes and reads
  Group* harnessGroup;  // a group separate from the core's, for the harness's barriers
  // The length of this rank's runtime ledger now, where the runtime keeps one (the mock); C3
  // judges close() on the ledger as it was at the end of the close phase (ledgerAtClose).
  std::function<std::size_t()> ledgerLength = {};
  // The group of the runner's own agreement (tpAgree before the constructor, the seed's runner):
  // the same group the core uses, WITHOUT the fault and recording decorators, so that no planted
  // group fault or point fires on the runner's call (the runner records it itself, as a
  // "tpAgree" call in its "ready" phase). Needed with more than one rank and agree_first.
  Group* runnerGroup = nullptr;
  // Whether this rank's setup succeeded before the constructor: false where a not-ready fault
  // fires. Unset: always ready.
  std::function<bool()> ready = {};
  // A planted runner's decision to construct after the ready phase (model::RunnerDecision). Unset:
  // the seed's runner, which constructs only when every rank was ready.
  model::RunnerDecision constructs = {};
  // The device runtime: under kGpu the data plane runs as GPU kernels (dataplane/device.h).
  Runtime runtime = Runtime::kMock;
  // Told the number of the construction (buffer of `buffers:`, from 0) whose calls come next:
  // before it is constructed, closed and destroyed (faults::RankFaults::setConstruction: a fault
  // aimed at one buffer fires only there). Unset: nobody listens.
  std::function<void(std::size_t)> construction = {};
};

// What the runner raises instead of constructing: this rank's setup failed (thisRank(), message
// kNotReadyThisRankMessage), or the runner's agreement said another rank's did
// (kNotReadyAnotherRankMessage).
class NotReadyError : public std::runtime_error {
 public:
  explicit NotReadyError(bool thisRank);
  bool thisRank() const noexcept { return thisRank_; }

 private:
  bool thisRank_;
};

// Runs `rank` of `scenario`. `atPoint` applies the faults planned at a point outside the seams
// (before the constructor). Then the "ready" phase: the rank asks seams.ready() and, with more
// than one rank and scenario.runner.agreeFirst, calls tpAgree(ready) on seams.runnerGroup; it
// constructs only when every rank was ready (else it raises NotReadyError, or the group's error).
// Without agreeFirst a rank that is not ready raises NotReadyError alone and the others construct.
// Never throws: everything, RankStopped included, ends in the result.
// `core` builds the buffer under test (the production PeerBuffer unless a test swaps it).
model::RankResult runRank(const model::Scenario& scenario, int rank, const RankSeams& seams,
                          model::EventLog& log, const std::function<void(model::Point)>& atPoint,
                          const model::CoreFactory& core = model::productionCore());

// Whether the scenario plans a death, hang or exit in the handshake (then the harness skips its
// barriers). One at `dataplane` comes after them: the rank still takes part in every barrier.
bool plansStoppedRanks(const model::Scenario& scenario);
// Whether it plans one anywhere, the data plane included: a rank that a process launcher stops
// (one shared mpirun: waits for the others before it unwinds; --kill-mode signal: for real).
bool plansStops(const model::Scenario& scenario);

}  // namespace peerconf::harness::launch
