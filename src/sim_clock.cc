// SimClock: one participant runs at a time; time jumps when every participant is blocked.
#include "sim_clock.h"

#include <cxxabi.h>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

// The sanitizers' fiber-switch annotations (ASan: which stack is live; TSan: which fiber runs and
// that a switch orders what came before it). Boost.Context's fcontext switch does not make them.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEERCONF_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define PEERCONF_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PEERCONF_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define PEERCONF_FIBER_TSAN 1
#endif
#if defined(PEERCONF_FIBER_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(PEERCONF_FIBER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace peerconf {

namespace {

struct Membership {
  const SimClock* clock = nullptr;
  int id = -1;
};
thread_local Membership tMember;

// x % odds == 0, without the division when odds is a power of two (every odds the harness uses:
// a 64-bit division was most of a memory operation's scheduling point).
bool oneIn(std::uint64_t x, std::uint64_t odds) {
  if ((odds & (odds - 1)) == 0) return (x & (odds - 1)) == 0;
  return x % odds == 0;
}

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The C++ runtime's exception state of a thread (the Itanium ABI's __cxa_eh_globals: the exceptions
// being handled, innermost first, and how many are thrown and not yet caught; libstdc++ and
// libc++abi lay out these two fields first). A rank switched out inside a catch block must find its
// own exception there when it resumes (`throw;`, std::current_exception), not the one another rank
// caught meanwhile: the fiber engine keeps a copy per rank and exchanges it at each switch.
struct EhGlobals {
  void* caughtExceptions = nullptr;
  unsigned int uncaughtExceptions = 0;
};

void exchangeEhGlobals(EhGlobals& other) noexcept {
  auto* globals = reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
  std::swap(*globals, other);
}

}  // namespace

// The fiber engine's state while runFibers runs: one fiber a participant and the host loop's
// wake-up.
struct SimClock::Fibers {
  struct One {
    boost::context::fiber self;  // the suspended fiber (empty while it runs, and once it returned)
    boost::context::fiber host;  // while it runs: the host loop to switch back to
    const void* stackBottom = nullptr;  // its stack, for ASan
    std::size_t stackSize = 0;
    void* fakeStack = nullptr;  // ASan's fake stack of the fiber while it is switched out
    void* tsanFiber = nullptr;  // TSan's fiber
    EhGlobals exceptions;       // its exception state while it is switched out
  };
  // A participant's stack: guard page below (an overflow faults), committed as it is touched.
  static constexpr std::size_t kStackBytes = std::size_t{1} << 20;
  // The stack allocator of one fiber: Boost's protected stack, its bounds kept for ASan. Stacks
  // are kept for the next run (a process-wide pool of up to kPooledStacks): mapping and unmapping
  // them run after run cost a TLB shootdown on every core each time.
  class Stack {
   public:
    explicit Stack(One& one) : one_(&one) {}
    boost::context::stack_context allocate() {
      boost::context::stack_context sc;
      {
        std::lock_guard lock(poolMutex());
        if (!pool().empty()) {
          sc = pool().back();
          pool().pop_back();
        }
      }
      if (sc.sp == nullptr) sc = boost::context::protected_fixedsize_stack(kStackBytes).allocate();
      one_->stackBottom = static_cast<char*>(sc.sp) - sc.size;
      one_->stackSize = sc.size;
      return sc;
    }
    void deallocate(boost::context::stack_context& sc) noexcept {
#if defined(PEERCONF_FIBER_ASAN)
      // The frames of the fiber that ran on it are gone: none of their poisoning may remain.
      __asan_unpoison_memory_region(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
      {
        std::lock_guard lock(poolMutex());
        if (pool().size() < kPooledStacks) {
          pool().push_back(sc);
          return;
        }
      }
      boost::context::protected_fixedsize_stack(kStackBytes).deallocate(sc);
    }

   private:
    static constexpr std::size_t kPooledStacks = 64;
    static std::mutex& poolMutex() {
      static std::mutex mutex;
      return mutex;
    }
    static std::vector<boost::context::stack_context>& pool() {
      static auto* stacks = new std::vector<boost::context::stack_context>();  // never destroyed
      return *stacks;
    }
    One* one_;
  };

