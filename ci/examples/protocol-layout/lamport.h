// myteam/lamport: a Lamport-style one-shot layout (TensorRT-LLM's and FlashInfer's low-latency
// all-reduce) written against peerconf's protocol API: no flag, no tag and no acknowledgement.
// Every data word is its own flag: a slot is armed with a sentinel real data never takes (the
// fp64 -0.0 word; a payload word equal to it is canonicalized to +0.0, so values are delivered,
// not bits), a reader waits until no word of its slot holds the sentinel, and after reading the
// pair of step s it re-arms its own slot of step s + 2 (the one it read at step s - 1). Three slots
// by the step (SlotIndexing::kOwn, any count a power of two or not): a writer pushes step s + 2
// only after it read the reader's pair of s + 1, which the reader pushed after re-arming.
// Reads and pushes carry no tag (Taken::untagged, kNoTag): C6/C7 judge them by payload identity
// (writer, step, slot); the re-arms are stores that are not pushes (rearming/rearmed).
//
// Buffer map of one rank (64-bit words):
//   line 0          the abort word (the protocol API's rule)
//   line 1 on       data[k][s]: slot k < slots, source s: payloadWords words
//
// The broken variants, each a control under myteam/ (scenarios/lamport-control-*.yaml):
//   kRearmPeer   the writer re-arms its slot of step s - 1 in the READER's buffer right after
//                pushing step s, before the reader may have read it (C6: "re-armed peer P's slot")
//   kTwoSlots    two slots instead of three: the re-arm after step s clears the slot a fast writer
//                may already have filled with step s + 1 (C6 on the reader's own slot)
//   kNoArm       no arming in initOwn: an earlier life's words (or the harness's poison) are not
//                the sentinel and pass for this run's pair (C7)
//   kEpochSlots  slots by the 32-bit epoch mod 3: 2^32 is not a multiple of 3, so at the wrap two
//                consecutive steps share a slot (C7)
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/hd.h"
#include "layout/mem_ops.h"
#include "layout/observer.h"
#include "layout/payload.h"
#include "layout/rank_base.h"
#include "layout/register.h"
#include "layout/wait.h"

namespace myteam {

enum class LamportKind { kCorrect, kRearmPeer, kTwoSlots, kNoArm, kEpochSlots };

struct Lamport : peerconf::layout::LayoutDefaults {
  LamportKind kind = LamportKind::kCorrect;

  // The sentinel: the fp64 -0.0 word (real data is canonicalized off it).
  static constexpr peerconf::layout::Word kSentinel = peerconf::layout::Word{1} << 63;

  peerconf::layout::SlotIndexing slotIndexing() const {
    return peerconf::layout::SlotIndexing::kOwn;
  }
  PEERCONF_HD static int slotCount(LamportKind kind) {
    return kind == LamportKind::kTwoSlots ? 2 : 3;
  }
  // The slot of step `step` (epoch `epoch`): by the step, or (kEpochSlots) by the 32-bit epoch.
  PEERCONF_HD static int slotOf(LamportKind kind, std::uint64_t step, std::uint32_t epoch) {
    const auto n = static_cast<std::uint64_t>(slotCount(kind));
    return static_cast<int>(kind == LamportKind::kEpochSlots ? epoch % n : step % n);
  }
  PEERCONF_HD static std::size_t dataWord(const peerconf::layout::Shape& shape, int slot,
                                          int source) {
    return peerconf::layout::kLineWords + static_cast<std::size_t>(slot * shape.ranks + source) *
                                              static_cast<std::size_t>(shape.payloadWords);
  }

  const char* invalidReason(const peerconf::layout::Shape& shape) const {
    if (shape.ranks < 1 || shape.ranks > 1024) return "ranks must be between 1 and 1024";
    if (shape.depth != slotCount(kind)) {
      return kind == LamportKind::kTwoSlots
                 ? "this control runs two slots: depth must be 2"
                 : "lamport runs three slots by the step: depth must be 3";
    }
    if (shape.payloadWords < 1 || shape.payloadWords > peerconf::layout::kMaxPayloadWords) {
      return "payload must be between 1 and 32 words";
    }
    return nullptr;
  }
  std::size_t bytes(const peerconf::layout::Shape& shape) const {
    return dataWord(shape, slotCount(kind), 0) * sizeof(peerconf::layout::Word);
  }
  int slots(const peerconf::layout::Shape&) const { return slotCount(kind); }

  // The hook: every slot of this rank's buffer armed before any peer may write (kNoArm: none).
  template <class Mem>
  void initOwn(const peerconf::layout::Context& context, std::uint32_t) const {
    if (kind == LamportKind::kNoArm) return;
    peerconf::layout::Word* own = context.buffers[context.rank];
    const std::size_t end = dataWord(context.shape, slotCount(kind), 0);
    for (std::size_t w = dataWord(context.shape, 0, 0); w < end; ++w) {
      peerconf::layout::Access<Mem>::template store<peerconf::layout::Order::kRelaxed>(own + w,
                                                                                       kSentinel);
    }
  }

  // What an earlier life of the buffer left in a slot (a scenario's `prefill:`).
  void writeEarlierPair(const peerconf::layout::Shape& shape, peerconf::layout::Word* own,
                        int source, int reader, std::uint32_t generation,
                        std::uint32_t epoch) const {
    const int slot = static_cast<int>(epoch % static_cast<std::uint32_t>(slotCount(kind)));
    for (int i = 0; i < shape.payloadWords; ++i) {
      own[dataWord(shape, slot, source) + static_cast<std::size_t>(i)] =
          shape.values.natural(generation, source, reader, epoch, i);
    }
  }

