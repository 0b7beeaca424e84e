// Helpers for the tests of the thread group, the thread world and the simulated clock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "sim_clock.h"

namespace peerconf::testing {

// The bytes of an int, as a group's gather carries them.
inline std::vector<std::byte> intBytes(int value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The real clock, counting the waits in progress: a test knows a rank is blocked in a group call
// (inside waitUntil, its mutex released by the wait) before it goes on, instead of sleeping and
// hoping. The count rises before the wait starts; a rank that counts it sees the waiter's lock,
// so it cannot complete the call before the waiter is on the condition variable.
class WaitCountingClock final : public Clock {
 public:
  bool simulated() const noexcept override { return false; }
  TimePoint now() override { return realClock().now(); }
  void sleepUntil(TimePoint t) override { realClock().sleepUntil(t); }
  bool waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline, const std::function<bool()>& ready) override {
    lastDeadline_.store(deadline.time_since_epoch().count());
    waiting_.fetch_add(1);
    const bool done = realClock().waitUntil(lock, cv, deadline, ready);
    waiting_.fetch_sub(1);
    return done;
  }
  void notifyAll(std::condition_variable& cv) override { realClock().notifyAll(cv); }
  // The deadline the latest wait was given.
  TimePoint lastDeadline() const { return TimePoint(Duration(lastDeadline_.load())); }
  // Blocks the caller until at least `n` waits are in progress; false if that takes longer than
  // `limit` (the ranks never got there: the test fails instead of hanging).
  bool awaitWaiters(int n, std::chrono::seconds limit = std::chrono::seconds(30)) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (waiting_.load() < n) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::yield();
    }
    return true;
  }

 private:
  std::atomic<int> waiting_{0};
  std::atomic<Duration::rep> lastDeadline_{0};
};

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

}  // namespace peerconf::testing
