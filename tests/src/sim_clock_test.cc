// SimClock (sim_clock.cc): virtual time that jumps only when every participant is blocked, one
// participant at a time, an order drawn from the seed, what it refuses (bad or doubly attached
// participants, waits from threads that are not attached), and a launcher's notify waking a
// clock on which every participant waits for ever.
#include "sim_clock.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "thread_test_support.h"

namespace peerconf {
namespace {

using namespace std::chrono_literals;
using testing::runAttached;

// The two engines of SimClock: a thread a participant (runAttached), or every participant a fiber
// of this thread (runFibers). The scheduler is the same, so every test below holds on both.
enum class Engine { kThreads, kFibers };

template <typename Body>
void runOn(Engine engine, SimClock& clock, int n, Body body) {
  if (engine == Engine::kThreads) {
    runAttached(clock, n, body);
    return;
  }
  std::vector<std::function<void()>> jobs;
  for (int id = 0; id < n; ++id) {
    jobs.emplace_back([&clock, &body, id] {
      clock.attach(id);
      body(id);
      clock.detach();
    });
  }
  std::vector<Clock*> clocks(static_cast<std::size_t>(n), &clock);
  clock.runFibers(std::move(jobs), [&](int id) {
    clocks[static_cast<std::size_t>(id)] =
        exchangeThreadClock(clocks[static_cast<std::size_t>(id)]);
  });
}

class SimClockOnEachEngine : public ::testing::TestWithParam<Engine> {
 protected:
  template <typename Body>
  void run(SimClock& clock, int n, Body body) {
    runOn(GetParam(), clock, n, body);
  }
};

INSTANTIATE_TEST_SUITE_P(Engines, SimClockOnEachEngine,
                         ::testing::Values(Engine::kThreads, Engine::kFibers),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return info.param == Engine::kThreads ? "threads" : "fibers";
                         });

TEST_P(SimClockOnEachEngine, ASleepTakesNoRealTimeAndAdvancesVirtualTime) {
  SimClock clock(1, 7);
  const auto wallStart = std::chrono::steady_clock::now();
  Clock::TimePoint after{};
  run(clock, 1, [&](int) {
    clock.sleepFor(3600s);  // an hour, simulated
    after = clock.now();
  });
  EXPECT_EQ(after - Clock::TimePoint{}, Clock::Duration(3600s));
  EXPECT_LT(std::chrono::steady_clock::now() - wallStart, 10s);
  EXPECT_EQ(clock.stats().jumps, 1u);
}

TEST_P(SimClockOnEachEngine, TimeJumpsOnlyWhenEveryParticipantIsBlocked) {
  // Participant 0 sleeps 5 s; participant 1 makes 100 scheduling points meanwhile: none of them
  // may see time pass, and 0 wakes at exactly 5 s.
  SimClock clock(2, 3);
  std::vector<Clock::TimePoint> seen;
  Clock::TimePoint woke{};
  run(clock, 2, [&](int id) {
    if (id == 0) {
      clock.sleepFor(5s);
      woke = clock.now();
    } else {
      for (int i = 0; i < 100; ++i) {
        clock.point(1);  // hands the turn on at every point
        seen.push_back(clock.now());
      }
    }
  });
  for (const auto t : seen) EXPECT_EQ(t, Clock::TimePoint{});
  EXPECT_EQ(woke - Clock::TimePoint{}, Clock::Duration(5s));
}

TEST_P(SimClockOnEachEngine, AWaitWithADeadlineTimesOutOnVirtualTimeAndANotifyWakesIt) {
  SimClock clock(2, 11);
  std::mutex m;
  std::condition_variable cv;
  bool flag = false;
  bool timedOut = true;
  bool woken = false;
  Clock::TimePoint timeoutAt{};
  run(clock, 2, [&](int id) {
    std::unique_lock lock(m);
    if (id == 0) {
      timedOut = !clock.waitUntil(lock, cv, clock.now() + 2s, [] { return false; });
      timeoutAt = clock.now();
      woken = clock.waitUntil(lock, cv, Clock::TimePoint::max(), [&] { return flag; });
    } else {
      lock.unlock();
      clock.sleepFor(10s);
      lock.lock();
      flag = true;
      clock.notifyAll(cv);
    }
  });
  EXPECT_TRUE(timedOut);
  EXPECT_EQ(timeoutAt - Clock::TimePoint{}, Clock::Duration(2s));
  EXPECT_TRUE(woken);
}

TEST_P(SimClockOnEachEngine, OneParticipantRunsAtATime) {
  SimClock clock(4, 5);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  run(clock, 4, [&](int) {
    for (int i = 0; i < 200; ++i) {
      const int now = ++inside;
      most = std::max(most.load(), now);
      std::this_thread::yield();  // another thread would get in here if it could
      --inside;
      clock.point(2);
    }
  });
  EXPECT_EQ(most.load(), 1);
}

// The order in which 4 participants pass 50 points each: the same seed gives the same order,
// another seed (almost surely) another.
std::string order(std::uint64_t seed, Engine engine) {
  SimClock clock(4, seed);
  std::string out;
  runOn(engine, clock, 4, [&](int id) {
    for (int i = 0; i < 50; ++i) {
      out += static_cast<char>('0' + id);
      clock.point();
    }
  });
  return out;
}

TEST_P(SimClockOnEachEngine, TheSeedDeterminesTheInterleaving) {
  const std::string a = order(42, GetParam());
  EXPECT_EQ(a.size(), 200u);
  EXPECT_EQ(order(42, GetParam()), a);
  EXPECT_EQ(order(42, GetParam()), a);
  EXPECT_NE(order(43, GetParam()), a);
  // Negative control: the order is not simply one participant after another.
  EXPECT_NE(
      a, std::string(50, '0') + std::string(50, '1') + std::string(50, '2') + std::string(50, '3'));
}

// PCT: with no change points (odds of 1 in 2^30), the participant of the highest priority runs
// until it is done, then the next: each participant's points come in one run, in an order of
// priorities drawn from the seed.
std::string orderWithoutChangePoints(std::uint64_t seed, Engine engine) {
  SimClock clock(3, seed, 1u << 30);
  std::string out;
  runOn(engine, clock, 3, [&](int id) {
    for (int i = 0; i < 20; ++i) {
      out += static_cast<char>('0' + id);
      clock.point();
    }
  });
  return out;
}

TEST_P(SimClockOnEachEngine, TheHighestPriorityRunsUntilItBlocksAndTheSeedDrawsThePriorities) {
  std::set<std::string> orders;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::string out = orderWithoutChangePoints(seed, GetParam());
    ASSERT_EQ(out.size(), 60u);
    EXPECT_EQ(out, std::string(20, out[0]) + std::string(20, out[20]) + std::string(20, out[40]))
        << "seed " << seed;
    EXPECT_EQ(orderWithoutChangePoints(seed, GetParam()), out) << "seed " << seed;
    orders.insert(out);
  }
  EXPECT_GT(orders.size(), 2u) << "20 seeds drew the same priorities";
}

