// RealClock and the thread's clock (clock.cc): waits with deadlines on real time, and the clock
// a ThreadClockScope sets for its thread. SimClock's own tests are in sim_clock_test.cc.
#include "clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "sim_clock.h"

namespace peerconf {
namespace {

using namespace std::chrono_literals;

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

}  // namespace
}  // namespace peerconf
