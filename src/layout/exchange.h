// The exchange workload: each step every rank sends a self-verifying pair to every peer and
// reads, checks and acknowledges every peer's pair. Written once over MemOps (protocol.h).
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/payload.h"
#include "layout/protocol.h"

namespace peerconf::layout {

template <PEERCONF_MEM_OPS Mem, class Observer = NullObserver>
struct Exchange {
  using Proto = Protocol<Mem, Observer>;

  // Pushes this rank's pair of `epoch` to every peer, nearest first.
  static PEERCONF_HD Wait pushPhase(Proto& p, std::uint64_t step, std::uint32_t epoch) {
    Word payload[Layout::kMaxPayloadWords];
    const int n = p.layout().ranks;
    for (int k = 1; k < n; ++k) {
      const int dest = (p.rank() + k) % n;
      for (int i = 0; i < p.layout().payloadWords; ++i) {
        payload[i] = payloadWord(p.generation(), p.rank(), dest, epoch, i);
      }
      const Wait wait = p.push(dest, step, epoch, payload);
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }

  // Reads every peer's pair of `epoch`, checks it (payloads name writer, reader, epoch and
  // generation) and acknowledges it; `tally` counts what the checks found.
  static PEERCONF_HD Wait readPhase(Proto& p, std::uint64_t step, std::uint32_t epoch,
                                    Tally& tally) {
    if (p.layout().zeroesReceiveSlots() && step == 0) {
      const Wait wait = p.zeroReceiveSlots(step, epoch);
      if (!wait.ok()) return wait;
    }
    Word words[Layout::kMaxPayloadWords];
    const int n = p.layout().ranks;
    for (int k = 1; k < n; ++k) {
      const int source = (p.rank() + n - k) % n;
      Word tag = 0;
      Word tagAfter = 0;
      const Wait wait = p.read(source, step, epoch, words, &tag, &tagAfter);
      if (wait.status == Status::kOverwritten) {
        // This epoch's pair is gone; release the slot and go on, as the broken layout would.
        ++tally.pairs;
        ++tally.overwritten;
        p.acknowledge(source, epoch);
        continue;
      }
      if (!wait.ok()) return wait;
      const PairCheck check =
          classifyPair(p.layout(), p.generation(), source, p.rank(), epoch, tag, tagAfter, words);
      p.observer().readPair(source, step, epoch, wait.slot, tag, tagAfter, check);
      tally.count(check);
      p.acknowledge(source, epoch);
    }
    return Wait{};
  }
};

}  // namespace peerconf::layout
