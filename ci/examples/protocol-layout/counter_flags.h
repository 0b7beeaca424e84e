// myteam/counter-flags: a vLLM-style layout written against peerconf's protocol API
// (layout/rank_base.h, mem_ops.h, observer.h, register.h). Each step's flag is a monotonically
// increasing counter (the step's epoch), and both the flags and the data are double-buffered by
// the counter's parity, so a writer never waits for an acknowledgement: the workload's own reads
// keep it at most one step ahead of every reader (a writer pushes step e+2 only after it read the
// reader's pair of e+1, which the reader pushed after it read e). Flags carry no buffer
// generation, as vLLM's do not: the buffer's earlier life is wiped instead, by the hook that
// initializes a rank's own flags before any peer may write (initOwn).
//
// Buffer map of one rank (64-bit words):
//   line 0                   the abort word (the protocol API's rule)
//   line 1 on                flag[p][s] for parity p in {0, 1}, source s: kFlagBit | epoch of the
//                            pair s last published into data slot p (0 = none)
//   after the flags, lines   data[p][s]: payloadWords words
//
// Two kinds, for the scenario files: kCorrect publishes each flag with a release store (system
// scope: the reader is another device), kRelaxedFlag stores it relaxed: the missing release before
// a flag, an ordering bug seen upstream. x86 keeps the stores in order, so only weak memory
// (peerconf
// --clock sim, or a GPU) shows it: a reader sees the new flag over the old payload (C7). kNoInit
// leaves out the initOwn hook: with an earlier buffer's flags for the same epochs in memory, a
// reader takes the earlier buffer's payload (C7).
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

using peerconf::layout::Access;
using peerconf::layout::Context;
using peerconf::layout::Order;
using peerconf::layout::Scope;
using peerconf::layout::Shape;
using peerconf::layout::Taken;
using peerconf::layout::Wait;
using peerconf::layout::WaitFor;
using peerconf::layout::Word;

enum class CounterFlagsKind { kCorrect, kRelaxedFlag, kNoInit };

struct CounterFlags : peerconf::layout::LayoutDefaults {
  CounterFlagsKind kind = CounterFlagsKind::kCorrect;

  static constexpr Word kFlagBit = Word{1} << 63;
  static constexpr int kParities = 2;

  // The flag of the pair of `epoch`: never 0, the value a wiped flag holds.
  PEERCONF_HD static constexpr Word flagOf(std::uint32_t epoch) { return kFlagBit | epoch; }
  PEERCONF_HD static constexpr int parityOf(std::uint32_t epoch) {
    return static_cast<int>(epoch & 1u);
  }

  PEERCONF_HD static std::size_t flagWord(const Shape& shape, int parity, int source) {
    return peerconf::layout::kLineWords + static_cast<std::size_t>(parity * shape.ranks + source);
  }
  PEERCONF_HD static std::size_t dataWord(const Shape& shape, int parity, int source) {
    const std::size_t flags = static_cast<std::size_t>(kParities * shape.ranks);
    const std::size_t first = peerconf::layout::kLineWords +
                              (flags + peerconf::layout::kLineWords - 1) /
                                  peerconf::layout::kLineWords * peerconf::layout::kLineWords;
    return first + static_cast<std::size_t>(parity * shape.ranks + source) *
                       static_cast<std::size_t>(shape.payloadWords);
  }

  // The buffer map.
  const char* invalidReason(const Shape& shape) const {
    if (shape.ranks < 1 || shape.ranks > 1024) return "ranks must be between 1 and 1024";
    if (shape.depth != 2) return "counter-flags double-buffers: depth must be 2";
    if (shape.payloadWords < 1 || shape.payloadWords > peerconf::layout::kMaxPayloadWords) {
      return "payload must be between 1 and 32 words";
    }
    return nullptr;
  }
  std::size_t bytes(const Shape& shape) const {
    return dataWord(shape, kParities, 0) * sizeof(Word);
  }
  int slots(const Shape&) const { return kParities; }

  // Not two collectives in flight: its only flow control is the workload's own reads (no
  // acknowledgements), which keep a writer within one epoch of its readers; two collectives a step
  // move it two, and a pair lands on the unread pair of its parity (C6 sees thousands).
  bool supports(peerconf::layout::Workload workload) const {
    return !peerconf::layout::twoInFlight(workload);
  }
  const char* unsupportedWhy(peerconf::layout::Workload) const {
    return "its only flow control is the workload's own reads, which keep a writer within one "
           "epoch of its readers, and two collectives a step move it two";
  }

  // The hook: this rank's flags wiped before any peer may write (kNoInit leaves them).
  template <class Mem>
  void initOwn(const Context& context, std::uint32_t) const {
    if (kind == CounterFlagsKind::kNoInit) return;
    Word* own = context.buffers[context.rank];
    for (int p = 0; p < kParities; ++p) {
      for (int s = 0; s < context.shape.ranks; ++s) {
        Access<Mem>::template store<Order::kRelaxed>(own + flagWord(context.shape, p, s), 0);
      }
    }
  }

