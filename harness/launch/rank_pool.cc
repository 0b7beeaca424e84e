// RankPool: runThreads on kept threads. The body of a run follows harness/thread_launcher.cc step
// for step; tests/explore/determinism_test.cc holds the two to the same event logs and verdicts.
#include "launch/rank_pool.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "backend_factory.h"
#include "faults/fault_plan.h"
#include "faults/faulty_backend.h"
#include "faults/faulty_group.h"
#include "faults/rank_control.h"
#include "launch/mock_ledger.h"
#include "launch/rank_runner.h"
#include "launch/rank_settle.h"
#include "launch/recording.h"
#include "mock_hip/control.h"
#include "thread/thread_group.h"

namespace peerconf::harness::explore {

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

namespace {

// As in thread_launcher.cc: what the launcher and every rank of one run share.
struct RunState {
  std::mutex mutex;
  std::condition_variable cv;
  int finished = 0;
  int hanging = 0;
  bool released = false;
  std::vector<std::optional<RankResult>> results;
  std::set<FaultSite> fired;
};

// As in thread_launcher.cc: deaths and hangs stop the rank until every other rank is done.
class ThreadRankControl : public faults::RankControl {
 public:
  explicit ThreadRankControl(std::shared_ptr<RunState> state) : state_(std::move(state)) {}

  [[noreturn]] void die(int /*rank*/, Point at) override {
    waitForRelease();
    throw RankStopped{RankStatus::kDead, at};
  }

  [[noreturn]] void hang(int /*rank*/, Point at) override {
    waitForRelease();
    throw RankStopped{RankStatus::kHung, at};
  }

 private:
  void waitForRelease() {
    std::unique_lock lock(state_->mutex);
    ++state_->hanging;
    state_->cv.notify_all();
    state_->cv.wait(lock, [&] { return state_->released; });
  }

