// Protocol API: the workloads peerconf drives a layout's ranks with, written once against any
// layout's rank P (api.h lists what P provides): the exchange (every rank sends a self-verifying
// pair to every peer and reads, checks and acknowledges every peer's pair), the one-shot
// all-reduce (every rank pushes its input to every peer, then sums and checks), two all-reduces
// in flight on the one buffer, and the exchange as a replayed CUDA graph. The in-band checks
// (classifyTaken) and the observer calls that C6/C7 replay are made here, the same for every
// layout.
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

// The reader field of the second collective's inputs under two-in-flight (B's pairs name their
// collective, so a pair of A taken as B's, or B's as A's, is seen in-band: another payload).
inline constexpr int kSecondCollective = kAnyReader - 1;

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
// `dataEpoch`: the epoch the payload was made for, when it is not the tag's (a replayed graph
// tags with the kernel's epoch, its inputs are the replay's).
template <class P>
PEERCONF_HD bool takePair(P& p, int source, int reader, std::uint64_t step, std::uint32_t epoch,
                          std::uint32_t dataEpoch, Word* words, Tally& tally, Wait& wait,
                          PairCheck& check) {
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
                        dataEpoch, words, p.shape().payloadWords, p.period());
  p.observer().readPair(source, step, epoch, wait.slot, taken, check);
  tally.count(check);
  p.acknowledge(source, step, epoch);
  return true;
}
template <class P>
PEERCONF_HD bool takePair(P& p, int source, int reader, std::uint64_t step, std::uint32_t epoch,
                          Word* words, Tally& tally, Wait& wait, PairCheck& check) {
  return takePair(p, source, reader, step, epoch, epoch, words, tally, wait, check);
}

template <class P>
struct ExchangeOf {
  // Pushes this rank's pair of `epoch` to every peer, nearest first; its payload is made for
  // `dataEpoch` (the tag's epoch but under a replayed graph).
  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch,
                                    std::uint32_t dataEpoch) {
    Word payload[kMaxPayloadWords];
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const int dest = (p.rank() + k) % n;
      for (int i = 0; i < p.shape().payloadWords; ++i) {
        payload[i] = p.shape().values.word(p.generation(), p.rank(), dest, step, dataEpoch, i);
      }
      const Wait wait = p.push(dest, step, epoch, payload);
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }
  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch) {
    return pushPhase(p, step, epoch, epoch);
  }

  // Reads every peer's pair of `epoch`, checks it (payloads name writer, reader, epoch and
  // generation: `dataEpoch`'s) and acknowledges it; `tally` counts what the checks found.
  static PEERCONF_HD Wait readPhase(P& p, std::uint64_t step, std::uint32_t epoch,
                                    std::uint32_t dataEpoch, Tally& tally) {
    Wait wait = p.beforeReads(step, epoch);
    if (!wait.ok()) return wait;
    Word words[kMaxPayloadWords];
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const int source = (p.rank() + n - k) % n;
      PairCheck check = PairCheck::kGenuine;
      if (!takePair(p, source, p.rank(), step, epoch, dataEpoch, words, tally, wait, check)) {
        return wait;
      }
    }
    return Wait{};
  }
  static PEERCONF_HD Wait readPhase(P& p, std::uint64_t step, std::uint32_t epoch, Tally& tally) {
    return readPhase(p, step, epoch, epoch, tally);
  }
};

