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
        Wait wait;
        wait.status = Status::kAborted;
        wait.rank = this->rank();
        wait.epoch = epoch;
        wait.step = step;
        wait.seen = word;
        wait.abortedBy = static_cast<int>(tagEpoch(word) & ~kAbortBit);
        return wait;
      }
      return Base::beforeReads(step, epoch);
    }
  };
};

}  // namespace peerconf::layout
