// The low-latency layout (issue 29): NCCL's LL protocol with a deterministic guarantee, written
// against the public protocol API like a team's own layout (register.h). Every 8-byte store
// carries 4 bytes of payload and the step's 32-bit epoch (not a hash), so each word validates
// itself: the reader waits word by word until the word holds this step's epoch, and no fence, tag
// or release orders anything (relaxed stores and loads: one atomic 8-byte store keeps a word's
// data and epoch together). A 64-bit payload word travels as two such words (low half, high half).
//
// No stale word can pass:
//   - within a buffer's life, a slot holds either this step's words or those of the step that
//     used it last, `kParities` epochs earlier; the reader accepts the exact epoch only (the next
//     use's is "overwritten", C6);
//   - what an earlier life of the buffer left (its words may carry the very epochs this life
//     uses) is wiped by initOwn before the agreement that opens the buffer to its peers: each rank
//     writes its own region's words with an epoch no step of this life reaches, kWipeDistance
//     after the first. Race free (no peer writes before the agreement) and once a life, not a
//     per-step zeroing;
//   - the 32-bit epoch wraps: the flags compare the full 32 bits modulo 2^32, a slot's stale
//     words are always `kParities` epochs old (never equal to this step's, across the wrap too),
//     and the wipe's epoch is 2^31 steps away from every step of a run shorter than 2^31 - 2
//     steps. A longer run would reach the wipe's epoch on a slot that was written since: harmless,
//     as the slot no longer holds it; the bound is stated for the unwritten slot of a dead writer.
// Flow control, as counter-flags (ci/examples/protocol-layout): the slots are double-buffered by
// the epoch's parity and the writer never waits for an acknowledgement; the workloads' own reads
// keep it within one step of every reader.
//
// Buffer map of one rank (64-bit words):
//   line 0            the abort word (the protocol API's rule)
//   line 1 on         data[p][s] for parity p in {0, 1}, source s: 2 * payloadWords LL words
//
// Kinds: kCorrect, and two negative controls: kNoInit, without the initOwn hook: with an earlier
// buffer's words for the same epochs in memory (a scenario's `prefill: earlier-buffer`), a reader
// takes the earlier buffer's payload (C7); kFirstWordOnly, whose reader waits for the epoch of a
// pair's first word only and takes the others as they are (the first word as the pair's flag),
// while its writer is modelled stalled for a `window` after that first word: the reader takes
// the slot's older words before the writer stored the pair, which the payload shows only when it
// differs from the older one (C7: the history replay's timing shows it always).
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
#include "layout/workloads.h"

namespace peerconf::layout {

enum class LowLatencyKind : std::uint8_t { kCorrect, kNoInit, kFirstWordOnly };

struct LowLatency : LayoutDefaults {
  LowLatencyKind kind = LowLatencyKind::kCorrect;

  static constexpr int kParities = 2;
  // LL words per payload word: its low and high halves.
  static constexpr int kHalves = 2;
  // How far from the first step's epoch the wipe's epoch is.
  static constexpr std::uint32_t kWipeDistance = 0x80000000u;

  PEERCONF_HD static constexpr Word llWord(std::uint32_t data, std::uint32_t epoch) {
    return (static_cast<Word>(epoch) << 32) | data;
  }
  // LL word `half` (0: low, 1: high) of payload word `value`.
  PEERCONF_HD static constexpr Word llHalf(Word value, int half, std::uint32_t epoch) {
    return llWord(static_cast<std::uint32_t>(half == 0 ? value : value >> 32), epoch);
  }
  PEERCONF_HD static constexpr std::uint32_t epochOf(Word word) {
    return static_cast<std::uint32_t>(word >> 32);
  }
  PEERCONF_HD static constexpr int parityOf(std::uint32_t epoch) {
    return static_cast<int>(epoch & 1u);
  }
  PEERCONF_HD static std::size_t dataWord(const Shape& shape, int parity, int source) {
    return static_cast<std::size_t>(kLineWords) +
           static_cast<std::size_t>(parity * shape.ranks + source) *
               static_cast<std::size_t>(kHalves * shape.payloadWords);
  }
  // What identifies a pair for C7 (the words carry no separate tag): this buffer's tag of the
  // epoch every word of it carries.
  PEERCONF_HD static Word pairTag(std::uint32_t generation, std::uint32_t epoch) {
    return makeTag(generation, epoch);
  }

  // Not two collectives in flight: its only flow control is the workload's own reads, which keep
  // a writer within one epoch of its readers; two collectives a step move it two epochs, and A's
  // next push would land on A's pair of the parity before it was read.
  bool supports(Workload workload) const { return !twoInFlight(workload); }
  const char* unsupportedWhy(Workload) const {
    return "its only flow control is the workload's own reads, which keep a writer within one "
           "epoch of its readers, and two collectives a step move it two: A's next pair would "
           "land on A's unread pair of the same parity";
  }

  const char* invalidReason(const Shape& shape) const {
    if (shape.ranks < 1 || shape.ranks > 1024) return "ranks must be between 1 and 1024";
    if (shape.depth != kParities) return "low-latency double-buffers: depth must be 2";
    if (shape.payloadWords < 1 || shape.payloadWords > kMaxPayloadWords) {
      return "payload must be between 1 and 32 words";
    }
    return nullptr;
  }
  std::size_t bytes(const Shape& shape) const {
    return dataWord(shape, kParities, 0) * sizeof(Word);
  }
  int slots(const Shape&) const { return kParities; }

