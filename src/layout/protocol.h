// The reference layout family, written against the public protocol API (rank_base.h, wait.h,
// observer.h, mem_ops.h, payload.h) as its first user: the reference layout, chunk-tagged, and the
// broken controls (layout.h's LayoutKind). Push a pair into a peer's slot once the slot's previous
// pair was acknowledged, wait for and read a pair in this rank's own buffer (re-checking its tag
// after the payload), acknowledge it. Every wait is bounded (RankBase::keepWaiting).
//
// No allocation, exceptions, std::vector or threads here: the same code runs on host threads
// (ClockedMemOps, HostMemOps) and in GPU kernels (src/gpu_kernels/protocol_kernels.cu).
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/layout.h"
#include "layout/mem_ops.h"
#include "layout/observer.h"
#include "layout/payload.h"
#include "layout/rank_base.h"
#include "layout/tag.h"
#include "layout/wait.h"

namespace peerconf::layout {

// One rank's end of the reference family. `buffers[r]` is rank r's buffer as this rank maps it
// (its own at buffers[rank]); every rank uses the same layout and generation.
template <PEERCONF_MEM_OPS Mem, class Observer = NullObserver>
class Protocol : public RankBase<Mem, Observer> {
  using Base = RankBase<Mem, Observer>;
  using A = Access<Mem>;

 public:
  PEERCONF_HD Protocol(const Layout& layout, int rank, std::uint32_t generation,
                       Word* const* buffers, std::uint64_t timeoutNs, Observer& observer)
      : Base(Context{layout.shape(), rank, generation, buffers, timeoutNs}, observer),
        layout_(layout) {}
  // The same from a run's context, whose shape also says what the payload carries.
  PEERCONF_HD Protocol(const Layout& layout, const Context& context, Observer& observer)
      : Base(context, observer), layout_(layout) {}

  PEERCONF_HD const Layout& layout() const { return layout_; }
  // Slots per source: the period of a slot's epochs (classifyTaken's later-epoch payloads).
  PEERCONF_HD int period() const { return layout_.slots(); }