// A participant woken (notifyAll) above the holder's priority takes the turn at the holder's next
// point, not when the holder blocks: the first participant to run has the highest priority; it
// waits, the other notifies it after its fifth mark and is preempted at once.
TEST_P(SimClockOnEachEngine, AParticipantWokenAboveTheHoldersPriorityTakesTheTurnAtTheNextPoint) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SimClock clock(2, seed, 1u << 30);
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    int first = -1;
    std::string log;
    run(clock, 2, [&](int id) {
      if (first < 0) {
        first = id;
        std::unique_lock lock(m);
        clock.waitUntil(lock, cv, Clock::TimePoint::max(), [&] { return ready; });
        log += 'H';
        return;
      }
      for (int i = 0; i < 10; ++i) {
        log += 'L';
        if (i == 4) {
          {
            std::lock_guard lock(m);
            ready = true;
          }
          clock.notifyAll(cv);
        }
        clock.point();
      }
    });
    EXPECT_EQ(log, "LLLLLHLLLLL") << "seed " << seed;
  }
}

TEST(SimClock, RefusesNoParticipantsABadIdAndAnIdAttachedTwice) {
  EXPECT_THROW(SimClock(0, 1), std::invalid_argument);
  SimClock clock(1, 1);
  EXPECT_THROW(clock.attach(1), std::invalid_argument);
  EXPECT_THROW(clock.attach(-1), std::invalid_argument);
  EXPECT_FALSE(clock.attached());
  clock.attach(0);  // the only participant: the turn is its own at once
  EXPECT_TRUE(clock.attached());
  EXPECT_THROW(clock.attach(0), std::invalid_argument);
  clock.detach();
  EXPECT_FALSE(clock.attached());
  clock.detach();  // a thread that is not attached: nothing to do
}

