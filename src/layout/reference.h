// The reference layout family as a layout type of the protocol API (api.h): what the registry
// runs for "reference", "chunk-tagged" and the broken controls, one value a kind. Its rank is
// protocol.h's Protocol; its buffer map is layout.h's Layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/generation.h"
#include "layout/layout.h"
#include "layout/payload.h"
#include "layout/protocol.h"
#include "layout/rank_base.h"
#include "layout/register.h"

namespace peerconf::layout {

struct ReferenceFamily : LayoutDefaults {
  LayoutKind kind = LayoutKind::kReference;

  template <class Mem, class Observer>
  class Rank : public Protocol<Mem, Observer> {
   public:
    Rank(const ReferenceFamily& family, const Context& c, Observer& observer)
        : Protocol<Mem, Observer>(Layout::of(family.kind, c.shape), c, observer) {}
  };

  Layout of(const Shape& shape) const { return Layout::of(kind, shape); }
  const char* invalidReason(const Shape& shape) const { return of(shape).invalidReason(); }
  std::size_t bytes(const Shape& shape) const { return of(shape).bytes(); }
  int slots(const Shape& shape) const { return of(shape).slots(); }
  bool generationInUse(const Shape& shape, const Word* own, std::uint32_t generation) const {
    return layout::generationInUse(of(shape), own, generation);
  }
  // A whole pair (tag and payload) as an earlier run would have left it.
  void writeEarlierPair(const Shape& shape, Word* own, int source, int reader,
                        std::uint32_t generation, std::uint32_t epoch) const {
    const Layout layout = of(shape);
    Word* pair = own + layout.pairWord(layout.slotOf(epoch), source);
    for (int i = 0; i < layout.payloadWords; ++i) {
      __atomic_store_n(pair + layout.payloadAt(i),
                       shape.values.natural(generation, source, reader, epoch, i),
                       __ATOMIC_RELAXED);
    }
    for (int c = 0; c < layout.chunks(); ++c) {
      __atomic_store_n(pair + layout.chunkTagWord(c), layout.tag(generation, epoch),
                       __ATOMIC_RELAXED);
    }
  }
  void writeEarlierAck(const Shape& shape, Word* own, int reader, std::uint32_t generation,
                       std::uint32_t epoch) const {
    const Layout layout = of(shape);
    __atomic_store_n(own + layout.ackWord(reader), layout.tag(generation, epoch), __ATOMIC_RELAXED);
  }
};

// How the planted abort checks below end a read phase: aborted by rank `by`, having read `seen`.
inline Wait abortedRead(int rank, std::uint64_t step, std::uint32_t epoch, Word seen, int by) {
  Wait wait;
  wait.status = Status::kAborted;
  wait.rank = rank;
  wait.epoch = epoch;
  wait.step = step;
  wait.seen = seen;
  wait.abortedBy = by;
  return wait;
}

// A negative control (layouts.cc: `abort-any-generation`): the reference protocol, but every read
// phase first looks at this rank's abort word by its abort bit alone, not its generation, so an
// abort word an earlier life of the buffer left there (a scenario's `prefill: earlier-abort`) stops
// a later run at once, as if one of its own ranks had given up. Host only (no GPU kernels).
struct AbortAnyGeneration : ReferenceFamily {
  template <class Mem, class Observer>
  class Rank : public ReferenceFamily::Rank<Mem, Observer> {
    using Base = ReferenceFamily::Rank<Mem, Observer>;

   public:
    Rank(const AbortAnyGeneration& family, const Context& c, Observer& observer)
        : Base(family, c, observer) {}

    Wait beforeReads(std::uint64_t step, std::uint32_t epoch) {
      const Word word = Mem::loadAcquire(this->buffer(this->rank()) + kAbortWord);
      // PLANTED DEFECT: the abort bit is honoured whatever generation the word carries.
      if ((tagEpoch(word) & kAbortBit) != 0) {
        return abortedRead(this->rank(), step, epoch, word,
                           static_cast<int>(tagEpoch(word) & ~kAbortBit));
      }
      return Base::beforeReads(step, epoch);
    }
  };
};

// A negative control (layouts.cc: `abort-bit-in-tag`): the reference protocol, but every read
// phase first asks "did a peer give up?" of the step's tag rather than of the abort word: the
// abort flag is the high bit of the low half in both, so once the epoch reaches 2^31 (a
// scenario's `start_epoch` near it) every tag looks like an abort, and every rank stops after the
// steps it made, though no rank of the run gave up (C8: an abort mid-run with no rank planned to
// stop). Host only (no GPU kernels).
struct AbortBitInTag : ReferenceFamily {
  template <class Mem, class Observer>
  class Rank : public ReferenceFamily::Rank<Mem, Observer> {
    using Base = ReferenceFamily::Rank<Mem, Observer>;

   public:
    Rank(const AbortBitInTag& family, const Context& c, Observer& observer)
        : Base(family, c, observer) {}

