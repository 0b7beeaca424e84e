// The thread launcher: every rank of a scenario a thread of this process, on real or simulated
// time, and the one run its executors (a thread a rank, or the rank pool's kept threads) share.
#pragma once

#include <cstdint>
#include <functional>

#include "launch/launcher.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

// Threads: ranks are threads of this process over the mocked HIP runtime. A rank that dies or
// hangs does not take the process down; survivors are bounded by their group deadlines, and a
// rank that never finishes is reported missing once the run's bound has passed.
model::RunRecord runThreads(const model::Scenario& scenario, std::uint64_t seed,
                            const LaunchOptions& options);

// Where the wall time of this thread's last run went (the bench's breakdown, explore
// --breakdown): until every rank was started (runOnThreads: the run's state, the mocked runtime's
// beginRun; in a child, the request's decoding too), the ranks, and the record (made, the mocked
// runtime reset; in a child, its encoding, the way back and its decoding).
struct RunPhases {
  std::int64_t setupNs = 0;
  std::int64_t runNs = 0;
  std::int64_t recordNs = 0;
};
RunPhases lastRunPhases();
void setLastRunPhases(const RunPhases& phases);

// How a thread run's rank jobs are put on threads (rank r always on its own thread).
class RankThreads {
 public:
  virtual ~RankThreads() = default;
  // Starts `job` for `rank` on its thread.
  virtual void start(int rank, std::function<void()> job) = 0;
  // `rank`'s job has returned: its thread may be joined.
  virtual void finished(int rank) = 0;
  // `rank`'s job is still running past the run's bound: never waited on (reported missing).
  virtual void abandon(int rank) = 0;
};

// One run of `scenario` with every rank a job on `threads`: two thread worlds (the core's, the
// harness's), deaths and hangs held until every other rank is done, the run's bound, the record,
// and the mocked runtime reset once every rank returned. A job may outlive the call (abandoned):
// it holds its own copies of everything it uses.
model::RunRecord runOnThreads(const model::Scenario& scenario, std::uint64_t seed,
                              const LaunchOptions& options, RankThreads& threads);

}  // namespace peerconf::harness::launch