TEST(SimClock, AThreadThatIsNotAttachedMayNotWaitAndItsPointsDoNothing) {
  SimClock clock(2, 1);
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock lock(m);
  EXPECT_THROW(clock.sleepUntil(Clock::TimePoint{} + 1s), std::logic_error);
  EXPECT_THROW(clock.waitUntil(lock, cv, Clock::TimePoint{} + 1s, [] { return true; }),
               std::logic_error);
  clock.point(1);  // returns at once: no participant attached, so no turn to wait for
  EXPECT_EQ(clock.now(), Clock::TimePoint{});
  EXPECT_EQ(clock.stats().switches, 0u);
  EXPECT_TRUE(clock.simulated());
}

TEST_P(SimClockOnEachEngine, HandingTheTurnOnCountsSwitches) {
  SimClock clock(2, 5);
  run(clock, 2, [&](int) {
    for (int i = 0; i < 20; ++i) clock.point(1);
  });
  EXPECT_GT(clock.stats().switches, 1u);
  EXPECT_EQ(clock.stats().jumps, 0u) << "nobody slept: time never jumped";
}

// The only participant waits with no deadline: the clock is idle (no time passes, nobody runs)
// until a thread outside the clock, as a launcher does, notifies the condition variable.
TEST(SimClock, ANotifyFromOutsideWakesAClockWhoseParticipantsAllWaitForEver) {
  SimClock clock(1, 3);
  std::mutex m;
  std::condition_variable cv;
  std::condition_variable entered;
  bool waiting = false;
  bool released = false;
  std::thread participant([&] {
    clock.attach(0);
    std::unique_lock lock(m);
    waiting = true;
    entered.notify_all();
    EXPECT_TRUE(clock.waitUntil(lock, cv, Clock::TimePoint::max(), [&] { return released; }));
    lock.unlock();
    clock.detach();
  });
  {
    // m is free again only once the participant waits inside the clock (or before it locked it).
    std::unique_lock lock(m);
    entered.wait(lock, [&] { return waiting; });
    released = true;
    clock.notifyAll(cv);
  }
  participant.join();
  EXPECT_EQ(clock.now(), Clock::TimePoint{});
  EXPECT_EQ(clock.stats().jumps, 0u);
}
}  // namespace
}  // namespace peerconf

namespace peerconf {
namespace {

// The fiber engine's own promises.

TEST(SimClockFibers, ASeedRunsTheSameInterleavingAsOnThreads) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    EXPECT_EQ(order(seed, Engine::kFibers), order(seed, Engine::kThreads)) << "seed " << seed;
  }
}

TEST(SimClockFibers, EveryParticipantRunsOnTheCallingThread) {
  SimClock clock(3, 7);
  const auto caller = std::this_thread::get_id();
  int elsewhere = 0;
  runOn(Engine::kFibers, clock, 3, [&](int) {
    for (int i = 0; i < 10; ++i) {
      if (std::this_thread::get_id() != caller) ++elsewhere;
      clock.point(1);
    }
  });
  EXPECT_EQ(elsewhere, 0);
  EXPECT_GT(clock.stats().switches, 3u) << "the participants took turns";
}