  explicit Fibers(std::size_t n) : fibers(n) {}
  std::vector<One> fibers;
  int finished = 0;
  std::exception_ptr error;      // the first job's exception
  std::condition_variable wake;  // the host loop waits here while no participant holds the turn
  // The host thread's stack (ASan: told at each switch back), its fake stack and TSan fiber.
  const void* hostBottom = nullptr;
  std::size_t hostSize = 0;
  void* hostFakeStack = nullptr;
  void* hostTsanFiber = nullptr;
};

SimClock::SimClock(int participants, std::uint64_t seed, unsigned switchOdds)
    : n_(participants),
      switchOdds_(switchOdds == 0 ? 1 : switchOdds),
      rng_(mix(seed ^ 0x5157ULL)),
      memory_(participants, choices_) {
  if (participants < 1) throw std::invalid_argument("SimClock: participants must be >= 1");
  for (int i = 0; i < participants; ++i) slots_.push_back(std::make_unique<Slot>());
  runnable_.reserve(static_cast<std::size_t>(participants));
}

SimClock::~SimClock() = default;

std::uint64_t SimClock::draw() {
  rng_ += 0x9E3779B97F4A7C15ULL;
  return mix(rng_);
}

int SimClock::self() const noexcept { return tMember.clock == this ? tMember.id : -1; }

bool SimClock::attached() const noexcept { return self() >= 0; }

Clock::TimePoint SimClock::now() {
  std::lock_guard lock(m_);
  return now_;
}

SimClock::Stats SimClock::stats() const {
  std::lock_guard lock(m_);
  return stats_;
}

void SimClock::schedule() {
  const int previous = current_.load(std::memory_order_relaxed);
  current_ = -1;
  if (!started_) return;
  std::vector<int>& runnable = runnable_;
  auto collect = [&] {
    runnable.clear();
    for (int i = 0; i < n_; ++i) {
      Slot& slot = *slots_[static_cast<std::size_t>(i)];
      if (slot.state == State::kWaiting && slot.wake <= now_) slot.state = State::kRunnable;
      if (slot.state == State::kRunnable) runnable.push_back(i);
    }
  };
  collect();
  if (runnable.empty()) {
    // Every participant is blocked: jump to the earliest wake-up, if any.
    TimePoint earliest = TimePoint::max();
    for (const auto& slot : slots_) {
      if (slot->state == State::kWaiting && slot->wake < earliest) earliest = slot->wake;
    }
    if (earliest == TimePoint::max()) return;  // idle until notified from outside
    if (earliest > now_) {
      now_ = earliest;
      ++stats_.jumps;
    }
    collect();
  }
  // The runnable participant of the highest priority (PCT: priorities are drawn from the seed at
  // the start and change only at change points, so the choice itself draws nothing); or the
  // chooser's, when there is a choice.
  int next = runnable.front();
  if (chooser_ != nullptr) {
    if (runnable.size() > 1) next = chooser_->pick(previous, runnable);
  } else {
    for (const int i : runnable) {
      if (slots_[static_cast<std::size_t>(i)]->priority >
          slots_[static_cast<std::size_t>(next)]->priority) {
        next = i;
      }
    }
  }
  preempt_.store(false, std::memory_order_relaxed);
  if (next != previous) ++stats_.switches;
  current_.store(next, std::memory_order_release);
  if (fibers_ != nullptr) {
    fibers_->wake.notify_one();  // the host loop, if it waits (a notify from another thread)
    return;
  }
  Slot& chosen = *slots_[static_cast<std::size_t>(next)];
  if (chosen.sleeping) chosen.turn.notify_one();
}

void SimClock::awaitTurn(std::unique_lock<std::mutex>& sm, int id) {
  if (current_.load(std::memory_order_relaxed) == id) return;
  if (fibers_ != nullptr) {
    // A fiber: back to the host loop, which resumes this one when the turn is its own again.
    sm.unlock();
    yieldFiber(id);
    sm.lock();
    return;
  }
  // A turn often comes back within microseconds (two ranks taking turns in the data plane): spin
  // first, then yield the core (the rank holding the turn may need it), and only then block on the
  // futex, which costs a wake-up system call on each side.
  sm.unlock();
  bool mine = false;
  for (int spin = 0; spin < kSpins && !mine; ++spin) {
    mine = current_.load(std::memory_order_acquire) == id;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  for (int round = 0; round < kYields && !mine; ++round) {
    std::this_thread::yield();
    mine = current_.load(std::memory_order_acquire) == id;
  }
  sm.lock();
  if (current_ == id) return;
  Slot& slot = *slots_[static_cast<std::size_t>(id)];
  slot.sleeping = true;
  slot.turn.wait(sm, [&] { return current_ == id; });
  slot.sleeping = false;
}

void SimClock::attach(int id) {
  std::unique_lock sm(m_);
  if (id < 0 || id >= n_) {
    throw std::invalid_argument("SimClock: participant " + std::to_string(id) + " outside 0.." +
                                std::to_string(n_ - 1));
  }
  Slot& slot = *slots_[static_cast<std::size_t>(id)];
  if (slot.state != State::kDetached) {
    throw std::invalid_argument("SimClock: participant " + std::to_string(id) + " attached twice");
  }
  slot.state = State::kRunnable;
  tMember = Membership{this, id};
  if (++attached_ == n_) {
    started_ = true;
    // PCT's initial priorities: a permutation of n_..2n_-1 drawn from the seed (Fisher-Yates),
    // all above every priority a change point hands out (lowest_ and below).
    std::vector<std::int64_t> priorities(static_cast<std::size_t>(n_));
    for (int i = 0; i < n_; ++i) priorities[static_cast<std::size_t>(i)] = n_ + i;
    for (int i = n_ - 1; i > 0; --i) {
      const auto j = static_cast<std::size_t>(draw() % static_cast<std::uint64_t>(i + 1));
      std::swap(priorities[static_cast<std::size_t>(i)], priorities[j]);
    }
    for (int i = 0; i < n_; ++i) {
      slots_[static_cast<std::size_t>(i)]->priority = priorities[static_cast<std::size_t>(i)];
    }
    schedule();
  }
  awaitTurn(sm, id);
}

void SimClock::detach() {
  const int id = self();
  if (id < 0) return;
  std::unique_lock sm(m_);
  slots_[static_cast<std::size_t>(id)]->state = State::kDone;
  tMember = Membership{};
  if (current_ == id) schedule();
}

void SimClock::yieldFiber(int id) {
  Fibers::One& one = fibers_->fibers[static_cast<std::size_t>(id)];
#if defined(PEERCONF_FIBER_ASAN)
  __sanitizer_start_switch_fiber(&one.fakeStack, fibers_->hostBottom, fibers_->hostSize);
#endif
#if defined(PEERCONF_FIBER_TSAN)
  __tsan_switch_to_fiber(fibers_->hostTsanFiber, 0);
#endif
  one.host = std::move(one.host).resume();
#if defined(PEERCONF_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(one.fakeStack, &fibers_->hostBottom, &fibers_->hostSize);
#endif
}

void SimClock::resumeFiber(int id, const std::function<void(int)>& carry) {
  Fibers::One& one = fibers_->fibers[static_cast<std::size_t>(id)];
  tMember = Membership{this, id};
  carry(id);
  exchangeEhGlobals(one.exceptions);
#if defined(PEERCONF_FIBER_ASAN)
  __sanitizer_start_switch_fiber(&fibers_->hostFakeStack, one.stackBottom, one.stackSize);
#endif
#if defined(PEERCONF_FIBER_TSAN)
  __tsan_switch_to_fiber(one.tsanFiber, 0);
#endif
  one.self = std::move(one.self).resume();
#if defined(PEERCONF_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(fibers_->hostFakeStack, nullptr, nullptr);
#endif
  exchangeEhGlobals(one.exceptions);
  carry(id);
  tMember = Membership{};
  if (!one.self) {  // it returned
#if defined(PEERCONF_FIBER_TSAN)
    __tsan_destroy_fiber(one.tsanFiber);
#endif
    std::lock_guard sm(m_);
    ++fibers_->finished;
  }
}

void SimClock::runFibers(std::vector<std::function<void()>> jobs,
                         const std::function<void(int)>& carry) {
  if (static_cast<int>(jobs.size()) != n_) {
    throw std::invalid_argument("SimClock::runFibers: " + std::to_string(jobs.size()) +
                                " jobs for " + std::to_string(n_) + " participants");
  }
  Fibers fibers(jobs.size());
#if defined(PEERCONF_FIBER_TSAN)
  fibers.hostTsanFiber = __tsan_get_current_fiber();
#endif
  for (int i = 0; i < n_; ++i) {
    Fibers::One& one = fibers.fibers[static_cast<std::size_t>(i)];
    auto body = [this, &one, &fibers, job = std::move(jobs[static_cast<std::size_t>(i)])](
                    boost::context::fiber&& host) mutable {
#if defined(PEERCONF_FIBER_ASAN)
      __sanitizer_finish_switch_fiber(nullptr, &fibers.hostBottom, &fibers.hostSize);
#endif
      one.host = std::move(host);
      try {
        job();
      } catch (const boost::context::detail::forced_unwind&) {
        throw;  // Boost unwinding a fiber destroyed unfinished: never caught
      } catch (...) {
        if (!fibers.error) fibers.error = std::current_exception();
      }
      job = nullptr;  // its captures are destroyed on this fiber's stack
      detach();       // a job that ended without detaching (an exception) hands the turn on
#if defined(PEERCONF_FIBER_ASAN)
      __sanitizer_start_switch_fiber(nullptr, fibers.hostBottom, fibers.hostSize);
#endif
#if defined(PEERCONF_FIBER_TSAN)
      __tsan_switch_to_fiber(fibers.hostTsanFiber, 0);
#endif
      return std::move(one.host);
    };
    one.self = boost::context::fiber(std::allocator_arg, Fibers::Stack(one), std::move(body));
#if defined(PEERCONF_FIBER_TSAN)
    one.tsanFiber = __tsan_create_fiber(0);
#endif
  }
  {
    std::lock_guard sm(m_);
    fibers_ = &fibers;
  }
  // Each job runs to its attach, where it waits for the others; the last one's attach hands out
  // the first turn. From then on the host resumes whoever holds the turn.
  for (int i = 0; i < n_; ++i) resumeFiber(i, carry);
  {
    std::unique_lock sm(m_);
    for (;;) {
      fibers.wake.wait(sm, [&] { return current_ >= 0 || fibers.finished == n_; });
      const int next = current_.load(std::memory_order_relaxed);
      if (next < 0) break;  // every job returned
      sm.unlock();
      resumeFiber(next, carry);
      sm.lock();
    }
    fibers_ = nullptr;
  }
  if (fibers.error) std::rethrow_exception(fibers.error);
}

int SimClock::MemoryChoices::choose(int options) {
  if (clock_.chooser_ != nullptr) {
    const int chosen = clock_.chooser_->choose(options);
    if (chosen >= 0) return chosen;
  }
  // The newest value 7 times in 8 (a wait that reads an older one spins again: a thread switch),
  // else any the load may read.
  const std::uint64_t r = clock_.random();
  if ((r & 7u) != 0) return 0;
  return static_cast<int>((r >> 3) % static_cast<std::uint64_t>(options));
}

std::uint64_t SimClock::random() {
  // The participant holding the turn is the only one that draws (the stream is handed on with
  // the turn: current_'s release and acquire), so it needs no lock; anyone else takes m_.
  if (self() >= 0 && current_.load(std::memory_order_relaxed) == self()) return draw();
  std::lock_guard lock(m_);
  return draw();
}

void SimClock::point(unsigned switchOdds) {
  const int id = self();
  if (id < 0) return;
  // Most points keep the turn: decided without the lock (the turn's holder owns the stream). A
  // change point (1 in switchOdds) drops the holder's priority below everyone's; a participant of
  // a higher priority woken since the last switch (preempt_) takes over here.
  // A call point (switchOdds 0: a seam call, a group call, an event) costs kCallCost of virtual
  // time, as a serial machine would spend it; a memory operation costs nothing (its waits do).
  const bool call = switchOdds == 0;
  if (chooser_ != nullptr) {
    // Systematic: every memory point is a choice; a call point keeps the turn.
    std::unique_lock sm(m_);
    if (call) {
      now_ += kCallCost;
      return;
    }
    schedule();
    awaitTurn(sm, id);
    return;
  }
  const bool change = oneIn(draw(), call ? switchOdds_ : switchOdds);
  if (!change && !call && !preempt_.load(std::memory_order_relaxed)) return;
  std::unique_lock sm(m_);
  if (call) now_ += kCallCost;
  if (!change && !preempt_.load(std::memory_order_relaxed)) return;
  if (change) slots_[static_cast<std::size_t>(id)]->priority = --lowest_;
  schedule();
  awaitTurn(sm, id);
}

void SimClock::sleepUntil(TimePoint t) {
  const int id = self();
  if (id < 0) throw std::logic_error("SimClock::sleepUntil from a thread that is not attached");
  std::unique_lock sm(m_);
  Slot& slot = *slots_[static_cast<std::size_t>(id)];
  slot.state = State::kWaiting;
  slot.wake = t;
  slot.key = nullptr;
  schedule();
  awaitTurn(sm, id);
}

bool SimClock::waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         TimePoint deadline, const std::function<bool()>& ready) {
  const int id = self();
  if (id < 0) throw std::logic_error("SimClock::waitUntil from a thread that is not attached");
  Slot& slot = *slots_[static_cast<std::size_t>(id)];
  while (!ready()) {
    std::unique_lock sm(m_);
    if (now_ >= deadline) return false;
    slot.state = State::kWaiting;
    slot.wake = deadline;
    slot.key = &cv;
    // Registered as a waiter before the caller's mutex is released: a notify cannot be lost.
    lock.unlock();
    schedule();
    awaitTurn(sm, id);
    slot.key = nullptr;
    sm.unlock();
    lock.lock();
  }
  return true;
}

void SimClock::notifyAll(std::condition_variable& cv) {
  {
    std::lock_guard sm(m_);
    const int holder = current_.load(std::memory_order_relaxed);
    for (const auto& slot : slots_) {
      if (slot->state != State::kWaiting || slot->key != &cv) continue;
      slot->state = State::kRunnable;
      // Woken above the running participant's priority: it takes the turn at the next point.
      if (holder >= 0 && slot->priority > slots_[static_cast<std::size_t>(holder)]->priority) {
        preempt_.store(true, std::memory_order_relaxed);
      }
    }
    if (holder < 0) schedule();  // every participant was blocked: the turn was nobody's
  }
  cv.notify_all();  // waiters outside the clock (a launcher's thread)
}

}  // namespace peerconf
