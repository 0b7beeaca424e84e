// Thread launcher: every rank a thread of this process over the mocked HIP runtime. Two thread
// worlds: one for the core under test, one for the harness's own barriers, so a rank that left
// the core's collectives early can never be matched with another rank's core call.
#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "backend_factory.h"
#include "faults/fault_plan.h"
#include "faults/faulty_backend.h"
#include "faults/faulty_group.h"
#include "faults/rank_control.h"
#include "launch/launcher.h"
#include "launch/mock_ledger.h"
#include "launch/rank_runner.h"
#include "launch/rank_settle.h"
#include "launch/recording.h"
#include "mock_hip/control.h"
#include "scenario/rules.h"
#include "thread/thread_group.h"

namespace peerconf::harness {

namespace {

// What the launcher and every rank thread share; held by shared_ptr so a thread the launcher
// had to give up on (reported missing) can still finish safely later.
struct RunState {
  std::mutex mutex;
  std::condition_variable cv;
  int finished = 0;  // ranks whose runRank returned
  int hanging = 0;   // ranks blocked in a planted hang
  bool released = false;
  std::vector<std::optional<RankResult>> results;
  std::set<FaultSite> fired;  // over every rank
};

// Deaths and hangs block the rank's thread until every other rank is done, then end it. A death
// must not unwind at once: on its way out the exception would run the core's cleanup (its
// `catch (...) { release(); throw; }`) and free memory that live peers may still be opening —
// a killed process frees nothing, and the run's events would depend on timing.
class ThreadRankControl : public faults::RankControl {
 public:
  explicit ThreadRankControl(std::shared_ptr<RunState> state) : state_(std::move(state)) {}

  [[noreturn]] void die(int /*rank*/, Point at) override {
    waitForRelease();
    throw RankStopped{RankStatus::kDead, at};
  }

  void hang(int /*rank*/, Point at) override {
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

std::string toString(Runtime runtime) { return runtime == Runtime::kMock ? "mock" : "gpu"; }

std::chrono::milliseconds runBound(const Scenario& scenario) {
  // One bound for the launchers and checker C8.
  return std::chrono::ceil<std::chrono::milliseconds>(scenario_rules::plannedBound(scenario));
}

RunRecord runThreads(const Scenario& scenario, std::uint64_t seed, const LaunchOptions& options) {
  const int n = scenario.ranks;
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
  const auto start = EventLog::Clock::now();
  mock_hip::clearLedgers();

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([=] {
      EventLog log(rank, start);
      if (options.eventSink) log.setSink(options.eventSink);
      ThreadRankControl control(state);
      RankResult result;
      result.rank = rank;
      std::unique_ptr<IpcBackend> real;
      std::optional<RankSettle> settle;
      std::vector<faults::FaultyBackend::Leftover> leftovers;
      try {
        auto planned = plan->forRank(rank, log);
        auto& faults = *planned;
        real = makeIpcBackend(options.runtime, rank, rank);
        settle.emplace(options.runtime, rank, *real, scenario.name);
        faults::FaultyBackend faulty(*real, faults, control,
                                     options.runtime == Runtime::kMock
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
        if (options.runtime == Runtime::kMock) {
          seams.ledgerLength = [rank] { return mockLedgerLength(rank); };
        }
        result = runRank(
            scenario, rank, seams, log, [&](Point point) { faults.atPoint(point, control); },
            coreFor(scenario, options.cores, options.core));
        leftovers = faulty.leftovers();
        const auto fired = faults.fired();
        std::lock_guard lock(state->mutex);
        state->fired.insert(fired.begin(), fired.end());
      } catch (const std::exception& e) {
        // Setting up the rank failed: a problem of the harness, not of the core.
        result.status = RankStatus::kMissing;
        result.message = std::string("harness could not run this rank: ") + e.what();
      }
      if (options.runtime == Runtime::kMock) {
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

  // Wait until every rank has finished or hangs, or the run's bound has passed.
  const auto bound = start + runBound(scenario) + std::chrono::seconds(5);
  {
    std::unique_lock lock(state->mutex);
    state->cv.wait_until(lock, bound, [&] { return state->finished + state->hanging >= n; });
    state->released = true;  // hung ranks may now end
    state->cv.notify_all();
    // Hung ranks unwind quickly once released; give them until the same bound.
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
    auto& t = threads[static_cast<std::size_t>(rank)];
    if (joined[static_cast<std::size_t>(rank)]) {
      t.join();
    } else {
      t.detach();  // still running past the bound: reported missing, never waited on
      record.harnessErrors.push_back("rank " + std::to_string(rank) +
                                     " did not finish within the run's bound; abandoned");
    }
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
  }
  {
    std::lock_guard lock(state->mutex);
    for (const auto site : state->fired) record.firedSites.push_back(toString(site));
  }
  // Release whatever a stopped or leaking rank still holds, so the next run starts clean.
  if (options.runtime == Runtime::kMock &&
      std::all_of(joined.begin(), joined.end(), [](bool j) { return j; })) {
    mock_hip::resetAll();
  }
  return record;
}

}  // namespace peerconf::harness