// A participant switched out inside a catch block finds its own exception when it resumes, though
// another caught a different one meanwhile (the C++ runtime's exception state moves with it).
TEST(SimClockFibers, AParticipantResumedInACatchBlockRethrowsItsOwnException) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SimClock clock(2, seed);
    std::string rethrown[2];
    int inFlight[2] = {-1, -1};
    runOn(Engine::kFibers, clock, 2, [&](int id) {
      const std::string mine = id == 0 ? "zero" : "one";
      try {
        try {
          throw std::runtime_error(mine);
        } catch (const std::exception&) {
          for (int i = 0; i < 20; ++i) clock.point(1);  // the other throws and catches meanwhile
          inFlight[id] = std::uncaught_exceptions();
          throw;
        }
      } catch (const std::exception& e) {
        rethrown[id] = e.what();
      }
    });
    EXPECT_EQ(rethrown[0], "zero") << "seed " << seed;
    EXPECT_EQ(rethrown[1], "one") << "seed " << seed;
    EXPECT_EQ(inFlight[0], 0);
    EXPECT_EQ(inFlight[1], 0);
  }
}

// `carry` exchanges each participant's copy of the thread's state at every switch: each one's
// value survives the others' writes.
thread_local int tRankValue = -1;

TEST(SimClockFibers, CarryMovesAParticipantsThreadStateWithIt) {
  SimClock clock(3, 5);
  std::vector<int> saved(3, -1);
  std::vector<int> seen;
  std::vector<std::function<void()>> jobs;
  int carries = 0;
  for (int id = 0; id < 3; ++id) {
    jobs.emplace_back([&clock, &seen, id] {
      clock.attach(id);
      tRankValue = 100 + id;
      for (int i = 0; i < 20; ++i) {
        clock.point(1);
        seen.push_back(tRankValue - 100 - id);  // 0 while its own value is there
      }
      clock.detach();
    });
  }
  tRankValue = 7;  // the host's own
  clock.runFibers(std::move(jobs), [&](int id) {
    ++carries;
    std::swap(tRankValue, saved[static_cast<std::size_t>(id)]);
  });
  EXPECT_EQ(tRankValue, 7) << "the host's value is back";
  EXPECT_EQ(seen, std::vector<int>(60, 0));
  EXPECT_GE(carries, 2 * 3) << "in and out, at least once each";
  EXPECT_EQ(carries % 2, 0);
}

TEST(SimClockFibers, ANotifyFromAnotherThreadWakesParticipantsThatAllWaitForEver) {
  SimClock clock(2, 3);
  std::mutex m;
  std::condition_variable cv;
  bool released = false;
  int waiting = 0;
  std::condition_variable waitingCv;
  std::thread launcher([&] {
    std::unique_lock lock(m);
    waitingCv.wait(lock, [&] { return waiting == 2; });
    released = true;
    clock.notifyAll(cv);
  });
  int woke = 0;
  runOn(Engine::kFibers, clock, 2, [&](int) {
    std::unique_lock lock(m);
    ++waiting;
    waitingCv.notify_all();
    if (clock.waitUntil(lock, cv, Clock::TimePoint::max(), [&] { return released; })) ++woke;
  });
  launcher.join();
  EXPECT_EQ(woke, 2);
}

TEST(SimClockFibers, AJobsExceptionIsRethrownOnceEveryJobHasEnded) {
  SimClock clock(2, 1);
  int ended = 0;
  EXPECT_THROW(runOn(Engine::kFibers, clock, 2,
                     [&](int id) {
                       clock.point(1);
                       ++ended;
                       if (id == 1) throw std::runtime_error("job 1");
                     }),
               std::runtime_error);
  EXPECT_EQ(ended, 2);
  SimClock other(2, 1);
  EXPECT_THROW(other.runFibers({}, [](int) {}), std::invalid_argument);
}

}  // namespace
}  // namespace peerconf