  // The hook: every word of this rank's own region gets an epoch no step of this life reaches,
  // before any peer may write (kNoInit leaves the earlier life's words).
  template <class Mem>
  void initOwn(const Context& context, std::uint32_t startEpoch) const {
    if (kind == LowLatencyKind::kNoInit) return;
    Word* own = context.buffers[context.rank];
    const Word wiped = llWord(0, startEpoch + kWipeDistance);
    const std::size_t end = dataWord(context.shape, kParities, 0);
    for (std::size_t w = dataWord(context.shape, 0, 0); w < end; ++w) {
      Access<Mem>::template store<Order::kRelaxed>(own + w, wiped);
    }
  }

  // What an earlier life of the buffer left in a slot (a scenario's `prefill:`).
  void writeEarlierPair(const Shape& shape, Word* own, int source, int reader,
                        std::uint32_t generation, std::uint32_t epoch) const {
    Word* data = own + dataWord(shape, parityOf(epoch), source);
    for (int i = 0; i < shape.payloadWords; ++i) {
      const Word word = shape.values.natural(generation, source, reader, epoch, i);
      for (int h = 0; h < kHalves; ++h) {
        data[static_cast<std::ptrdiff_t>(kHalves) * i + h] = llHalf(word, h, epoch);
      }
    }
  }

  template <class Mem, class Observer>
  class Rank : public RankBase<Mem, Observer> {
    using Base = RankBase<Mem, Observer>;
    using A = Access<Mem>;

   public:
    PEERCONF_HD Rank(const LowLatency& layout, const Context& context, Observer& observer)
        : Base(context, observer), kind_(layout.kind) {}

    PEERCONF_HD int period() const { return kParities; }

    // Stores every word of the payload with the step's epoch beside it: relaxed, no fence, no tag.
    // The pair is complete, and a reader can take it, only once its last word is stored, so the
    // events C7 times a take against (payload stored, the publishing word next) are recorded
    // just before that store: after it, a reader in another process could take the pair before
    // the writer's clock said so (seen under mpirun).
    PEERCONF_HD Wait push(int dest, std::uint64_t step, std::uint32_t epoch, const Word* payload) {
      const Shape& shape = this->shape();
      const int parity = parityOf(epoch);
      Word* data = this->buffer(dest) + dataWord(shape, parity, this->rank());
      this->observer().pushing(dest, step, epoch, parity, 0);
      const int words = kHalves * shape.payloadWords;
      for (int i = 0; i < words; ++i) {
        if (i == words - 1) {
          this->observer().payloadStored(dest, step);
          this->observer().tagStoring(dest, step);
        }
        A::template store<Order::kRelaxed>(data + i,
                                           llHalf(payload[i / kHalves], i % kHalves, epoch));
        // kFirstWordOnly: the writer stalls after the word its readers take for the flag.
        if (i == 0 && kind_ == LowLatencyKind::kFirstWordOnly) this->hold(shape.windowNs);
      }
      const Word tag = pairTag(this->generation(), epoch);
      this->observer().pushed(dest, step, epoch, parity, tag);
      return this->where(WaitFor::kNothing, dest, parity, epoch, step);
    }

    // Waits for every word of `source`'s pair of `epoch`, each until it carries that epoch.
    PEERCONF_HD Wait read(int source, std::uint64_t step, std::uint32_t epoch, Word* out,
                          Taken& taken) {
      const Shape& shape = this->shape();
      const int parity = parityOf(epoch);
      const Word* data = this->buffer(this->rank()) + dataWord(shape, parity, source);
      Wait wait = this->where(WaitFor::kPair, source, parity, epoch, step);
      const std::uint32_t next = epoch + kParities;
      for (int i = 0; i < kHalves * shape.payloadWords; ++i) {
        Word seen = 0;
        if (i > 0 && kind_ == LowLatencyKind::kFirstWordOnly) {
          // PLANTED DEFECT: the first word stood for the pair; this one is taken as it is.
          seen = A::template load<Order::kRelaxed>(data + i);
        } else if (!this->waitUntil(
                       wait, data + i,
                       [](const Word* w) { return A::template load<Order::kRelaxed>(w); },
                       [&](Word value) {
                         return epochOf(value) == epoch || epochOf(value) == next;
                       },
                       seen)) {
          return wait;
        }
        if (epochOf(seen) == next) {  // the writer came round again: this step's pair is gone
          wait.status = Status::kOverwritten;
          wait.seen = pairTag(this->generation(), next);
          this->observer().overwriteSeen(source, step, epoch, parity, wait.seen);
          return wait;
        }
        const Word half = seen & 0xffffffffu;
        out[i / kHalves] = i % kHalves == 0 ? half : out[i / kHalves] | (half << 32);
      }
      taken.tag = pairTag(this->generation(), epoch);
      taken.tagAfter = taken.tag;
      taken.expected = taken.tag;
      taken.later = false;
      wait.seen = taken.tag;
      return wait;
    }

    // Nothing to acknowledge: the writer never waits for one.
    PEERCONF_HD void acknowledge(int, std::uint64_t, std::uint32_t) {}

   private:
    LowLatencyKind kind_;
  };
};

}  // namespace peerconf::layout
