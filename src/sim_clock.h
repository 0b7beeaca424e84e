// SimClock: virtual time and a seeded scheduler for ranks run as threads of one process
// (FoundationDB's simulation idea). Each rank's thread attaches as one participant; from then on
// exactly one participant runs at a time (it holds the turn). The turn passes only at the clock's
// calls: point() (a seam call, a data-plane memory operation), sleepUntil() (a delay, a
// data-plane pause) and waitUntil() (a group call, a hang). The scheduler is of the PCT kind
// (Burckhardt et al., "A randomized scheduler with probabilistic guarantees of finding bugs",
// ASPLOS 2010): each participant has a priority, a permutation drawn from the seed at the start;
// the runnable participant of the highest priority runs; at a change point (a point() whose draw
// comes up, 1 in switchOdds) the holder's priority drops below every other, and a participant
// woken above the holder's priority takes the turn at the holder's next point. Every choice comes
// from the seed, so the same program and seed run the same interleaving; another seed gives
// other priorities and other change points.
//
// Two engines run the participants. Threads: each participant is an OS thread of its own and waits
// for its turn (spins, then a futex). Fibers (runFibers): every participant is a fiber
// (Boost.Context) of one OS thread, and handing the turn on is a user-space context switch to that
// thread's host loop, which resumes the participant holding the turn. The scheduler and its choices
// are the same, so a seed runs the same interleaving on both engines.
//
// Virtual time passes in two ways: a call point (a seam call, a group call, an event) costs the
// running participant 1 us, as on a serial machine; and when every attached participant is blocked
// (asleep or waiting), the clock jumps to the earliest wake-up. Participants whose wake-up has
// passed become runnable at the next switch. A wait with no deadline that nobody notifies blocks
// for ever (a planted hang until the launcher releases it); when every participant is blocked that
// way the clock is idle until a notifyAll from outside (the launcher's thread).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "clock.h"
#include "sim_memory.h"

namespace peerconf {

class SimClock final : public Clock {
 public:
  // A clock for `participants` threads (ids 0..participants-1). A point() is a change point with
  // chance 1 in `switchOdds` (the holder's priority drops to the lowest: another runnable
  // participant, if any, takes the turn).
  SimClock(int participants, std::uint64_t seed, unsigned switchOdds = 4);
  // What a call point (point() with switchOdds 0) costs in virtual time, so that a run's phases
  // have lengths in its reports.
  static constexpr Duration kCallCost = std::chrono::microseconds(1);
  ~SimClock() override;

  bool simulated() const noexcept override { return true; }
  TimePoint now() override;
  void sleepUntil(TimePoint t) override;
  bool waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline, const std::function<bool()>& ready) override;
  void notifyAll(std::condition_variable& cv) override;
  void point(unsigned switchOdds = 0) override;
  std::uint64_t random() override;
  // The run's weak memory: its choices come from the chooser when one decides them, else from
  // the seed (the newest value 7 times in 8, else any value the load may read).
  SimMemory* simMemory() noexcept override { return &memory_; }
  int participant() const noexcept override { return self(); }

  // The calling thread becomes participant `id` and blocks until every participant has attached
  // and the turn is its own. Throws std::invalid_argument for a bad or already-attached id.
  void attach(int id);
  // The calling participant is done: it gives up the turn and never takes part again.
  void detach();

  // The fiber engine: runs `jobs` (job i must attach as participant i, first thing) as fibers of
  // the calling thread, each when it holds the turn, and returns when every job has returned. When
  // every participant waits with no deadline, the calling thread blocks until a notifyAll from
  // another thread (a launcher releasing hung ranks) makes one runnable. `carry(i)` runs on the
  // calling thread right before participant i runs and right after it hands the turn on: it
  // exchanges the thread's per-rank state that other modules keep in thread_locals (the mocked
  // runtime's current device, the thread's clock) with i's stored copy, the same call both ways.
  // A job's exception is rethrown once every job has ended. Called once, with `participants` jobs.
  // Under ASan and TSan every switch is announced to the sanitizer (its fiber-switch API).
  void runFibers(std::vector<std::function<void()>> jobs, const std::function<void(int)>& carry);
  // True when the calling thread is attached to this clock.
  bool attached() const noexcept;

  // Systematic exploration (explore --systematic): a ScheduleChooser (clock.h), when set before
  // the first attach, makes every scheduling choice instead of the PCT priorities and change
  // points. Virtual time and the other draws (random(): weak memory's) are as without it.
  void setChooser(ScheduleChooser* chooser) { chooser_ = chooser; }

  // What the scheduler did so far: turns handed from one participant to another, time jumps.
  struct Stats {
    std::uint64_t switches = 0;
    std::uint64_t jumps = 0;
  };
  Stats stats() const;

 private:
  enum class State { kDetached, kRunnable, kWaiting, kDone };
  struct Slot {
    State state = State::kDetached;
    TimePoint wake = TimePoint::max();  // kWaiting: when it becomes runnable without a notify
    const void* key = nullptr;          // kWaiting: the condition variable it waits on, if any
    std::condition_variable turn;
    bool sleeping = false;      // blocked on `turn` (m_ held to read or write): needs a notify
    std::int64_t priority = 0;  // PCT: the runnable participant of the highest one runs
  };
  // awaitTurn's busy phases before it blocks: pause-spins, then yields of the core.
  static constexpr int kSpins = 256;
  static constexpr int kYields = 64;

  struct Fibers;  // the fiber engine's fibers and host loop (sim_clock.cc), while runFibers runs
  // Fiber engine: the host resumes participant `id` until it hands the turn on or returns.
  void resumeFiber(int id, const std::function<void(int)>& carry);
  // Fiber engine: participant `id` gives the thread back to the host loop (m_ not held).
  void yieldFiber(int id);

  // Gives the turn to a runnable participant drawn from the seed, advancing time when none is
  // runnable (m_ held). Leaves current_ at -1 when every participant is blocked for ever or done.
  void schedule();
  // Blocks the calling participant `id` until the turn is its own (m_ held through `sm`).
  void awaitTurn(std::unique_lock<std::mutex>& sm, int id);
  // The calling thread's participant id, or -1 when it is not attached to this clock.
  int self() const noexcept;
  std::uint64_t draw();

  const int n_;
  const unsigned switchOdds_;
  mutable std::mutex m_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<int> runnable_;  // schedule()'s list, kept to spare an allocation a switch
  int attached_ = 0;
  bool started_ = false;
  // Written under m_; read by a waiting participant's spin (a cache line of its own, so that the
  // spin does not slow the running participant's draws and locks).
  alignas(64) std::atomic<int> current_{-1};
  TimePoint now_{};
  std::int64_t lowest_ = 0;  // the last priority a change point handed out (below all others)
  // A participant of a higher priority than the turn's holder became runnable: the holder passes
  // the turn at its next point (written under m_; read by the holder without it).
  std::atomic<bool> preempt_{false};
  alignas(64) std::uint64_t rng_;  // drawn by the turn's holder (see random())
  Stats stats_;
  ScheduleChooser* chooser_ = nullptr;
  class MemoryChoices final : public SimMemory::Choices {
   public:
    explicit MemoryChoices(SimClock& clock) : clock_(clock) {}
    int choose(int options) override;

   private:
    SimClock& clock_;
  };
  MemoryChoices choices_{*this};
  Fibers* fibers_ = nullptr;  // set while runFibers runs (written under m_ before any job starts)
  SimMemory memory_;
};

}  // namespace peerconf
