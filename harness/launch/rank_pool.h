// RankPool: the thread launcher with its rank threads kept between runs. Exploration runs
// thousands of short scenarios one after another; starting and joining a thread per rank per run
// is a large part of a 4-rank run's cost. Each run does exactly what runThreads does (same
// decorators, worlds, rank runner, ledgers, bound, reset), on threads that wait for the next run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "launch/launcher.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

class KeptThread;  // kept_thread.h

class RankPool {
 public:
  RankPool();
  ~RankPool();  // idle threads are joined; threads abandoned past a run's bound are detached
  RankPool(const RankPool&) = delete;
  RankPool& operator=(const RankPool&) = delete;

  // runThreads(scenario, seed, options), on the pool's threads (rank r always on thread r, grown
  // to the largest rank count seen). A rank that has not finished by the run's bound is reported
  // missing and its thread is replaced, as runThreads abandons it. Runs must not overlap.
  model::RunRecord run(const model::Scenario& scenario, std::uint64_t seed,
                       const LaunchOptions& options);

  int threads() const;

 private:
  class Threads;  // the workers as a run's RankThreads (rank_launch.h)
  std::vector<std::shared_ptr<KeptThread>> workers_;
};

}  // namespace peerconf::harness::launch