  // What an earlier life of the buffer left in a slot (a scenario's `prefill:`).
  void writeEarlierPair(const Shape& shape, Word* own, int source, int reader,
                        std::uint32_t generation, std::uint32_t epoch) const {
    const int parity = parityOf(epoch);
    for (int i = 0; i < shape.payloadWords; ++i) {
      own[dataWord(shape, parity, source) + static_cast<std::size_t>(i)] =
          shape.values.natural(generation, source, reader, epoch, i);
    }
    own[flagWord(shape, parity, source)] = flagOf(epoch);
  }

  template <class Mem, class Observer>
  class Rank : public peerconf::layout::RankBase<Mem, Observer> {
    using Base = peerconf::layout::RankBase<Mem, Observer>;
    using A = Access<Mem>;

   public:
    PEERCONF_HD Rank(const CounterFlags& layout, const Context& context, Observer& observer)
        : Base(context, observer), kind_(layout.kind) {}

    PEERCONF_HD int period() const { return kParities; }

    // Stores the payload into the destination's data slot of this parity, then publishes it
    // with the flag. No wait: the workload keeps the writer within one step of its readers.
    PEERCONF_HD Wait push(int dest, std::uint64_t step, std::uint32_t epoch, const Word* payload) {
      const Shape& shape = this->shape();
      const int parity = parityOf(epoch);
      Word* data = this->buffer(dest) + dataWord(shape, parity, this->rank());
      this->observer().pushing(dest, step, epoch, parity, 0);
      for (int i = 0; i < shape.payloadWords; ++i) {
        A::template store<Order::kRelaxed>(data + i, payload[i]);
      }
      this->observer().payloadStored(dest, step);
      this->observer().tagStoring(dest, step);
      Word* flag = this->buffer(dest) + flagWord(shape, parity, this->rank());
      if (kind_ == CounterFlagsKind::kRelaxedFlag) {
        A::template store<Order::kRelaxed, Scope::kSystem>(flag, flagOf(epoch));  // the bug
      } else {
        A::template store<Order::kRelease, Scope::kSystem>(flag, flagOf(epoch));
      }
      this->observer().pushed(dest, step, epoch, parity, flagOf(epoch));
      return this->where(WaitFor::kNothing, dest, parity, epoch, step);
    }

    // Waits for `source`'s flag of `epoch`, loads the payload, re-reads the flag.
    PEERCONF_HD Wait read(int source, std::uint64_t step, std::uint32_t epoch, Word* out,
                          Taken& taken) {
      const Shape& shape = this->shape();
      const int parity = parityOf(epoch);
      const Word* flag = this->buffer(this->rank()) + flagWord(shape, parity, source);
      const Word want = flagOf(epoch);
      Wait wait = this->where(WaitFor::kPair, source, parity, epoch, step);
      Word seen = 0;
      if (!this->waitUntil(
              wait, flag,
              [](const Word* w) { return A::template load<Order::kAcquire, Scope::kSystem>(w); },
              [&](Word value) { return value == want || value == flagOf(epoch + kParities); },
              seen)) {
        return wait;
      }
      if (seen != want) {  // the writer came round again: this step's pair is gone
        wait.status = peerconf::layout::Status::kOverwritten;
        wait.seen = seen;
        this->observer().overwriteSeen(source, step, epoch, parity, seen);
        return wait;
      }
      const Word* data = this->buffer(this->rank()) + dataWord(shape, parity, source);
      for (int i = 0; i < shape.payloadWords; ++i) {
        out[i] = A::template load<Order::kRelaxed>(data + i);
      }
      A::template fence<Order::kAcquire, Scope::kSystem>();
      taken.tag = seen;
      taken.tagAfter = A::template load<Order::kRelaxed>(flag);
      taken.expected = want;
      taken.later = seen == flagOf(epoch + kParities);
      wait.seen = seen;
      return wait;
    }

    // Nothing to acknowledge: the writer never waits for one.
    PEERCONF_HD void acknowledge(int, std::uint64_t, std::uint32_t) {}

   private:
    CounterFlagsKind kind_;
  };
};

// The three kinds by name, for the host registration (main.cc) and the GPU one (counter_flags.cu)
// alike: the correct layout and its two controls, under myteam/.
struct CounterFlagsEntry {
  const char* name;
  const char* what;
  CounterFlagsKind kind;
  bool control;
};
inline constexpr CounterFlagsEntry kCounterFlagsEntries[] = {
    {"myteam/counter-flags",
     "vLLM-style: per-step counter flags, flags and data double-buffered by parity",
     CounterFlagsKind::kCorrect, false},
    {"myteam/counter-flags-relaxed-flag",
     "control: the flag stored relaxed, no release before it (C7 on weak memory)",
     CounterFlagsKind::kRelaxedFlag, true},
    {"myteam/counter-flags-no-init",
     "control: no initOwn hook, an earlier buffer's flags pass (C7)", CounterFlagsKind::kNoInit,
     true},
};

}  // namespace myteam
