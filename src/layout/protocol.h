// The data-plane protocol, written once over a MemOps type: push a pair into a peer's slot once
// the slot's previous pair was acknowledged, wait for and read a pair in this rank's own buffer
// (re-checking its tag after the payload), acknowledge it, and abort. Every wait is bounded.
//
// No allocation, exceptions, std::vector or threads here: the same code runs on host threads
// (HostMemOps) and, in a later issue, in GPU kernels.
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/layout.h"
#include "layout/mem_ops.h"
#include "layout/payload.h"
#include "layout/tag.h"

namespace peerconf::layout {

enum class Status : std::uint8_t {
  kOk,
  kTimeout,      // the wait passed its deadline
  kAborted,      // another rank gave up and said so through the abort word
  kOverwritten,  // the awaited slot already holds a later epoch's pair (C6, seen in-band)
};

enum class WaitFor : std::uint8_t {
  kNothing,
  kPair,     // a peer's pair in this rank's buffer
  kAck,      // a peer's acknowledgement of the slot's previous pair
  kArrival,  // (zero-then-push model) a peer's first pair, so the zeroing can land after it
};

PEERCONF_HD constexpr const char* statusName(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kTimeout:
      return "timeout";
    case Status::kAborted:
      return "aborted";
    case Status::kOverwritten:
      return "overwritten";
  }
  return "unknown";
}

PEERCONF_HD constexpr const char* waitForName(WaitFor what) {
  switch (what) {
    case WaitFor::kNothing:
      return "nothing";
    case WaitFor::kPair:
      return "pair";
    case WaitFor::kAck:
      return "acknowledgement";
    case WaitFor::kArrival:
      return "arrival";
  }
  return "unknown";
}

// How a wait ended, and where: which rank waited for which peer's pair or acknowledgement, for
// which slot (of the pair's destination buffer) and epoch.
struct Wait {
  Status status = Status::kOk;
  WaitFor what = WaitFor::kNothing;
  int rank = -1;
  int peer = -1;
  int slot = -1;
  std::uint32_t epoch = 0;
  std::uint64_t step = 0;
  Word seen = 0;       // the last word the wait read
  int abortedBy = -1;  // kAborted: the rank that gave up
  PEERCONF_HD bool ok() const { return status == Status::kOk; }
};

// What the protocol tells an observer (the host records an event history; GPUs pass this one).
struct NullObserver {
  // A push starts storing (after its wait); `ackSeen` is the acknowledgement that let it.
  PEERCONF_HD void pushing(int, std::uint64_t, std::uint32_t, int, Word) {}
  PEERCONF_HD void payloadStored(int, std::uint64_t) {}
  PEERCONF_HD void tagStoring(int, std::uint64_t) {}
  PEERCONF_HD void pushed(int, std::uint64_t, std::uint32_t, int, Word) {}
  // A pair was read and classified: (source, step, epoch, slot, tag, tag re-read, check).
  PEERCONF_HD void readPair(int, std::uint64_t, std::uint32_t, int, Word, Word, PairCheck) {}
  // Waiting for a pair, the slot showed a later epoch's: (source, step, epoch, slot, seen).
  PEERCONF_HD void overwriteSeen(int, std::uint64_t, std::uint32_t, int, Word) {}
  // This rank zeroed slot (slot, source) over `overwrote` (zero-then-push).
  PEERCONF_HD void zeroed(int, std::uint64_t, std::uint32_t, int, Word) {}
  // An all-reduce result was checked against the step's sum.
  PEERCONF_HD void reduced(std::uint64_t, std::uint32_t, bool) {}
};

// What a workload's checks found.
struct Tally {
  std::uint64_t pairs = 0;         // pairs read or found overwritten
  std::uint64_t genuine = 0;       // ... that were exactly this step's
  std::uint64_t overwritten = 0;   // C6 seen in-band
  std::uint64_t stale = 0;         // C7 seen in-band
  std::uint64_t wrongResults = 0;  // all-reduce sums wrong although every pair checked out

  PEERCONF_HD void count(PairCheck check) {
    ++pairs;
    switch (check) {
      case PairCheck::kGenuine:
        ++genuine;
        break;
      case PairCheck::kOverwritten:
        ++overwritten;
        break;
      case PairCheck::kStaleTag:
      case PairCheck::kStalePayload:
        ++stale;
        break;
    }
  }
};

// One rank's end of the protocol. `buffers[r]` is rank r's buffer as this rank maps it (its own
// at buffers[rank]); every rank uses the same layout and generation.
template <PEERCONF_MEM_OPS Mem, class Observer = NullObserver>
class Protocol {
 public:
  PEERCONF_HD Protocol(const Layout& layout, int rank, std::uint32_t generation,
                       Word* const* buffers, std::uint64_t timeoutNs, Observer& observer)
      : layout_(layout),
        rank_(rank),
        generation_(generation),
        buffers_(buffers),
        timeoutNs_(timeoutNs),
        observer_(observer) {}