  // Pushes `payload` (layout().payloadWords words) as the pair of `epoch` (step `step` of this
  // run) into `dest`'s slot. From step `depth` on, that slot held this rank's pair of epoch
  // - depth, so the push first waits until `dest` has acknowledged that epoch (C6).
  PEERCONF_HD Wait push(int dest, std::uint64_t step, std::uint32_t epoch, const Word* payload) {
    const int slot = layout_.slotOf(epoch);
    Word ackSeen = 0;
    if (step >= static_cast<std::uint64_t>(layout_.depth)) {
      const std::uint32_t previous = epoch - static_cast<std::uint32_t>(layout_.depth);
      Wait wait = this->where(WaitFor::kAck, dest, slot, epoch, step);
      const std::uint32_t generation = this->generation();
      const Layout& l = layout_;
      if (!this->waitUntil(
              wait, this->buffer(this->rank()) + layout_.ackWord(dest),
              [](const Word* w) { return A::template load<Order::kAcquire>(w); },
              [&](Word seen) { return l.acknowledges(seen, generation, previous); }, ackSeen)) {
        return wait;
      }
    }
    Word* pair = this->buffer(dest) + layout_.pairWord(slot, this->rank());
    const Word tag = layout_.tag(this->generation(), epoch);
    Observer& observer = this->observer();
    observer.pushing(dest, step, epoch, slot, ackSeen);
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
        if (last) observer.tagStoring(dest, step);
        A::template store<Order::kRelease>(chunkTag, tag);
        this->hold(layout_.windowNs);
        storePayload(pair, payload, c);
        if (last) observer.payloadStored(dest, step);
      } else {
        storePayload(pair, payload, c);
        if (last) {
          observer.payloadStored(dest, step);
          observer.tagStoring(dest, step);
        }
        if (layout_.tagReleased()) {
          A::template store<Order::kRelease>(chunkTag, tag);
        } else {
          // relaxed-tag: nothing orders the payload before it; device-scope-fence: a fence that
          // orders it only for this device's threads, not for the peer that reads it
          if (layout_.deviceScopeFence()) A::template fence<Order::kRelease, Scope::kDevice>();
          A::template store<Order::kRelaxed>(chunkTag, tag);
        }
      }
    }
    observer.pushed(dest, step, epoch, slot, tag);
    if (layout_.rearmsAhead()) rearmNext(dest, step, epoch);
    return this->where(WaitFor::kNothing, dest, slot, epoch, step);
  }

  // Waits for `source`'s pair of `epoch` in this rank's buffer and copies its payload to `out`;
  // `taken` gets the tag it took, the tag re-read after the payload and the step's tag (a caller
  // compares them and the payload: classifyTaken). kOverwritten: the slot already holds a later
  // epoch's pair, so this epoch's was lost before it was read.
  PEERCONF_HD Wait read(int source, std::uint64_t step, std::uint32_t epoch, Word* out,
                        Taken& taken) {
    const int slot = layout_.slotOf(epoch);
    const Word* pair = this->buffer(this->rank()) + layout_.pairWord(slot, source);
    const std::uint32_t generation = this->generation();
    const Word expected = layout_.tag(generation, epoch);
    Wait wait =
        this->where(WaitFor::kPair, layout_.pairWaitPeer(source, this->rank()), slot, epoch, step);
    if (layout_.acksBeforeRead()) release(source, step, epoch);  // the broken order
    // Chunk by chunk (the reference: one chunk): wait for the chunk's own tag, load its payload,
    // then re-read that tag. The pair's tag is what every chunk showed; a chunk whose tag
    // changed during its read makes the re-read differ.
    Word took = 0;
    Word after = 0;
    const Layout& l = layout_;
    for (int c = 0; c < layout_.chunks(); ++c) {
      const Word* chunkTag = pair + layout_.chunkTagWord(c);
      Word seen = 0;
      bool later = false;
      const bool arrived = this->waitUntil(
          wait, chunkTag,
          [&l](const Word* w) {
            return l.tagAcquired() ? A::template load<Order::kAcquire>(w)
                                   : A::template load<Order::kRelaxed>(w);
          },
          [&](Word value) {
            later = !l.accepts(value, expected) && l.isLater(value, generation, epoch);
            return later || l.accepts(value, expected);
          },
          seen);
      if (!arrived) return wait;
      if (later) {
        wait.status = Status::kOverwritten;
        wait.seen = seen;
        this->observer().overwriteSeen(source, step, epoch, slot, seen);
        return wait;
      }
      for (int i = layout_.chunkBegin(c); i < layout_.chunkBegin(c + 1); ++i) {
        out[i] = A::template load<Order::kRelaxed>(pair + layout_.payloadAt(i));
      }
      // The payload loads stay before the re-read: a writer that came round meanwhile shows.
      A::template fence<Order::kAcquire>();
      const Word again = A::template load<Order::kRelaxed>(chunkTag);
      if (c == 0 || (took == after && seen != took)) {
        took = seen;
        after = again;
      } else if (took == after && again != seen) {
        after = again;
      }
    }
    taken.tag = took;
    taken.tagAfter = after;
    taken.expected = expected;
    taken.later = layout_.isLater(took, generation, epoch);
    wait.seen = took;
    return wait;
  }

  // Tells `source` that this rank is done with its pair of `epoch` (and every earlier one): the
  // release orders this rank's reads of the slot before the writer's next store to it.
  PEERCONF_HD void acknowledge(int source, std::uint64_t step, std::uint32_t epoch) {
    if (!layout_.acksBeforeRead()) release(source, step, epoch);
  }

  // The acknowledgement's store: `source` may reuse the slot of this rank's pair of `epoch`.
  PEERCONF_HD void release(int source, std::uint64_t step, std::uint32_t epoch) {
    const Word word = layout_.tag(this->generation(), epoch);
    A::template store<Order::kRelease>(this->buffer(source) + layout_.ackWord(this->rank()), word);
    this->observer().acknowledged(source, step, epoch, word);
  }

  // Before the first read phase: zero-then-push zeroes its receive slots (zeroReceiveSlots).
  PEERCONF_HD Wait beforeReads(std::uint64_t step, std::uint32_t epoch) {
    if (!layout_.zeroesReceiveSlots() || step != 0) return Wait{};
    return zeroReceiveSlots(step, epoch);
  }

  // Zero-then-push only: zeroes the payload of the slots the pairs of `epoch` land in. Without a
  // fence against the peers' pushes the zeroing may land after them; the model waits for each
  // pair to arrive and then zeroes it, the interleaving that breaks the layout.
  PEERCONF_HD Wait zeroReceiveSlots(std::uint64_t step, std::uint32_t epoch) {
    const int slot = layout_.slotOf(epoch);
    const Word expected = layout_.tag(this->generation(), epoch);
    const int ranks = this->ranks();
    for (int k = 1; k < ranks; ++k) {
      const int source = (this->rank() + ranks - k) % ranks;
      Word* pair = this->buffer(this->rank()) + layout_.pairWord(slot, source);
      Wait wait = this->where(WaitFor::kArrival, source, slot, epoch, step);
      Word seen = 0;
      if (!this->waitUntil(
              wait, pair + layout_.chunkTagWord(layout_.chunks() - 1),
              [](const Word* w) { return A::template load<Order::kAcquire>(w); },
              [&](Word value) { return value == expected; }, seen)) {
        return wait;
      }
      this->observer().zeroed(source, step, epoch, slot, seen);
      for (int i = 0; i < layout_.payloadWords; ++i) {
        A::template store<Order::kRelaxed>(pair + layout_.payloadAt(i), 0);
      }
    }
    return this->where(WaitFor::kNothing, -1, slot, epoch, step);
  }

 private:
  // rearm-before-read only: clears the payload of this rank's slot for epoch + 1 in `dest`'s
  // buffer without waiting for the acknowledgement of the pair still there (the broken part). A
  // store into a peer's buffer that is not a push: told to the observer as such, which learns
  // what it overwrote from the memory model on simulated time (no load here).
  PEERCONF_HD void rearmNext(int dest, std::uint64_t step, std::uint32_t epoch) {
    const int slot = layout_.slotOf(epoch + 1);
    Word* pair = this->buffer(dest) + layout_.pairWord(slot, this->rank());
    Observer& observer = this->observer();
    observer.rearming(dest, this->rank(), slot, step, epoch, 0);
    for (int i = 0; i < layout_.payloadWords; ++i) {
      A::template store<Order::kRelaxed>(pair + layout_.payloadAt(i), 0);
    }
    observer.rearmed(dest, this->rank(), slot, step, epoch);
  }

  // Chunk `chunk`'s payload words (the reference: the whole payload, after the tag word).
  PEERCONF_HD void storePayload(Word* pair, const Word* payload, int chunk) const {
    for (int i = layout_.chunkBegin(chunk); i < layout_.chunkBegin(chunk + 1); ++i) {
      A::template store<Order::kRelaxed>(pair + layout_.payloadAt(i), payload[i]);
    }
  }

  Layout layout_;
};

// Classifies a pair of the reference family (tests; the workloads classify what read() took).
PEERCONF_HD inline PairCheck classifyPair(const Layout& layout, std::uint32_t generation,
                                          int writer, int reader, std::uint32_t epoch, Word tag,
                                          Word tagAfter, const Word* words) {
  Taken taken{tag, tagAfter, layout.tag(generation, epoch), layout.isLater(tag, generation, epoch)};
  return classifyTaken(taken, generation, writer, reader, epoch, words, layout.payloadWords,
                       layout.slots());
}

}  // namespace peerconf::layout
