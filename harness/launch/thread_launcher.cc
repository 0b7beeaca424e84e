// Thread launcher: every rank a thread of this process over the mocked HIP runtime. Two thread
// worlds: one for the core under test, one for the harness's own barriers, so a rank that left
// the core's collectives early can never be matched with another rank's core call. The run itself
// (runOnThreads) is shared with the rank pool; runThreads starts and joins a thread a rank.
#include "launch/thread_launcher.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "faults/fault_plan.h"
#include "faults/rank_control.h"
#include "launch/kept_thread.h"
#include "launch/launcher.h"
#include "launch/rank_launch.h"
#include "launch/rank_runner.h"
#include "launch/shared_gpu_memory.h"
#include "mock_hip/control.h"
#include "sim_clock.h"
#include "thread/thread_group.h"

namespace peerconf::harness::launch {

using model::EventLog;
using model::faultPlan;
using model::FaultSite;
using model::plannedBound;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::toString;

namespace {

// What the launcher and every rank job share; held by shared_ptr so a job the launcher had to
// give up on (reported missing) can still finish safely later, on its own copies.
std::shared_ptr<Clock> runClock(const Scenario& s, std::uint64_t seed, const LaunchOptions& o) {
  if (o.clock == ClockMode::kSim) {
    auto sim = std::make_shared<SimClock>(s.ranks, seed);
    sim->setChooser(o.chooser);
    return sim;
  }
  return std::shared_ptr<Clock>(&realClock(), [](Clock*) {});
}

struct RunState {
  RunState(const Scenario& s, std::uint64_t seed, const LaunchOptions& o)
      : scenario(s),
        options(o),
        plan(faultPlan(s, seed)),
        clock(runClock(s, seed, o)),
        coreWorld(std::make_shared<thread::ThreadWorld>(s.ranks, s.deadline, clock)),
        harnessWorld(std::make_shared<thread::ThreadWorld>(s.ranks, plannedBound(s), clock)) {}

  const Scenario scenario;
  const LaunchOptions options;
  const faults::FaultPlan plan;
  // The run's clock: every rank's waits (groups, delays, hangs, the data plane) go through it.
  std::shared_ptr<Clock> clock;
  std::shared_ptr<thread::ThreadWorld> coreWorld;
  std::shared_ptr<thread::ThreadWorld> harnessWorld;

  std::mutex mutex;
  std::condition_variable cv;
  int finished = 0;  // ranks whose job returned
  int hanging = 0;   // ranks blocked in a planted hang
  bool released = false;
  std::vector<std::optional<RankResult>> results;
  std::set<FaultSite> fired;  // over every rank
  // By rank: whether its mocked GPU is shared with other ranks (--ranks-per-gpu), so that the
  // launcher judges the GPU's free memory once every rank has ended (SharedGpuMemory).
  std::vector<bool> gpuShared;
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

  // A thread cannot end its process: it stops as a death does and is reported exited.
  [[noreturn]] void exit(int /*rank*/, Point at, int code) override {
    waitForRelease();
    throw RankStopped{RankStatus::kExited, at, code};
  }

 private:
  void waitForRelease() {
    std::unique_lock lock(state_->mutex);
    ++state_->hanging;
    state_->cv.notify_all();
    state_->clock->waitUntil(lock, state_->cv, Clock::TimePoint::max(),
                             [&] { return state_->released; });
  }

  std::shared_ptr<RunState> state_;
};

// One rank's job: the shared body with thread groups of the run's two worlds.
void runRankJob(const std::shared_ptr<RunState>& state, int rank, Clock::TimePoint start) {
  // Under simulated time the rank runs only in its turns, from here to its detach.
  auto* sim = dynamic_cast<SimClock*>(state->clock.get());
  if (sim != nullptr) sim->attach(rank);
  struct Detach {
    SimClock* sim;
    ~Detach() {
      if (sim != nullptr) sim->detach();
    }
  } detach{sim};
  ThreadClockScope clockScope(*state->clock);
  EventLog log(rank, start, *state->clock);
  if (state->options.eventSink) log.setSink(state->options.eventSink);
  ThreadRankControl control(state);
  std::optional<thread::ThreadGroup> coreGroup;
  std::optional<thread::ThreadGroup> harnessGroup;
  RankLaunch launch;
  launch.scenario = &state->scenario;
  launch.plan = &state->plan;
  launch.rank = rank;
  launch.device = rank;
  launch.gpuJudgedByLauncher = state->gpuShared[static_cast<std::size_t>(rank)];
  launch.options = &state->options;
  launch.control = &control;
  launch.groups = [&] {
    coreGroup.emplace(state->coreWorld, rank);
    harnessGroup.emplace(state->harnessWorld, rank);
    return RankGroups{&*coreGroup, &*harnessGroup};
  };
  RankOutcome outcome = launchRank(launch, log);
  std::lock_guard lock(state->mutex);
  state->fired.insert(outcome.fired.begin(), outcome.fired.end());
  state->results[static_cast<std::size_t>(rank)] = std::move(outcome.result);
  ++state->finished;
  // Only the launcher waits for this (hung ranks wait for `released`): woken once, by the last.
  if (state->finished + state->hanging >= state->scenario.ranks) state->cv.notify_all();
}

// A thread a rank, started for this run and joined (or detached past the bound) after it.
class FreshThreads : public RankThreads {
 public:
  explicit FreshThreads(int n) : threads_(static_cast<std::size_t>(n)) {}
  void start(int rank, std::function<void()> job) override {
    threads_[static_cast<std::size_t>(rank)] = std::thread(std::move(job));
  }
  void finished(int rank) override { threads_[static_cast<std::size_t>(rank)].join(); }
  void abandon(int rank) override { threads_[static_cast<std::size_t>(rank)].detach(); }

