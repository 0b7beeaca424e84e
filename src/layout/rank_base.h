// Protocol API: one rank's end of a layout. A layout (api.h says what it provides) writes its
// rank as a class deriving from RankBase, which holds what every layout shares: the run's shape,
// the rank, the buffers as this rank maps them, the generation, the observer (observer.h), and
// the rules every layout's waits and aborts follow:
//   - every wait is bounded: keepWaiting() reads the clock and the abort word every 64 rounds and
//     ends the wait (Wait::status kTimeout or kAborted) instead of spinning forever;
//   - word 0 of every rank's buffer is the abort word (a layout's buffer map starts with it, on a
//     line of its own): abort() tells every rank to stop waiting, abortedBy() reads who did.
// No allocation, exceptions or threads here: the same code runs on host threads and in kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/hd.h"
#include "layout/mem_ops.h"
#include "layout/payload.h"
#include "layout/tag.h"
#include "layout/wait.h"

namespace peerconf::layout {

// What a scenario's `dataplane:` section sets for every layout (a layout reads what it needs).
struct Shape {
  int ranks = 2;
  // Slots per source the flow control counts on: any count the layout accepts (its
  // invalidReason); a power of two for a layout whose slots are indexed by the 32-bit epoch
  // (LayoutDefaults::slotIndexing, register.h), so that epoch mod depth stays a cycle across the
  // wrap.
  int depth = 2;
  int payloadWords = 6;              // 64-bit payload words per pair
  std::uint64_t windowNs = 2000000;  // the modelled reordering window of the broken controls
  PayloadDomain values;              // what the payload words carry (payload.h)
  std::uint32_t startEpoch = 0;      // the first step's epoch (step s runs epoch startEpoch + s)
};

// One rank's run: `buffers[r]` is rank r's buffer as this rank maps it (its own at
// buffers[rank]); every rank uses the same shape and generation.
struct Context {
  Shape shape;
  int rank = 0;
  std::uint32_t generation = 0;
  Word* const* buffers = nullptr;
  std::uint64_t timeoutNs = 0;
};

// The abort word (word 0 of every buffer) says "stop waiting": the generation, the high bit of
// the low half, and the rank that gave up.
inline constexpr std::uint32_t kAbortBit = 0x80000000u;
inline constexpr std::size_t kAbortWord = 0;
// Words per cache line: a layout keeps the abort word's line to itself.
inline constexpr int kLineWords = 8;

template <PEERCONF_MEM_OPS Mem, class Observer>
class RankBase {
 public:
  PEERCONF_HD RankBase(const Context& context, Observer& observer)
      : context_(context), observer_(observer) {}

  PEERCONF_HD const Context& context() const { return context_; }
  PEERCONF_HD const Shape& shape() const { return context_.shape; }
  PEERCONF_HD int rank() const { return context_.rank; }
  PEERCONF_HD int ranks() const { return context_.shape.ranks; }
  PEERCONF_HD std::uint32_t generation() const { return context_.generation; }
  PEERCONF_HD Observer& observer() { return observer_; }
  // Rank r's buffer as this rank maps it.
  PEERCONF_HD Word* buffer(int r) const { return context_.buffers[r]; }

  // The defaults of a layout's optional steps (a layout's rank hides them with its own):
  // before the first read phase of `step` (step 0 only: zero-then-push's zeroing), nothing.
  PEERCONF_HD Wait beforeReads(std::uint64_t, std::uint32_t) { return Wait{}; }
  // How the payload's values arrive (payload.h): bit for bit, unless the layout says values.
  PEERCONF_HD Delivery delivery() const { return Delivery::kBits; }

  // Tells every rank (this one included) to stop waiting: this rank gave up.
  PEERCONF_HD void abort() {
    const Word word = makeTag(context_.generation, kAbortBit | static_cast<std::uint32_t>(rank()));
    for (int r = 0; r < ranks(); ++r) Mem::storeRelease(buffer(r) + kAbortWord, word);
  }

  // The rank that aborted this run, or -1. Abort words of other generations are ignored.
  PEERCONF_HD int abortedBy() const {
    const Word word = Mem::loadAcquire(buffer(rank()) + kAbortWord);
    if (tagGeneration(word) != context_.generation || (tagEpoch(word) & kAbortBit) == 0) return -1;
    return static_cast<int>(tagEpoch(word) & ~kAbortBit);
  }

 protected:
  // A Wait naming where this rank waits: for `what` of `peer` (C8 judges this name), at `slot`.
  PEERCONF_HD Wait where(WaitFor what, int peer, int slot, std::uint32_t epoch,
                         std::uint64_t step) const {
    Wait wait;
    wait.what = what;
    wait.rank = rank();
    wait.peer = peer;
    wait.slot = slot;
    wait.epoch = epoch;
    wait.step = step;
    return wait;
  }

  // One more round of a wait on `word` (last read as `seen`): false (with `wait` filled in) once
  // another rank aborted or the deadline passed. The clock and the abort word are read every 64
  // rounds; `spins` and `start` start at 0 and belong to the caller's loop.
  PEERCONF_HD bool keepWaiting(Wait& wait, std::uint32_t& spins, std::uint64_t& start,
                               const Word* word, Word seen) const {
    ++spins;
    if ((spins & 63u) == 0) {
      const int by = abortedBy();
      if (by >= 0) {
        wait.status = Status::kAborted;
        wait.abortedBy = by;
        wait.seen = seen;
        return false;
      }
      const std::uint64_t now = Mem::nowNs();
      if (start == 0) {
        start = now;
      } else if (now - start > context_.timeoutNs) {
        wait.status = Status::kTimeout;
        wait.seen = seen;
        return false;
      }
    }
    Mem::pause(spins, word, seen);
    return true;
  }

  // Waits until `done(value)` holds for the word at `word`, loaded with `load` (an Access load
  // such as Access<Mem>::load<Order::kAcquire>): the value it held, or the wait filled in.
  template <class Load, class Done>
  PEERCONF_HD bool waitUntil(Wait& wait, const Word* word, Load load, Done done,
                             Word& value) const {
    std::uint32_t spins = 0;
    std::uint64_t start = 0;
    for (;;) {
      value = load(word);
      if (done(value)) return true;
      if (!keepWaiting(wait, spins, start, word, value)) return false;
    }
  }

  // Holds this rank for `ns` (on its clock): the modelled windows of the broken controls.
  PEERCONF_HD void hold(std::uint64_t ns) const {
    const std::uint64_t until = Mem::nowNs() + ns;
    std::uint32_t spins = 0;
    while (Mem::nowNs() < until) Mem::pause(++spins, nullptr, 0);
  }

 private:
  Context context_;
  Observer& observer_;
};

}  // namespace peerconf::layout