template <class P>
struct AllReduceOf {
  // Pushes this rank's input of `epoch` to every peer. `field`: the reader field its payload
  // carries (kAnyReader; two-in-flight's second collective: kSecondCollective).
  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch,
                                    int field = kAnyReader) {
    Word input[kMaxPayloadWords];
    for (int i = 0; i < p.shape().payloadWords; ++i) {
      input[i] = p.shape().values.word(p.generation(), p.rank(), field, step, epoch, i);
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
                                    Word* result = nullptr, int field = kAnyReader) {
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
      own[i] = domain.word(p.generation(), p.rank(), field, step, epoch, i);
    }
    add(sum, valueSum, own, true);
    add(expected, valueExpected, own, true);
    bool everyPairGenuine = true;
    const int n = p.ranks();
    for (int k = 1; k < n; ++k) {
      const int source = (p.rank() + n - k) % n;
      PairCheck check = PairCheck::kGenuine;
      if (!takePair(p, source, field, step, epoch, pair, tally, wait, check)) return wait;
      everyPairGenuine = everyPairGenuine && check == PairCheck::kGenuine;
      add(sum, valueSum, pair, false);
      for (int i = 0; i < words; ++i) {
        pair[i] = domain.word(p.generation(), source, field, step, epoch, i);
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

// Two one-shot all-reduces in flight on one registration (two streams sharing a buffer: sglang's
// and vLLM's custom all-reduce): each step s runs collective A, then B, and both push before
// either reads (push A, push B, read A, read B), so B's pairs travel while A's are unread. The
// honest protocol keeps them apart by giving each collective its own epochs: A runs epoch
// start + 2s and B start + 2s + 1 (`epoch` as the driver hands it, start + s, plus s), so with
// slots indexed by (epoch mod depth, source) each owns half of every source's slots and every
// acknowledgement still comes in epoch order; B's pairs name their collective (the reader field
// kSecondCollective). Steps as the layout, its observer and the checkers see them count
// collectives: A of step s is 2s, B is 2s + 1. `shared` (the control, two-in-flight-shared-slots):
// B reuses A's epoch, so its pair lands in the slot A's unread pair holds (C6) and a reader takes
// one collective's pair as the other's (C7).
template <class P>
struct TwoInFlightOf {
  static PEERCONF_HD std::uint64_t stepOf(std::uint64_t step, int collective) {
    return 2 * step + static_cast<std::uint64_t>(collective);
  }
  static PEERCONF_HD std::uint32_t epochOf(std::uint64_t step, std::uint32_t epoch, int collective,
                                           bool shared) {
    const std::uint32_t a = epoch + static_cast<std::uint32_t>(step);  // start + 2s, wrapping
    return shared ? a : a + static_cast<std::uint32_t>(collective);
  }
  static PEERCONF_HD int fieldOf(int collective) {
    return collective == 0 ? kAnyReader : kSecondCollective;
  }

  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch, bool shared) {
    for (int c = 0; c < 2; ++c) {
      const Wait wait = AllReduceOf<P>::pushPhase(p, stepOf(step, c),
                                                  epochOf(step, epoch, c, shared), fieldOf(c));
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }
  static PEERCONF_HD Wait readPhase(P& p, std::uint64_t step, std::uint32_t epoch, Tally& tally,
                                    bool shared) {
    for (int c = 0; c < 2; ++c) {
      const Wait wait = AllReduceOf<P>::readPhase(
          p, stepOf(step, c), epochOf(step, epoch, c, shared), tally, nullptr, fieldOf(c));
      if (!wait.ok()) return wait;
    }
    return Wait{};
  }
};

// The epoch a replayed CUDA graph's kernel runs. A graph fixes its kernels' arguments at capture,
// so a replay cannot be handed a new epoch: the kernel reads its epoch from a device-side counter
// (the host fixes only the counter's address at capture) and advances it at its end. The hazard
// (`capturedEpoch`, the control graph-replay-captured-epoch) is the epoch passed by value at
// capture: every replay tags and waits for that one epoch, and a reader takes the previous
// replay's pair, still in the slot, as this replay's (C7). The replay's inputs are new each
// replay either way (the host writes them before it replays): their epoch is the host's.
struct ReplayEpoch {
  bool capturedEpoch = false;
  bool captured = false;
  std::uint32_t counter = 0;

  // The kernel's epoch for the replay whose host epoch is `hostEpoch` (the first one captures).
  PEERCONF_HD std::uint32_t current(std::uint32_t hostEpoch) {
    if (!captured) {
      counter = hostEpoch;
      captured = true;
    }
    return counter;
  }
  // The kernel's last act: the counter moves on (a captured value cannot).
  PEERCONF_HD void advance() {
    if (!capturedEpoch) ++counter;
  }
};

// The exchange as a replayed graph: each replay (step) pushes and reads under the kernel's epoch
// (`replay`), its payload the replay's own (`epoch`, the host's).
template <class P>
struct GraphReplayOf {
  static PEERCONF_HD Wait pushPhase(P& p, std::uint64_t step, std::uint32_t epoch,
                                    ReplayEpoch& replay) {
    return ExchangeOf<P>::pushPhase(p, step, replay.current(epoch), epoch);
  }
  static PEERCONF_HD Wait readPhase(P& p, std::uint64_t step, std::uint32_t epoch, Tally& tally,
                                    ReplayEpoch& replay) {
    const Wait wait = ExchangeOf<P>::readPhase(p, step, replay.current(epoch), epoch, tally);
    if (wait.ok()) replay.advance();
    return wait;
  }
};

}  // namespace peerconf::layout
