// RealClock and the calling thread's clock.
#include "clock.h"

#include <thread>

namespace peerconf {

namespace {
thread_local Clock* tClock = nullptr;
}  // namespace

void RealClock::sleepUntil(TimePoint t) {
  if (t == TimePoint::max()) {
    // No deadline: a sleep for ever is a wait nobody ends; sleep in long steps.
    for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
  }
  std::this_thread::sleep_until(t);
}

bool RealClock::waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          TimePoint deadline, const std::function<bool()>& ready) {
  if (deadline == TimePoint::max()) {
    cv.wait(lock, ready);
    return true;
  }
  return cv.wait_until(lock, deadline, ready);
}

Clock& realClock() {
  static RealClock clock;
  return clock;
}

Clock& threadClock() { return tClock != nullptr ? *tClock : realClock(); }

Clock* exchangeThreadClock(Clock* clock) noexcept {
  Clock* const previous = tClock;
  tClock = clock;
  return previous;
}

ThreadClockScope::ThreadClockScope(Clock& clock) : previous_(tClock) { tClock = &clock; }
ThreadClockScope::~ThreadClockScope() { tClock = previous_; }

}  // namespace peerconf