    Wait beforeReads(std::uint64_t step, std::uint32_t epoch) {
      const Word tag = this->layout().tag(this->generation(), epoch);
      // PLANTED DEFECT: the abort bit read off a word whose high bit is the epoch's.
      if ((tagEpoch(tag) & kAbortBit) != 0) {
        return abortedRead(this->rank(), step, epoch, tag,
                           static_cast<int>(tagEpoch(tag) & ~kAbortBit) % this->ranks());
      }
      return Base::beforeReads(step, epoch);
    }
  };
};

// A negative control (layouts.cc: `rearm-after-publish`): the reference protocol (one chunk, the
// tag released after the payload), but each push to `dest`, once its tag is released and a
// `window` later (housekeeping off the critical path), re-arms (clears the payload of) this rank's
// own receive slot of the previous step's pair from `dest`: a pair it has read and acknowledged,
// so in program order the clearing follows the read. But the release that published this push came
// before the clearing, so nothing orders the clearing before `dest`'s next push into that slot,
// which `dest` may make as soon as it has read this push: the clearing may land on that newer,
// unread pair. The push is reported to the observer when push() returns, after the clearing, so
// the recorded order shows every later push of `dest` after it (`dest` read this push first) and
// only the memory model (simulated time) says what the store overwrote (C6). Host only.
struct RearmAfterPublish : ReferenceFamily {
  template <class Mem, class Observer>
  class Rank : public ReferenceFamily::Rank<Mem, Observer> {
    using Base = ReferenceFamily::Rank<Mem, Observer>;
    using A = Access<Mem>;

   public:
    Rank(const RearmAfterPublish& family, const Context& c, Observer& observer)
        : Base(family, c, observer) {}

    Wait push(int dest, std::uint64_t step, std::uint32_t epoch, const Word* payload) {
      const Layout& layout = this->layout();
      const int slot = layout.slotOf(epoch);
      Word ackSeen = 0;
      if (step >= static_cast<std::uint64_t>(layout.depth)) {
        const std::uint32_t previous = epoch - static_cast<std::uint32_t>(layout.depth);
        Wait wait = this->where(WaitFor::kAck, dest, slot, epoch, step);
        const std::uint32_t generation = this->generation();
        if (!this->waitUntil(
                wait, this->buffer(this->rank()) + layout.ackWord(dest),
                [](const Word* w) { return A::template load<Order::kAcquire>(w); },
                [&](Word seen) { return layout.acknowledges(seen, generation, previous); },
                ackSeen)) {
          return wait;
        }
      }
      Word* pair = this->buffer(dest) + layout.pairWord(slot, this->rank());
      const Word tag = layout.tag(this->generation(), epoch);
      Observer& observer = this->observer();
      observer.pushing(dest, step, epoch, slot, ackSeen);
      for (int i = 0; i < layout.payloadWords; ++i) {
        A::template store<Order::kRelaxed>(pair + layout.payloadAt(i), payload[i]);
      }
      observer.payloadStored(dest, step);
      observer.tagStoring(dest, step);
      A::template store<Order::kRelease>(pair, tag);
      if (step > 0) {
        // PLANTED DEFECT: the clearing comes after the release that lets `dest` go on.
        this->hold(this->shape().windowNs);
        const int previous = layout.slotOf(epoch - 1);
        Word* own = this->buffer(this->rank()) + layout.pairWord(previous, dest);
        observer.rearming(this->rank(), dest, previous, step, epoch, 0);
        for (int i = 0; i < layout.payloadWords; ++i) {
          A::template store<Order::kRelaxed>(own + layout.payloadAt(i), 0);
        }
        observer.rearmed(this->rank(), dest, previous, step, epoch);
      }
      observer.pushed(dest, step, epoch, slot, tag);
      return this->where(WaitFor::kNothing, dest, slot, epoch, step);
    }
  };
};

// A negative control (layouts.cc: `last-rank-clears-at-start`): the reference protocol, but the
// last rank clears the payload of its receive slots of the first step when it enters the data
// plane, before its first push, with no barrier against its peers' first pushes: a store into its
// own buffer that is not a push (rearming/rearmed). Harmless when it runs first; when a lower rank
// pushes first, the clearing lands on that unread pair (C6, by the memory model on simulated time
// and by the recorded order on real time), and the last rank takes a cleared payload under the
// pair's tag (C7 in-band). Host only.
struct LastRankClearsAtStart : ReferenceFamily {
  template <class Mem, class Observer>
  class Rank : public ReferenceFamily::Rank<Mem, Observer> {
    using Base = ReferenceFamily::Rank<Mem, Observer>;
    using A = Access<Mem>;

   public:
    Rank(const LastRankClearsAtStart& family, const Context& c, Observer& observer)
        : Base(family, c, observer) {}

    Wait push(int dest, std::uint64_t step, std::uint32_t epoch, const Word* payload) {
      if (step == 0 && !cleared_ && this->rank() == this->ranks() - 1) {
        cleared_ = true;
        // PLANTED DEFECT: no barrier orders this before the peers' first pushes.
        const Layout& layout = this->layout();
        const int slot = layout.slotOf(epoch);
        for (int source = 0; source < this->ranks(); ++source) {
          if (source == this->rank()) continue;
          Word* pair = this->buffer(this->rank()) + layout.pairWord(slot, source);
          this->observer().rearming(this->rank(), source, slot, step, epoch, 0);
          for (int i = 0; i < layout.payloadWords; ++i) {
            A::template store<Order::kRelaxed>(pair + layout.payloadAt(i), 0);
          }
          this->observer().rearmed(this->rank(), source, slot, step, epoch);
        }
      }
      return Base::push(dest, step, epoch, payload);
    }

   private:
    bool cleared_ = false;
  };
};

}  // namespace peerconf::layout
