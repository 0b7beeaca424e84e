// Protocol API: the workloads peerconf drives a layout's ranks with, written once against any
// layout's rank P (api.h lists what P provides): the exchange (every rank sends a self-verifying
// pair to every peer and reads, checks and acknowledges every peer's pair) and the one-shot
// all-reduce (every rank pushes its input to every peer, then sums and checks). The in-band
// checks (classifyTaken) and the observer calls that C6/C7 replay are made here, the same for
// every layout.
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/payload.h"
#include "layout/tag.h"
#include "layout/wait.h"

namespace peerconf::layout {

// The most payload words a pair carries (a scenario's `payload:`).
inline constexpr int kMaxPayloadWords = 32;

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

// Rank `rank`'s all-reduce input of `epoch` (the same for every reader, so it names no reader).
PEERCONF_HD inline Word allReduceInput(std::uint32_t generation, int rank, std::uint32_t epoch,
                                       int index) {
  return payloadWord(generation, rank, kAnyReader, epoch, index);
}
// The same in a payload domain, at step `step` (chosen values included).
PEERCONF_HD inline Word allReduceInput(const PayloadDomain& domain, std::uint32_t generation,
                                       int rank, std::uint64_t step, std::uint32_t epoch,
                                       int index) {
  return domain.word(generation, rank, kAnyReader, step, epoch, index);
}

// Reads `source`'s pair of `epoch` on rank `p`, checks it and acknowledges it; `words` gets the
// payload (zeros for a pair found overwritten). False (with `wait` set) when the wait ended early;
// an overwrite seen in-band counts and releases the slot, as the broken layout would go on.
template <class P>
PEERCONF_HD bool takePair(P& p, int source, int reader, std::uint64_t step, std::uint32_t epoch,
                          Word* words, Tally& tally, Wait& wait, PairCheck& check) {
  Taken taken;
  wait = p.read(source, step, epoch, words, taken);
  if (wait.status == Status::kOverwritten) {
    ++tally.pairs;
    ++tally.overwritten;
    check = PairCheck::kOverwritten;
    for (int i = 0; i < p.shape().payloadWords; ++i) words[i] = 0;  // nothing was read
    p.acknowledge(source, step, epoch);
    wait = Wait{};
    return true;
  }
  if (!wait.ok()) return false;
  check = classifyTaken(taken, p.shape().values, p.delivery(), p.generation(), source, reader, step,
                        epoch, words, p.shape().payloadWords, p.period());
  p.observer().readPair(source, step, epoch, wait.slot, taken, check);
  tally.count(check);
  p.acknowledge(source, step, epoch);
  return true;
}

template <class P>
struct ExchangeOf {
  // Pushes this rank's pair of `epoch` to every peer, nearest first.
  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch) {
    Word payload[kMaxPayloadWords];
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const int dest = (p.rank() + k) % n;
      for (int i = 0; i < p.shape().payloadWords; ++i) {
        payload[i] = p.shape().values.word(p.generation(), p.rank(), dest, step, epoch, i);
      }
      const Wait wait = p.push(dest, step, epoch, payload);
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }

  // Reads every peer's pair of `epoch`, checks it (payloads name writer, reader, epoch and
  // generation) and acknowledges it; `tally` counts what the checks found.
  static PEERCONF_HD Wait readPhase(P& p, std::uint64_t step, std::uint32_t epoch, Tally& tally) {
    Wait wait = p.beforeReads(step, epoch);
    if (!wait.ok()) return wait;
    Word words[kMaxPayloadWords];
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const int source = (p.rank() + n - k) % n;
      PairCheck check = PairCheck::kGenuine;
      if (!takePair(p, source, p.rank(), step, epoch, words, tally, wait, check)) return wait;
    }
    return Wait{};
  }
};

template <class P>
struct AllReduceOf {
  // Pushes this rank's input of `epoch` to every peer.
  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch) {
    Word input[kMaxPayloadWords];
    for (int i = 0; i < p.shape().payloadWords; ++i) {
      input[i] = allReduceInput(p.shape().values, p.generation(), p.rank(), step, epoch, i);
    }
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const Wait wait = p.push((p.rank() + k) % n, step, epoch, input);
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }

  // Sums this rank's input and every peer's pair of `epoch`, checking each pair and then the sum:
  // the hash and raw bytes word by word (wrapping; into `result`, payloadWords words, may be
  // null), typed values element by element as doubles, in the order the pairs were taken, and
  // compared with the inputs' sum in that order by value (result is not written).
  static PEERCONF_HD Wait readPhase(P& p, std::uint64_t step, std::uint32_t epoch, Tally& tally,
                                    Word* result = nullptr) {
    Wait wait = p.beforeReads(step, epoch);
    if (!wait.ok()) return wait;
    const PayloadDomain& domain = p.shape().values;
    const int words = p.shape().payloadWords;
    const int per = domain.elementsPerWord();
    const bool typed = domain.typed();
    Word sum[kMaxPayloadWords];
    Word expected[kMaxPayloadWords];
    double valueSum[kMaxPayloadWords * 4];
    double valueExpected[kMaxPayloadWords * 4];
    Word pair[kMaxPayloadWords];
    const auto add = [&](Word* into, double* values, const Word* from, bool first) {
      for (int i = 0; i < words; ++i) {
        into[i] = first ? from[i] : into[i] + from[i];
        if (!typed) continue;
        for (int l = 0; l < per; ++l) {
          const double v = domain.toDouble(domain.lane(from[i], l));
          values[i * per + l] = first ? v : values[i * per + l] + v;
        }
      }
    };
    Word own[kMaxPayloadWords];
    for (int i = 0; i < words; ++i) {
      own[i] = allReduceInput(domain, p.generation(), p.rank(), step, epoch, i);
    }
    add(sum, valueSum, own, true);
    add(expected, valueExpected, own, true);
    bool everyPairGenuine = true;
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const int source = (p.rank() + n - k) % n;
      PairCheck check = PairCheck::kGenuine;
      if (!takePair(p, source, kAnyReader, step, epoch, pair, tally, wait, check)) return wait;
      everyPairGenuine = everyPairGenuine && check == PairCheck::kGenuine;
      add(sum, valueSum, pair, false);
      for (int i = 0; i < words; ++i) {
        pair[i] = allReduceInput(domain, p.generation(), source, step, epoch, i);
      }
      add(expected, valueExpected, pair, false);
    }
    bool right = true;
    for (int i = 0; i < words; ++i) {
      if (typed) {
        for (int l = 0; l < per; ++l) {
          const double a = valueSum[i * per + l];
          const double b = valueExpected[i * per + l];
          right = right && (a == b || (a != a && b != b));  // two NaNs are the same value
        }
      } else {
        right = right && sum[i] == expected[i];
        if (result != nullptr) result[i] = sum[i];
      }
    }
    p.observer().reduced(step, epoch, right);
    // A wrong sum from a bad pair is that pair's finding; a wrong sum from good pairs is its own.
    if (!right && everyPairGenuine) ++tally.wrongResults;
    return Wait{};
  }
};

}  // namespace peerconf::layout
