// RankPool: runThreads on kept threads. The run is runThreads's own (runOnThreads, rank_launch.h);
// only how a rank's job reaches a thread differs.
#include "launch/rank_pool.h"

#include <functional>

#include "launch/kept_thread.h"
#include "launch/rank_launch.h"
#include "launch/thread_launcher.h"

namespace peerconf::harness::launch {

using model::RunRecord;
using model::Scenario;

// The pool's workers as a run's RankThreads: rank r on worker r; a worker abandoned past the
// bound is stopped without waiting and a fresh one takes its place for the next run.
class RankPool::Threads : public RankThreads {
 public:
  explicit Threads(std::vector<std::shared_ptr<KeptThread>>& workers) : workers_(workers) {}
  void start(int rank, std::function<void()> job) override {
    workers_[static_cast<std::size_t>(rank)]->submit(std::move(job));
  }
  void finished(int /*rank*/) override {}  // the worker waits for its next job
  void abandon(int rank) override {
    auto& worker = workers_[static_cast<std::size_t>(rank)];
    worker->stop(/*join=*/false);
    worker = KeptThread::start();
  }

 private:
  std::vector<std::shared_ptr<KeptThread>>& workers_;
};

RankPool::RankPool() = default;

RankPool::~RankPool() {
  for (auto& worker : workers_) worker->stop(/*join=*/true);
}

int RankPool::threads() const { return static_cast<int>(workers_.size()); }

RunRecord RankPool::run(const Scenario& scenario, std::uint64_t seed,
                        const LaunchOptions& options) {
  while (static_cast<int>(workers_.size()) < scenario.ranks) {
    workers_.push_back(KeptThread::start());
  }
  Threads threads(workers_);
  return runOnThreads(scenario, seed, options, threads);
}

}  // namespace peerconf::harness::launch