  template <class Mem, class Observer>
  class Rank : public peerconf::layout::RankBase<Mem, Observer> {
    using Base = peerconf::layout::RankBase<Mem, Observer>;
    using A = peerconf::layout::Access<Mem>;
    using Word = peerconf::layout::Word;
    using Order = peerconf::layout::Order;
    using Scope = peerconf::layout::Scope;

   public:
    PEERCONF_HD Rank(const Lamport& layout, const peerconf::layout::Context& context,
                     Observer& observer)
        : Base(context, observer), kind_(layout.kind) {}

    PEERCONF_HD int period() const { return slotCount(kind_); }
    // -0.0 (the sentinel) arrives as +0.0: values, not bits.
    PEERCONF_HD peerconf::layout::Delivery delivery() const {
      return peerconf::layout::Delivery::kValues;
    }

    // Stores the payload word by word into the destination's slot, each word its own flag (a
    // release each: the reader's re-arm that the workload ordered before this push stays before
    // it). No wait: three slots and the workload's reads keep the writer in bounds.
    PEERCONF_HD peerconf::layout::Wait push(int dest, std::uint64_t step, std::uint32_t epoch,
                                            const Word* payload) {
      const int slot = slotOf(kind_, step, epoch);
      Word* data = this->buffer(dest) + dataWord(this->shape(), slot, this->rank());
      Observer& observer = this->observer();
      observer.pushing(dest, step, epoch, slot, 0);
      // No tag to store last: the pair is complete word by word, so its times are taken first.
      observer.payloadStored(dest, step);
      observer.tagStoring(dest, step);
      for (int i = 0; i < this->shape().payloadWords; ++i) {
        const Word w = payload[i] == kSentinel ? 0 : payload[i];  // canonicalize -0.0
        A::template store<Order::kRelease, Scope::kSystem>(data + i, w);
      }
      observer.pushed(dest, step, epoch, slot, peerconf::layout::kNoTag);
      if (kind_ == LamportKind::kRearmPeer && step > 0) {
        // The bug: the reader's slot of step - 1 re-armed from here, read or not.
        rearm(dest, this->rank(), slotOf(kind_, step - 1, epoch - 1), step, epoch);
      }
      return this->where(peerconf::layout::WaitFor::kNothing, dest, slot, epoch, step);
    }

    // Waits until no word of `source`'s slot holds the sentinel; the words are the pair.
    PEERCONF_HD peerconf::layout::Wait read(int source, std::uint64_t step, std::uint32_t epoch,
                                            Word* out, peerconf::layout::Taken& taken) {
      const int slot = slotOf(kind_, step, epoch);
      const Word* data = this->buffer(this->rank()) + dataWord(this->shape(), slot, source);
      peerconf::layout::Wait wait =
          this->where(peerconf::layout::WaitFor::kPair, source, slot, epoch, step);
      for (int i = 0; i < this->shape().payloadWords; ++i) {
        Word seen = 0;
        if (!this->waitUntil(
                wait, data + i,
                [](const Word* w) { return A::template load<Order::kAcquire, Scope::kSystem>(w); },
                [](Word value) { return value != kSentinel; }, seen)) {
          return wait;
        }
        out[i] = seen;
      }
      taken = peerconf::layout::Taken::untagged();
      return wait;
    }

    // No acknowledgement: the reader re-arms its own slot of the previous step (read then; with
    // three slots it is step + 2's) for `source`, off the critical path (kTwoSlots: that slot is
    // step + 1's, which a fast writer may already have filled; kRearmPeer: the writer does it,
    // too early).
    PEERCONF_HD void acknowledge(int source, std::uint64_t step, std::uint32_t epoch) {
      if (kind_ == LamportKind::kRearmPeer) return;
      const auto ahead = static_cast<std::uint32_t>(slotCount(kind_) - 1);
      rearm(this->rank(), source, slotOf(kind_, step + ahead, epoch + ahead), step, epoch);
    }

   private:
    // Arms `source`'s slot `slot` in `owner`'s buffer with the sentinel: a store that is not a
    // push, told to the observer as such (what it overwrote is the memory model's to say).
    PEERCONF_HD void rearm(int owner, int source, int slot, std::uint64_t step,
                           std::uint32_t epoch) {
      Word* data = this->buffer(owner) + dataWord(this->shape(), slot, source);
      Observer& observer = this->observer();
      observer.rearming(owner, source, slot, step, epoch, 0);
      for (int i = 0; i < this->shape().payloadWords; ++i) {
        A::template store<Order::kRelaxed, Scope::kSystem>(data + i, kSentinel);
      }
      observer.rearmed(owner, source, slot, step, epoch);
    }

    LamportKind kind_;
  };
};

// The layout and its controls by name, for the host registration (main.cc) and the GPU one
// (lamport.cu) alike.
struct LamportEntry {
  const char* name;
  const char* what;
  LamportKind kind;
  bool control;
};
inline constexpr LamportEntry kLamportEntries[] = {
    {"myteam/lamport",
     "Lamport-style one-shot: data words are their own flags, three slots by the step, the "
     "reader re-arms with a -0.0 sentinel",
     LamportKind::kCorrect, false},
    {"myteam/lamport-rearm-peer",
     "control: the writer re-arms the reader's slot of the previous step before it was read (C6)",
     LamportKind::kRearmPeer, true},
    {"myteam/lamport-two-slots",
     "control: two slots instead of three, the re-arm clears what a fast writer pushed (C6)",
     LamportKind::kTwoSlots, true},
    {"myteam/lamport-no-arm", "control: no arming in initOwn, an earlier life's words pass (C7)",
     LamportKind::kNoArm, true},
    {"myteam/lamport-epoch-slots",
     "control: slots by the 32-bit epoch mod 3, two steps share a slot at the wrap (C7)",
     LamportKind::kEpochSlots, true},
};

}  // namespace myteam