 private:
  std::vector<std::thread> threads_;
};

// Every rank a fiber of one OS thread (SimClock::runFibers), which carries each rank's thread
// state (the mocked runtime's, the thread's clock) across switches. The thread is a kept host
// (FiberHosts: no thread starts a run), given back once every rank has finished, or abandoned to
// its stuck rank when one is past the bound (the launcher's real-time watchdog: a rank that never
// reaches a clock point holds its host for ever).
class FiberRanks : public RankThreads {
 public:
  FiberRanks(std::shared_ptr<Clock> clock, int n)
      : clock_(std::move(clock)), n_(n), jobs_(static_cast<std::size_t>(n)) {}
  ~FiberRanks() override {
    if (host_) FiberHosts::giveBack(std::move(host_));  // never reached with a job under way
  }
  void start(int rank, std::function<void()> job) override {
    jobs_[static_cast<std::size_t>(rank)] = std::move(job);
    if (++started_ < n_) return;
    host_ = FiberHosts::take();
    // The job owns what it uses: a host left running past the bound outlives this object.
    host_->submit([clock = clock_, jobs = std::move(jobs_), n = n_]() mutable {
      struct Carried {
        mock_hip::ThreadState hip;
        Clock* clock = nullptr;
      };
      std::vector<Carried> carried(static_cast<std::size_t>(n));
      auto carry = [&carried](int rank) {
        Carried& c = carried[static_cast<std::size_t>(rank)];
        mock_hip::exchangeThreadState(c.hip);
        c.clock = exchangeThreadClock(c.clock);
      };
      static_cast<SimClock&>(*clock).runFibers(std::move(jobs), carry);
    });
  }
  void finished(int /*rank*/) override { end(); }
  void abandon(int /*rank*/) override {
    abandoned_ = true;
    end();
  }

 private:
  void end() {
    if (++ended_ < n_) return;
    if (abandoned_) {
      host_->stop(/*join=*/false);
      host_.reset();
    } else {
      host_->waitIdle();  // runFibers has returned: the host may take the next run
      FiberHosts::giveBack(std::move(host_));
    }
  }

