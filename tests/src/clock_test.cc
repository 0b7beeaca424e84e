// RealClock and SimClock: waits with deadlines, virtual time that jumps only when every
// participant is blocked, one participant at a time, an order drawn from the seed, and a
// ThreadWorld whose deadlines pass on simulated time.
#include "clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"
#include "sim_clock.h"
#include "thread/thread_world.h"

namespace peerconf {
namespace {

using namespace std::chrono_literals;

// Runs `body(id)` on `n` threads attached to `clock`; joins them.
template <typename Body>
void runAttached(SimClock& clock, int n, Body body) {
  std::vector<std::thread> threads;
  for (int id = 0; id < n; ++id) {
    threads.emplace_back([&clock, &body, id] {
      clock.attach(id);
      ThreadClockScope scope(clock);
      body(id);
      clock.detach();
    });
  }
  for (auto& t : threads) t.join();
}

TEST(RealClock, WaitUntilReturnsReadyOrTimesOut) {
  Clock& clock = realClock();
  EXPECT_FALSE(clock.simulated());
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock lock(m);
  EXPECT_FALSE(clock.waitUntil(lock, cv, clock.now() + 1ms, [] { return false; }));
  EXPECT_TRUE(clock.waitUntil(lock, cv, clock.now() + 1ms, [] { return true; }));
  EXPECT_EQ(Clock::after(Clock::TimePoint{} + 1s, Clock::Duration::max()), Clock::TimePoint::max());
}

TEST(ThreadClock, IsRealUnlessAScopeSetsIt) {
  EXPECT_EQ(&threadClock(), &realClock());
  SimClock sim(1, 1);
  {
    ThreadClockScope scope(sim);
    EXPECT_EQ(&threadClock(), &sim);
  }
  EXPECT_EQ(&threadClock(), &realClock());
}

TEST(SimClock, ASleepTakesNoRealTimeAndAdvancesVirtualTime) {
  SimClock clock(1, 7);
  const auto wallStart = std::chrono::steady_clock::now();
  Clock::TimePoint after{};
  runAttached(clock, 1, [&](int) {
    clock.sleepFor(3600s);  // an hour, simulated
    after = clock.now();
  });
  EXPECT_EQ(after - Clock::TimePoint{}, Clock::Duration(3600s));
  EXPECT_LT(std::chrono::steady_clock::now() - wallStart, 10s);
  EXPECT_EQ(clock.stats().jumps, 1u);
}

TEST(SimClock, TimeJumpsOnlyWhenEveryParticipantIsBlocked) {
  // Participant 0 sleeps 5 s; participant 1 makes 100 scheduling points meanwhile: none of them
  // may see time pass, and 0 wakes at exactly 5 s.
  SimClock clock(2, 3);
  std::vector<Clock::TimePoint> seen;
  Clock::TimePoint woke{};
  runAttached(clock, 2, [&](int id) {
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

TEST(SimClock, AWaitWithADeadlineTimesOutOnVirtualTimeAndANotifyWakesIt) {
  SimClock clock(2, 11);
  std::mutex m;
  std::condition_variable cv;
  bool flag = false;
  bool timedOut = true;
  bool woken = false;
  Clock::TimePoint timeoutAt{};
  runAttached(clock, 2, [&](int id) {
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

TEST(SimClock, OneParticipantRunsAtATime) {
  SimClock clock(4, 5);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  runAttached(clock, 4, [&](int) {
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
std::string order(std::uint64_t seed) {
  SimClock clock(4, seed);
  std::string out;
  runAttached(clock, 4, [&](int id) {
    for (int i = 0; i < 50; ++i) {
      out += static_cast<char>('0' + id);
      clock.point();
    }
  });
  return out;
}

TEST(SimClock, TheSeedDeterminesTheInterleaving) {
  const std::string a = order(42);
  EXPECT_EQ(a.size(), 200u);
  EXPECT_EQ(order(42), a);
  EXPECT_EQ(order(42), a);
  EXPECT_NE(order(43), a);
  // Negative control: the order is not simply one participant after another.
  EXPECT_NE(
      a, std::string(50, '0') + std::string(50, '1') + std::string(50, '2') + std::string(50, '3'));
}

TEST(SimClock, AThreadWorldTimesOutOnSimulatedTimeInstantly) {
  // Rank 1 never calls: rank 0's all-reduce must time out after exactly the deadline (an hour),
  // in simulated time, at once in real time.
  auto clock = std::make_shared<SimClock>(2, 9);
  auto world = std::make_shared<thread::ThreadWorld>(2, std::chrono::hours(1), clock);
  bool threw = false;
  Clock::TimePoint at{};
  const auto wallStart = std::chrono::steady_clock::now();
  runAttached(*clock, 2, [&](int id) {
    if (id != 0) return;
    try {
      world->allReduceMin(0, 1);
    } catch (const GroupTimeout&) {
      threw = true;
      at = clock->now();
    }
  });
  EXPECT_TRUE(threw);
  EXPECT_EQ(at - Clock::TimePoint{}, Clock::Duration(std::chrono::hours(1)));
  EXPECT_LT(std::chrono::steady_clock::now() - wallStart, 10s);
}

TEST(SimClock, AThreadWorldCompletesItsCollectives) {
  auto clock = std::make_shared<SimClock>(3, 1);
  auto world = std::make_shared<thread::ThreadWorld>(3, 1s, clock);
  std::vector<int> got(3, -1);
  runAttached(*clock, 3, [&](int id) {
    got[static_cast<std::size_t>(id)] = world->allReduceMin(id, 10 + id);
  });
  EXPECT_EQ(got, std::vector<int>({10, 10, 10}));
  EXPECT_EQ(clock->now(), Clock::TimePoint{});  // nobody waited out a deadline
}

}  // namespace
}  // namespace peerconf
