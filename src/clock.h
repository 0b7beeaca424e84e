// Clock: the seam through which the harness's thread-mode waits read and pass time. RealClock is
// the steady clock (today's behaviour, and the only clock of the MPI and GPU launchers);
// SimClock (sim_clock.h) is virtual time with a seeded scheduler that lets one rank run at a
// time. The production core never sees a clock: it lives behind the Group seam (ThreadWorld's
// deadlines) and in the harness's own waits (fault delays and hangs, the data plane's bounded
// waits).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace peerconf {

// The scheduling choices of a simulated clock made by the caller instead of its seed (SimClock::
// setChooser; `explore --systematic` enumerates them). It is asked at every data-plane memory
// operation whenever more than one participant is runnable (call points, seam and group calls,
// keep the turn), and whenever the turn's holder blocks, sleeps or ends with several runnable.
class ScheduleChooser {
 public:
  virtual ~ScheduleChooser() = default;
  // Which of `runnable` (ascending participant ids) runs next; `holder` is the participant that
  // held the turn (in `runnable` when it could go on: choosing another is a preemption), or -1.
  virtual int pick(int holder, const std::vector<int>& runnable) = 0;
  // A choice of the simulated memory (sim_memory.h): which of `options` values a load reads or
  // where a racing store lands, 0 the newest. -1 leaves it to the seed.
  virtual int choose(int options) {
    (void)options;
    return -1;
  }
};

class SimMemory;

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  Clock() = default;
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;
  virtual ~Clock() = default;

  // True for virtual time (event times are simulated, not measured).
  virtual bool simulated() const noexcept = 0;
  virtual TimePoint now() = 0;
  // Blocks the calling thread until `t` (a rank asleep: a delay, a data-plane pause).
  virtual void sleepUntil(TimePoint t) = 0;
  template <typename Rep, typename Period>
  void sleepFor(std::chrono::duration<Rep, Period> d) {
    sleepUntil(after(now(), d));
  }

  // Waits on `cv` (with `lock` held on entry and on return) until `ready()` or `deadline`;
  // returns ready(). Whoever makes ready() true calls notifyAll(cv) (not cv.notify_all()).
  virtual bool waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         TimePoint deadline, const std::function<bool()>& ready) = 0;
  // Wakes every waitUntil on `cv`. Safe from any thread, with or without the waiters' mutex.
  virtual void notifyAll(std::condition_variable& cv) = 0;
  // A scheduling point: in simulated mode another rank may run here. Real: nothing.
  // `switchOdds` (> 0) overrides how rarely the turn passes here (1 in switchOdds); 0: the
  // clock's own odds (a seam or group call). Memory operations pass a larger number.
  virtual void point(unsigned switchOdds = 0) { (void)switchOdds; }
  // The next number of the run's seeded stream (simulated mode: the draws that also pick the
  // interleaving, so (scenario, seed) decides them; called by the participant holding the turn).
  // Real: 0, nothing in real mode draws.
  virtual std::uint64_t random() { return 0; }
  // Simulated time's weak memory (sim_memory.h), which the data plane's memory operations go
  // through, and the calling thread's participant id in it (-1: not a participant). Real: none.
  virtual SimMemory* simMemory() noexcept { return nullptr; }
  virtual int participant() const noexcept { return -1; }

  // t + d, saturating at TimePoint::max() (a huge deadline means "no deadline"): compared in
  // d's own unit, so that milliseconds::max() does not overflow the clock's nanoseconds.
  template <typename Rep, typename Period>
  static TimePoint after(TimePoint t, std::chrono::duration<Rep, Period> d) {
    using D = std::chrono::duration<Rep, Period>;
    if (d <= D::zero()) return t;
    if (d >= std::chrono::duration_cast<D>(TimePoint::max() - t)) return TimePoint::max();
    return t + std::chrono::duration_cast<Duration>(d);
  }
};

// The steady clock: real sleeps, condition-variable waits with real deadlines.
class RealClock final : public Clock {
 public:
  bool simulated() const noexcept override { return false; }
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  void sleepUntil(TimePoint t) override;
  bool waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline, const std::function<bool()>& ready) override;
  void notifyAll(std::condition_variable& cv) override { cv.notify_all(); }
};

// The process's real clock.
Clock& realClock();

// The clock of the calling thread: what the harness's waits that cannot be handed a clock
// (the data plane's static memory operations, the fault plan's delays) use. realClock() unless
// a ThreadClockScope on this thread says otherwise.
Clock& threadClock();

// Sets the calling thread's clock to `clock` (null: the real clock's default) and returns the one
// it had: an engine that runs ranks as fibers of one thread exchanges each rank's with it at a
// switch.
Clock* exchangeThreadClock(Clock* clock) noexcept;

// Sets the calling thread's clock for the scope's lifetime (a thread launcher's rank job).
class ThreadClockScope {
 public:
  explicit ThreadClockScope(Clock& clock);
  ~ThreadClockScope();
  ThreadClockScope(const ThreadClockScope&) = delete;
  ThreadClockScope& operator=(const ThreadClockScope&) = delete;

 private:
  Clock* previous_;
};

}  // namespace peerconf