  std::shared_ptr<RunState> state_;
};

}  // namespace

RankPool::RankPool() = default;

RankPool::~RankPool() {
  for (auto& worker : workers_) worker->stop(/*join=*/true);
}

int RankPool::threads() const { return static_cast<int>(workers_.size()); }

RunRecord RankPool::run(const Scenario& scenario, std::uint64_t seed,
                        const LaunchOptions& options) {
  const int n = scenario.ranks;
  while (static_cast<int>(workers_.size()) < n) {
    workers_.push_back(std::make_shared<Worker>());
    workers_.back()->start();
  }

  RunRecord record;
  record.scenario = scenario;
  record.launcher = "threads";
  record.runtime = toString(options.runtime);
  record.seed = seed;

  auto state = std::make_shared<RunState>();
  state->results.resize(static_cast<std::size_t>(n));
  auto coreWorld = std::make_shared<thread::ThreadWorld>(n, scenario.deadline);
  auto harnessWorld = std::make_shared<thread::ThreadWorld>(n, runBound(scenario));
  auto plan = std::make_shared<faults::FaultPlan>(faultPlan(scenario, seed));
  // The rank jobs may outlive this call (a rank abandoned past the bound): they share copies.
  auto shared = std::make_shared<const Scenario>(scenario);
  auto core = std::make_shared<const CoreFactory>(options.core);
  const Runtime runtime = options.runtime;
  const auto sink = options.eventSink;
  const auto start = EventLog::Clock::now();
  mock_hip::clearLedgers();

  for (int rank = 0; rank < n; ++rank) {
    workers_[static_cast<std::size_t>(rank)]->submit([=] {
      EventLog log(rank, start);
      if (sink) log.setSink(sink);
      ThreadRankControl control(state);
      RankResult result;
      result.rank = rank;
      std::unique_ptr<IpcBackend> real;
      std::optional<RankSettle> settle;
      std::vector<faults::FaultyBackend::Leftover> leftovers;
      try {
        auto planned = plan->forRank(rank, log);
        auto& faults = *planned;
        real = makeIpcBackend(runtime, rank, rank);
        settle.emplace(runtime, rank, *real, shared->name);
        faults::FaultyBackend faulty(*real, faults, control,
                                     runtime == Runtime::kMock
                                         ? faults::FaultyBackend::Mode::kRuntime
                                         : faults::FaultyBackend::Mode::kSeam);
        RecordingBackend recorded(faulty, log);
        thread::ThreadGroup coreGroup(coreWorld, rank);
        faults::FaultyGroup faultyGroup(coreGroup, faults, control);
        RecordingGroup recordedGroup(faultyGroup, log);
        thread::ThreadGroup harnessGroup(harnessWorld, rank);
        RankSeams seams{recorded, recordedGroup, *real, &harnessGroup};
        seams.runnerGroup = &coreGroup;
        seams.ready = [&faults] { return !faults.notReady(); };
        if (runtime == Runtime::kMock)
          seams.ledgerLength = [rank] { return mockLedgerLength(rank); };
        result = runRank(
            *shared, rank, seams, log, [&](Point point) { faults.atPoint(point, control); }, *core);
        leftovers = faulty.leftovers();
        const auto fired = faults.fired();
        std::lock_guard lock(state->mutex);
        state->fired.insert(fired.begin(), fired.end());
      } catch (const std::exception& e) {
        result.status = RankStatus::kMissing;
        result.message = std::string("harness could not run this rank: ") + e.what();
      }
      if (runtime == Runtime::kMock) {
        result.ledger = copyMockLedger(rank);
        result.ledgerAvailable = true;
      }
      // After the ledger: the harness's release of injected-failure leftovers, then the device.
      if (settle) {
        settle->release(*real, leftovers, result);
        settle->check(result);
      }
      result.events = log.take();
      std::lock_guard lock(state->mutex);
      state->results[static_cast<std::size_t>(rank)] = std::move(result);
      ++state->finished;
      state->cv.notify_all();
    });
  }

  const auto bound = start + runBound(scenario) + std::chrono::seconds(5);
  {
    std::unique_lock lock(state->mutex);
    state->cv.wait_until(lock, bound, [&] { return state->finished + state->hanging >= n; });
    state->released = true;
    state->cv.notify_all();
    state->cv.wait_until(lock, bound, [&] { return state->finished >= n; });
  }
  record.wallNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(EventLog::Clock::now() - start).count();
  std::vector<bool> joined(static_cast<std::size_t>(n), false);
  {
    std::lock_guard lock(state->mutex);
    for (int rank = 0; rank < n; ++rank) {
      joined[static_cast<std::size_t>(rank)] =
          state->results[static_cast<std::size_t>(rank)].has_value();
    }
  }
  for (int rank = 0; rank < n; ++rank) {
    if (joined[static_cast<std::size_t>(rank)]) continue;
    // Still running past the bound: reported missing, never waited on; a fresh thread takes its
    // place for the next run.
    auto& worker = workers_[static_cast<std::size_t>(rank)];
    worker->stop(/*join=*/false);
    worker = std::make_shared<Worker>();
    worker->start();
    record.harnessErrors.push_back("rank " + std::to_string(rank) +
                                   " did not finish within the run's bound; abandoned");
  }
  {
    std::lock_guard lock(state->mutex);
    for (int rank = 0; rank < n; ++rank) {
      auto& slot = state->results[static_cast<std::size_t>(rank)];
      if (slot) {
        record.ranks.push_back(*slot);
      } else {
        RankResult missing;
        missing.rank = rank;
        missing.status = RankStatus::kMissing;
        record.ranks.push_back(missing);
      }
    }
    for (const auto site : state->fired) record.firedSites.push_back(toString(site));
  }
  if (runtime == Runtime::kMock &&
      std::all_of(joined.begin(), joined.end(), [](bool j) { return j; })) {
    mock_hip::resetAll();
  }
  return record;
}

}  // namespace peerconf::harness::explore
