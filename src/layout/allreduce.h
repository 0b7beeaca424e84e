// The one-shot all-reduce workload: each step every rank pushes its input to every peer, then
// sums its own input and every peer's pair and checks the sum. Written once over MemOps; on GPUs
// it is also the performance workload (DESIGN.md §6).
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/payload.h"
#include "layout/protocol.h"

namespace peerconf::layout {

// Rank `rank`'s input of `epoch` (the same for every reader, so it names no reader).
PEERCONF_HD inline Word allReduceInput(std::uint32_t generation, int rank, std::uint32_t epoch,
                                       int index) {
  return payloadWord(generation, rank, kAnyReader, epoch, index);
}

template <PEERCONF_MEM_OPS Mem, class Observer = NullObserver>
struct AllReduce {
  using Proto = Protocol<Mem, Observer>;

  // Pushes this rank's input of `epoch` to every peer.
  static PEERCONF_HD Wait pushPhase(Proto& p, std::uint64_t step, std::uint32_t epoch) {
    Word input[Layout::kMaxPayloadWords];
    for (int i = 0; i < p.layout().payloadWords; ++i) {
      input[i] = allReduceInput(p.generation(), p.rank(), epoch, i);
    }
    const int n = p.layout().ranks;
    for (int k = 1; k < n; ++k) {
      const Wait wait = p.push((p.rank() + k) % n, step, epoch, input);
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }

  // Sums this rank's input and every peer's pair of `epoch` into `result` (payloadWords words,
  // may be null), checking each pair and then the sum.
  static PEERCONF_HD Wait readPhase(Proto& p, std::uint64_t step, std::uint32_t epoch, Tally& tally,
                                    Word* result = nullptr) {
    if (p.layout().zeroesReceiveSlots() && step == 0) {
      const Wait wait = p.zeroReceiveSlots(step, epoch);
      if (!wait.ok()) return wait;
    }
    const int words = p.layout().payloadWords;
    Word sum[Layout::kMaxPayloadWords];
    Word pair[Layout::kMaxPayloadWords];
    for (int i = 0; i < words; ++i) sum[i] = allReduceInput(p.generation(), p.rank(), epoch, i);
    bool everyPairGenuine = true;
    const int n = p.layout().ranks;
    for (int k = 1; k < n; ++k) {
      const int source = (p.rank() + n - k) % n;
      Word tag = 0;
      Word tagAfter = 0;
      const Wait wait = p.read(source, step, epoch, pair, &tag, &tagAfter);
      if (wait.status == Status::kOverwritten) {
        ++tally.pairs;
        ++tally.overwritten;
        everyPairGenuine = false;
        p.acknowledge(source, epoch);
        continue;
      }
      if (!wait.ok()) return wait;
      const PairCheck check =
          classifyPair(p.layout(), p.generation(), source, kAnyReader, epoch, tag, tagAfter, pair);
      p.observer().readPair(source, step, epoch, wait.slot, tag, tagAfter, check);
      tally.count(check);
      everyPairGenuine = everyPairGenuine && check == PairCheck::kGenuine;
      p.acknowledge(source, epoch);
      for (int i = 0; i < words; ++i) sum[i] += pair[i];
    }
    bool right = true;
    for (int i = 0; i < words; ++i) {
      Word expected = 0;
      for (int r = 0; r < n; ++r) expected += allReduceInput(p.generation(), r, epoch, i);
      right = right && sum[i] == expected;
      if (result != nullptr) result[i] = sum[i];
    }
    p.observer().reduced(step, epoch, right);
    // A wrong sum from a bad pair is that pair's finding; a wrong sum from good pairs is its own.
    if (!right && everyPairGenuine) ++tally.wrongResults;
    return Wait{};
  }
};

}  // namespace peerconf::layout