  std::shared_ptr<Clock> clock_;
  const int n_;
  std::vector<std::function<void()>> jobs_;
  int started_ = 0;
  int ended_ = 0;
  bool abandoned_ = false;
  std::shared_ptr<KeptThread> host_;
};

}  // namespace

std::string toString(Runtime runtime) { return runtime == Runtime::kMock ? "mock" : "gpu"; }

std::string toString(ClockMode mode) { return mode == ClockMode::kSim ? "sim" : "real"; }

std::string toString(Engine engine) { return engine == Engine::kFibers ? "fibers" : "threads"; }

std::string toString(MockMemory memory) {
  return memory == MockMemory::kArena ? "arena" : "segments";
}

MockMemory mockMemoryFromString(const std::string& name) {
  if (name == "arena") return MockMemory::kArena;
  if (name == "segments") return MockMemory::kSegments;
  throw std::invalid_argument("unknown mock memory '" + name + "' (want arena or segments)");
}

namespace {
std::atomic<MockMemory> defaultMemory{MockMemory::kArena};
}  // namespace

void setDefaultMockMemory(MockMemory memory) { defaultMemory.store(memory); }

MockMemory defaultMockMemory() { return defaultMemory.load(); }

Engine engineFromString(const std::string& name) {
  if (name == "fibers") return Engine::kFibers;
  if (name == "threads") return Engine::kThreads;
  throw std::invalid_argument("unknown engine '" + name + "' (want fibers or threads)");
}

ClockMode clockModeFromString(const std::string& name) {
  if (name == "real") return ClockMode::kReal;
  if (name == "sim") return ClockMode::kSim;
  throw std::invalid_argument("unknown clock '" + name + "' (want real or sim)");
}

namespace {
thread_local RunPhases tPhases;
}  // namespace

RunPhases lastRunPhases() { return tPhases; }

void setLastRunPhases(const RunPhases& phases) { tPhases = phases; }

// Over 80 lines: the thread launcher's run, engine by engine; to be split by engine.
// NOLINTNEXTLINE(readability-function-size): to be split
RunRecord runOnThreads(const Scenario& scenario, std::uint64_t seed, const LaunchOptions& options,
                       RankThreads& rankThreads) {
  const auto entered = std::chrono::steady_clock::now();
  const int n = scenario.ranks;
  RunRecord record = newRecord(scenario, seed, "threads", options.runtime);
  record.clock = toString(options.clock);
  auto state = std::make_shared<RunState>(scenario, seed, options);
  state->results.resize(static_cast<std::size_t>(n));
  const Clock::TimePoint start = state->clock->now();  // the events' zero, on the run's clock
  const auto wallStart = std::chrono::steady_clock::now();
  // The ledgers cleared; pointers and allocation numbers drawn from the seed (the same every time).
  // Simulated time on the mock: device memory from the in-process arena, unless told otherwise.
  const bool arena = options.runtime == Runtime::kMock && options.clock == ClockMode::kSim &&
                     options.mockMemory == MockMemory::kArena;
  mock_hip::beginRun(seed,
                     arena ? mock_hip::DeviceMemory::kArena : mock_hip::DeviceMemory::kSegments);
  // Ranks sharing mocked GPUs: placed, and each shared GPU read, before any rank starts.
  std::optional<SharedGpuMemory> sharedGpus;
  state->gpuShared.assign(static_cast<std::size_t>(n), false);
  // The file's ranks_per_gpu, else the command line's.
  const int ranksPerGpu = scenario.ranksPerGpu > 0 ? scenario.ranksPerGpu : options.ranksPerGpu;
  if (options.runtime == Runtime::kMock && ranksPerGpu > 0) {
    // device_memory set before the shared GPUs' free memory is read (each rank sets it again).
    for (const auto& [rank, bytes] : scenario.deviceMemory) mock_hip::setDeviceMemory(rank, bytes);
    sharedGpus.emplace(n, ranksPerGpu, scenario.nodes);
    for (int rank = 0; rank < n; ++rank) {
      state->gpuShared[static_cast<std::size_t>(rank)] = sharedGpus->shared(rank);
    }
  }
  // Simulated time on the fiber engine: the ranks are fibers of one thread, not the given threads.
  std::optional<FiberRanks> fibers;
  if (options.clock == ClockMode::kSim && options.engine == Engine::kFibers)
    fibers.emplace(state->clock, n);
  RankThreads& threads = fibers ? static_cast<RankThreads&>(*fibers) : rankThreads;
  for (int rank = 0; rank < n; ++rank) {
    threads.start(rank, [state, rank, start] { runRankJob(state, rank, start); });
  }
  const auto ranksStarted = std::chrono::steady_clock::now();

  // Wait until every rank has finished or hangs, or the run's bound has passed (in real time
  // under either clock: a simulated run that deadlocks is still given up on).
  // Simulated time runs long data planes slower than the machine does (one rank at a time): its
  // safety net is several bounds (wallBounds).
  const auto bound =
      wallStart + plannedBound(scenario) * wallBounds(options.clock) + std::chrono::seconds(5);
  {
    std::unique_lock lock(state->mutex);
    state->cv.wait_until(lock, bound, [&] { return state->finished + state->hanging >= n; });
    state->released = true;  // hung ranks may now end
    state->clock->notifyAll(state->cv);
    // Hung ranks unwind quickly once released; give them until the same bound.
    state->cv.wait_until(lock, bound, [&] { return state->finished >= n; });
  }
  const auto ranksDone = std::chrono::steady_clock::now();
  record.wallNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(ranksDone - wallStart).count();
  std::vector<bool> joined(static_cast<std::size_t>(n), false);
  {
    std::lock_guard lock(state->mutex);
    for (int rank = 0; rank < n; ++rank) {
      joined[static_cast<std::size_t>(rank)] =
          state->results[static_cast<std::size_t>(rank)].has_value();
    }
  }
  for (int rank = 0; rank < n; ++rank) {
    if (joined[static_cast<std::size_t>(rank)]) {
      threads.finished(rank);
    } else {
      threads.abandon(rank);  // still running past the bound: reported missing, never waited on
      record.harnessErrors.push_back("rank " + std::to_string(rank) +
                                     " did not finish within the run's bound; abandoned");
    }
  }
  {
    std::lock_guard lock(state->mutex);
    for (int rank = 0; rank < n; ++rank) {
      const auto& slot = state->results[static_cast<std::size_t>(rank)];
      record.ranks.push_back(slot ? *slot : missingRank(rank));
    }
    for (const auto site : state->fired) record.firedSites.push_back(toString(site));
  }
  // Release whatever a stopped or leaking rank still holds, so the next run starts clean; a shared
  // GPU is judged first, now that none of its ranks runs. With a rank abandoned, nothing is quiet.
  if (options.runtime == Runtime::kMock &&
      std::all_of(joined.begin(), joined.end(), [](bool j) { return j; })) {
    if (sharedGpus) sharedGpus->check(record.ranks);
    mock_hip::resetAll();
  }
  auto ns = [](auto d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); };
  tPhases = {ns(ranksStarted - entered), ns(ranksDone - ranksStarted),
             ns(std::chrono::steady_clock::now() - ranksDone)};
  return record;
}

RunRecord runThreads(const Scenario& scenario, std::uint64_t seed, const LaunchOptions& options) {
  FreshThreads threads(scenario.ranks);
  return runOnThreads(scenario, seed, options, threads);
}

}  // namespace peerconf::harness::launch