  PEERCONF_HD const Layout& layout() const { return layout_; }
  PEERCONF_HD int rank() const { return rank_; }
  PEERCONF_HD std::uint32_t generation() const { return generation_; }
  PEERCONF_HD Observer& observer() { return observer_; }

  // Pushes `payload` (layout().payloadWords words) as the pair of `epoch` (step `step` of this
  // run) into `dest`'s slot. From step `depth` on, that slot held this rank's pair of epoch
  // - depth, so the push first waits until `dest` has acknowledged that epoch (C6).
  PEERCONF_HD Wait push(int dest, std::uint64_t step, std::uint32_t epoch, const Word* payload) {
    const int slot = layout_.slotOf(epoch);
    Word ackSeen = 0;
    if (step >= static_cast<std::uint64_t>(layout_.depth)) {
      const std::uint32_t previous = epoch - static_cast<std::uint32_t>(layout_.depth);
      const Word* ack = buffers_[rank_] + layout_.ackWord(dest);
      Wait wait = where(WaitFor::kAck, dest, slot, epoch, step);
      std::uint32_t spins = 0;
      std::uint64_t start = 0;
      for (;;) {
        ackSeen = Mem::loadAcquire(ack);
        if (layout_.acknowledges(ackSeen, generation_, previous)) break;
        if (!keepWaiting(wait, spins, start, ack, ackSeen)) return wait;
      }
    }
    Word* pair = buffers_[dest] + layout_.pairWord(slot, rank_);
    const Word tag = layout_.tag(generation_, epoch);
    observer_.pushing(dest, step, epoch, slot, ackSeen);
    // Chunk by chunk (the reference: one chunk, its tag first in the slot): the observer hears
    // of the last chunk's payload and tag, the ones that complete the pair.
    const int chunks = layout_.chunks();
    for (int c = 0; c < chunks; ++c) {
      const bool last = c == chunks - 1;
      Word* chunkTag = pair + layout_.chunkTagWord(c);
      if (layout_.tagBeforePayload()) {
        // The broken order, made deterministic: the tag is visible for a whole window before
        // the payload lands, as a missing release lets the hardware do. (Stored with a release
        // so that it is visible at once, on simulated weak memory too; the release orders only
        // the stores before it, and the payload comes after.)
        if (last) observer_.tagStoring(dest, step);
        Mem::storeRelease(chunkTag, tag);
        hold(layout_.windowNs);
        storePayload(pair, payload, c);
        if (last) observer_.payloadStored(dest, step);
      } else {
        storePayload(pair, payload, c);
        if (last) {
          observer_.payloadStored(dest, step);
          observer_.tagStoring(dest, step);
        }
        if (layout_.tagReleased()) {
          Mem::storeRelease(chunkTag, tag);
        } else {
          Mem::storeRelaxed(chunkTag, tag);  // relaxed-tag: nothing orders the payload before it
        }
      }
    }
    observer_.pushed(dest, step, epoch, slot, tag);
    return where(WaitFor::kNothing, dest, slot, epoch, step);
  }

  // Waits for `source`'s pair of `epoch` in this rank's buffer, copies its payload to `out` and
  // returns the tag it took (`*tag`) and the tag re-read after the payload (`*tagAfter`); a
  // caller compares them and the payload (classifyPair). kOverwritten: the slot already holds a
  // later epoch's pair, so this epoch's was lost before it was read.
  PEERCONF_HD Wait read(int source, std::uint64_t step, std::uint32_t epoch, Word* out, Word* tag,
                        Word* tagAfter) {
    const int slot = layout_.slotOf(epoch);
    const Word* pair = buffers_[rank_] + layout_.pairWord(slot, source);
    const Word expected = layout_.tag(generation_, epoch);
    Wait wait = where(WaitFor::kPair, layout_.pairWaitPeer(source, rank_), slot, epoch, step);
    // Chunk by chunk (the reference: one chunk): wait for the chunk's own tag, load its payload,
    // then re-read that tag. The pair's tag is what every chunk showed; a chunk whose tag
    // changed during its read makes the re-read differ.
    Word took = 0;
    Word after = 0;
    for (int c = 0; c < layout_.chunks(); ++c) {
      const Word* chunkTag = pair + layout_.chunkTagWord(c);
      std::uint32_t spins = 0;
      std::uint64_t start = 0;
      Word seen = 0;
      for (;;) {
        seen = Mem::loadAcquire(chunkTag);
        if (layout_.accepts(seen, expected)) break;
        if (layout_.isLater(seen, generation_, epoch)) {
          wait.status = Status::kOverwritten;
          wait.seen = seen;
          observer_.overwriteSeen(source, step, epoch, slot, seen);
          return wait;
        }
        if (!keepWaiting(wait, spins, start, chunkTag, seen)) return wait;
      }
      for (int i = layout_.chunkBegin(c); i < layout_.chunkBegin(c + 1); ++i) {
        out[i] = Mem::loadRelaxed(pair + layout_.payloadAt(i));
      }
      // The payload loads stay before the re-read: a writer that came round meanwhile shows.
      Mem::fenceAcquire();
      const Word again = Mem::loadRelaxed(chunkTag);
      if (c == 0 || (took == after && seen != took)) {
        took = seen;
        after = again;
      } else if (took == after && again != seen) {
        after = again;
      }
    }
    *tag = took;
    *tagAfter = after;
    wait.seen = took;
    return wait;
  }

