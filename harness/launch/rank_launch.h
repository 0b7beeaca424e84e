// One rank's launch, the same under every launcher. Two halves:
//
// - The body (launchRank): what a rank does in one run of a scenario, from its real backend to its
//   settled device. It builds the decorator stack over the rank's seams (SeamStack, below: the only
//   place that stack is built), runs the rank (rank_runner.h), takes its ledger, releases what
//   injected close/free failures left held, checks its device (rank_settle.h), and hands back the
//   RankResult with its events and the fault sites that fired.
//
// - The executor: how ranks are started and gathered. It owns what differs between launchers and
//   hands it to the body through RankLaunch: the rank's groups (thread worlds, MPI communicators),
//   its RankControl (how a planted death or hang stops it), the event log (and where it streams),
//   and two hooks at the only points where launchers differ inside a rank (after the core's run,
//   before the device check). The executors are:
//     runThreads (thread_launcher.cc)   a thread a rank, started and joined for each run;
//     RankPool (rank_pool.cc)           the pool's kept threads, one a rank, reused between runs;
//     MpiSession (mpi_launcher.cc)      this process, one rank of an MPI job (packed in rounds);
//     the supervisor (supervisor.h)     the MPI session with real signals: its ranks run the same
//                                       body inside mpirun and stream to its run directory.
//   The thread executors (thread_launcher.h) share one run (runOnThreads: worlds, bound, release of
//   stopped ranks, the record); they differ only in RankThreads, how a job is put on a thread and
//   what happens to a thread abandoned past the bound.
//
// The wire format of a rank's outcome between processes (rankPayload / readRankPayload) lives here
// too: the MPI session gathers it to world rank 0 and the supervisor reads it from the run
// directory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "faults/fault_plan.h"
#include "faults/faulty_backend.h"
#include "faults/faulty_group.h"
#include "faults/rank_control.h"
#include "group.h"
#include "ipc_backend.h"
#include "launch/launcher.h"
#include "launch/recording.h"
#include "model/event_log.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

// ---- The decorator stack ------------------------------------------------------------------------

// The core's backend: RecordingBackend -> FaultyBackend -> the real backend. The fault decorator
// works through the runtime's hooks under the mocked runtime (the real code path meets the error)
// and at the seam on GPUs (FaultyBackend::Mode). `inner`, `faults`, `control` and `log` must
// outlive it.
class DecoratedBackend {
 public:
  DecoratedBackend(IpcBackend& inner, faults::RankFaults& faults, faults::RankControl& control,
                   Runtime runtime, model::EventLog& log);
  IpcBackend& top() noexcept { return recorded_; }
  // What injected close/free failures left held (FaultyBackend::leftovers()).
  const std::vector<faults::FaultyBackend::Leftover>& leftovers() const noexcept {
    return faulty_.leftovers();
  }
  // Mappings that did not reach the buffer their peer exported (FaultyBackend::mappingFindings()).
  const std::vector<std::string>& mappingFindings() const noexcept {
    return faulty_.mappingFindings();
  }

 private:
  faults::FaultyBackend faulty_;
  RecordingBackend recorded_;
};

// The core's group: RecordingGroup -> FaultyGroup -> the launcher's group for the core.
class DecoratedGroup {
 public:
  DecoratedGroup(Group& inner, faults::RankFaults& faults, faults::RankControl& control,
                 model::EventLog& log);
  Group& top() noexcept { return recorded_; }

 private:
  faults::FaultyGroup faulty_;
  RecordingGroup recorded_;
};

// ---- The body -----------------------------------------------------------------------------------

// A rank's groups, owned by the executor (they outlive launchRank: the MPI session frees or keeps
// their communicators afterwards).
struct RankGroups {
  Group* core = nullptr;     // what the core's decorated group wraps; also the runner's agreement
  Group* harness = nullptr;  // the harness's own barriers, separate from the core's
};

struct RankLaunch {
  const model::Scenario* scenario = nullptr;
  const faults::FaultPlan* plan = nullptr;
  int rank = 0;  // in the scenario
  // Of the real backend. The mock: the scenario rank (ledgers, fault hooks and "own handle"
  // refusals key on it), on a GPU shared with others under --ranks-per-gpu (mock_hip::placeOnGpu);
  // GPUs: a GPU of the node.
  int device = 0;
  // Runtime, core under test and core registry (coreFor: the scenario's `core:`).
  const LaunchOptions* options = nullptr;
  faults::RankControl* control = nullptr;
  // Called first, inside the guarded setup (an exception makes the rank missing, as any setup
  // failure): the rank's groups. MPI: collective, so every member calls it before anything can
  // fail.
  std::function<RankGroups()> groups;
  // Right after the rank's run, before its fired sites and leftovers are read (MPI: a rank that
  // did not stop arrives where the stopped ones wait). Unset: nothing.
  std::function<void()> afterRun;
  // Optional: called once the rank's device baseline (RankSettle) is taken, before the core runs
  // (MPI, ranks sharing a GPU: a barrier of the group, so that no rank's baseline already holds a
  // peer's buffer on the shared device, which would hide a leak of that size).
  std::function<void()> afterBaseline;
  // After the leftovers were released, before the device check: returns whether the check judges
  // the device's free memory (MPI: every member's release done first). Unset: true.
  std::function<bool(model::RankResult&)> beforeCheck;
  // The launcher judges the free memory of this rank's GPU as a whole, shared with other ranks
  // (threads under the mock with --ranks-per-gpu: SharedGpuMemory): the rank's own device check
  // names what its device holds, without comparing the GPU's free memory mid-run.
  bool gpuJudgedByLauncher = false;
};

struct RankOutcome {
  model::RankResult result;  // with its events (taken from the log) and ledger
  std::set<model::FaultSite> fired;
};

// Runs one rank: groups, fault plan, real backend, settle, decorator stack, runRank, ledger,
// release, device check. Never throws: a setup failure makes the rank missing, with the reason.
RankOutcome launchRank(const RankLaunch& launch, model::EventLog& log);

// A new run's record (scenario, launcher, runtime, seed; no ranks yet).
model::RunRecord newRecord(const model::Scenario& scenario, std::uint64_t seed,
                           std::string launcher, Runtime runtime);
// A rank that never reported.
model::RankResult missingRank(int rank);

// ---- The wire format between processes ----------------------------------------------------------

// A rank's outcome as JSON: RankResult's, plus "fired" (the site names).
nlohmann::json rankPayload(const RankOutcome& outcome);
// Reads rankPayload's JSON text back; adds the fired sites to `fired`. Throws on anything else.
model::RankResult readRankPayload(const std::string& text, std::set<std::string>& fired);

}  // namespace peerconf::harness::launch
