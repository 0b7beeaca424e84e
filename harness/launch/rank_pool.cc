// RankPool: runThreads on kept threads. The run is runThreads's own (runOnThreads, rank_launch.h);
// only how a rank's job reaches a thread differs.
#include "launch/rank_pool.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "launch/rank_launch.h"
#include "launch/thread_launcher.h"

namespace peerconf::harness::launch {

using model::RunRecord;
using model::Scenario;

// One kept thread: runs the jobs it is given, one at a time, until it is stopped.
class RankPool::Worker : public std::enable_shared_from_this<RankPool::Worker> {
 public:
  void start() {
    thread_ = std::thread([self = shared_from_this()] { self->loop(); });
  }

  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      job_ = std::move(job);
    }
    cv_.notify_one();
  }

  // Ends the thread after its current job; joins it when `join`, else lets it finish on its own
  // (it holds this Worker alive through its own shared_ptr).
  void stop(bool join) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (join) {
      thread_.join();
    } else {
      thread_.detach();
    }
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return job_ != nullptr || stopping_; });
      if (!job_) return;
      std::function<void()> job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool stopping_ = false;
};

// The pool's workers as a run's RankThreads: rank r on worker r; a worker abandoned past the
// bound is stopped without waiting and a fresh one takes its place for the next run.
class RankPool::Threads : public RankThreads {
 public:
  explicit Threads(std::vector<std::shared_ptr<Worker>>& workers) : workers_(workers) {}
  void start(int rank, std::function<void()> job) override {
    workers_[static_cast<std::size_t>(rank)]->submit(std::move(job));
  }
  void finished(int /*rank*/) override {}  // the worker waits for its next job
  void abandon(int rank) override {
    auto& worker = workers_[static_cast<std::size_t>(rank)];
    worker->stop(/*join=*/false);
    worker = std::make_shared<Worker>();
    worker->start();
  }

 private:
  std::vector<std::shared_ptr<Worker>>& workers_;
};

RankPool::RankPool() = default;

RankPool::~RankPool() {
  for (auto& worker : workers_) worker->stop(/*join=*/true);
}

int RankPool::threads() const { return static_cast<int>(workers_.size()); }

RunRecord RankPool::run(const Scenario& scenario, std::uint64_t seed,
                        const LaunchOptions& options) {
  while (static_cast<int>(workers_.size()) < scenario.ranks) {
    workers_.push_back(std::make_shared<Worker>());
    workers_.back()->start();
  }
  Threads threads(workers_);
  return runOnThreads(scenario, seed, options, threads);
}

}  // namespace peerconf::harness::launch