  // Tells `source` that this rank is done with its pair of `epoch` (and every earlier one): the
  // release orders this rank's reads of the slot before the writer's next store to it.
  PEERCONF_HD void acknowledge(int source, std::uint32_t epoch) {
    Mem::storeRelease(buffers_[source] + layout_.ackWord(rank_), layout_.tag(generation_, epoch));
  }

  // Zero-then-push only: zeroes the payload of the slots the pairs of `epoch` land in. Without a
  // fence against the peers' pushes the zeroing may land after them; the model waits for each
  // pair to arrive and then zeroes it, the interleaving that breaks the layout.
  PEERCONF_HD Wait zeroReceiveSlots(std::uint64_t step, std::uint32_t epoch) {
    const int slot = layout_.slotOf(epoch);
    const Word expected = layout_.tag(generation_, epoch);
    for (int k = 1; k < layout_.ranks; ++k) {
      const int source = (rank_ + layout_.ranks - k) % layout_.ranks;
      Word* pair = buffers_[rank_] + layout_.pairWord(slot, source);
      const Word* lastTag = pair + layout_.chunkTagWord(layout_.chunks() - 1);
      Wait wait = where(WaitFor::kArrival, source, slot, epoch, step);
      std::uint32_t spins = 0;
      std::uint64_t start = 0;
      Word seen = 0;
      for (;;) {
        seen = Mem::loadAcquire(lastTag);
        if (seen == expected) break;
        if (!keepWaiting(wait, spins, start, lastTag, seen)) return wait;
      }
      observer_.zeroed(source, step, epoch, slot, seen);
      for (int i = 0; i < layout_.payloadWords; ++i) {
        Mem::storeRelaxed(pair + layout_.payloadAt(i), 0);
      }
    }
    return where(WaitFor::kNothing, -1, slot, epoch, step);
  }

  // Tells every rank (this one included) to stop waiting: this rank gave up.
  PEERCONF_HD void abort() {
    const Word word = makeTag(generation_, kAbortBit | static_cast<std::uint32_t>(rank_));
    for (int r = 0; r < layout_.ranks; ++r) {
      Mem::storeRelease(buffers_[r] + layout_.abortWord(), word);
    }
  }

  // The rank that aborted this run, or -1. Abort words of other generations are ignored.
  PEERCONF_HD int abortedBy() const {
    const Word word = Mem::loadAcquire(buffers_[rank_] + layout_.abortWord());
    if (tagGeneration(word) != generation_ || (tagEpoch(word) & kAbortBit) == 0) return -1;
    return static_cast<int>(tagEpoch(word) & ~kAbortBit);
  }

 private:
  PEERCONF_HD Wait where(WaitFor what, int peer, int slot, std::uint32_t epoch,
                         std::uint64_t step) const {
    Wait wait;
    wait.what = what;
    wait.rank = rank_;
    wait.peer = peer;
    wait.slot = slot;
    wait.epoch = epoch;
    wait.step = step;
    return wait;
  }

  // One more round of a wait: false (with `wait` filled in) once another rank aborted or the
  // deadline passed. The clock and the abort word are read every 64 rounds.
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
      } else if (now - start > timeoutNs_) {
        wait.status = Status::kTimeout;
        wait.seen = seen;
        return false;
      }
    }
    Mem::pause(spins, word, seen);
    return true;
  }

  // Chunk `chunk`'s payload words (the reference: the whole payload, after the tag word).
  PEERCONF_HD void storePayload(Word* pair, const Word* payload, int chunk) const {
    for (int i = layout_.chunkBegin(chunk); i < layout_.chunkBegin(chunk + 1); ++i) {
      Mem::storeRelaxed(pair + layout_.payloadAt(i), payload[i]);
    }
  }

  PEERCONF_HD void hold(std::uint64_t ns) const {
    const std::uint64_t until = Mem::nowNs() + ns;
    std::uint32_t spins = 0;
    while (Mem::nowNs() < until) Mem::pause(++spins, nullptr, 0);
  }

  Layout layout_;
  int rank_;
  std::uint32_t generation_;
  Word* const* buffers_;
  std::uint64_t timeoutNs_;
  Observer& observer_;
};

}  // namespace peerconf::layout
