// Protocol API: self-verifying payloads, the payload domain (what values they carry), and how a
// reader classifies what it took.
// Self-verifying payloads: every payload word is a function of the buffer's generation, the
// writer, the reader, the epoch and the word's index, so a reader can tell a pair of this step
// from one of an earlier step, a later step or another buffer on any backend. The payload domain
// (a scenario's `dataplane.values`) keeps that while the words carry typed values: fp64, fp32,
// fp16, bf16 or raw bytes derived from the same hash, and chosen values at chosen steps (-0.0,
// NaN, a layout's sentinel) where a scenario poses them.
#pragma once

#include <cstdint>
#include <cstring>

#include "layout/hd.h"
#include "layout/tag.h"

namespace peerconf::layout {

// The reader field of payloads that every reader receives alike (the all-reduce's inputs).
inline constexpr int kAnyReader = 0xffff;

PEERCONF_HD constexpr Word mix64(Word x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

PEERCONF_HD constexpr Word payloadWord(std::uint32_t generation, int writer, int reader,
                                       std::uint32_t epoch, int index) {
  return mix64(makeTag(generation, epoch) ^
               mix64((static_cast<Word>(static_cast<std::uint32_t>(writer)) << 40) ^
                     (static_cast<Word>(static_cast<std::uint32_t>(reader) & 0xffffu) << 20) ^
                     static_cast<Word>(static_cast<std::uint32_t>(index))));
}

// What a pair's words carry (a scenario's `dataplane.values`): the self-verifying hash itself
// (every layout's default), or typed values derived from it, elementsPerWord() to a 64-bit word
// (element e of a pair is lane e % elementsPerWord() of word e / elementsPerWord(), lowest lane
// first). The derived floats are normal numbers of either sign between 2^-8 and 2^8 (fp16:
// 2^-4 and 2^4): never a zero, a NaN or an infinity, so a sentinel such as -0.0 is one that real
// data never takes, unless a scenario chooses it (ChosenValue).
enum class ValueType : std::uint8_t { kHash, kFp64, kFp32, kFp16, kBf16, kBytes };

PEERCONF_HD constexpr const char* valueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kHash:
      return "hash";
    case ValueType::kFp64:
      return "fp64";
    case ValueType::kFp32:
      return "fp32";
    case ValueType::kFp16:
      return "fp16";
    case ValueType::kBf16:
      return "bf16";
    case ValueType::kBytes:
      return "bytes";
  }
  return "unknown";
}

// How a layout delivers payload values (its rank's `delivery()`; RankBase's default: kBits).
// kBits: every word arrives bit for bit. kValues: an element may arrive with other bits but the
// same value (-0.0 as +0.0, one NaN as another): a Lamport layout that canonicalizes -0.0, its
// sentinel, to +0.0. Typed values are then compared by value; the hash and raw bytes always by
// bits.
enum class Delivery : std::uint8_t { kBits, kValues };

// A value a scenario chooses for an element at a step (`dataplane.values.chosen`): element
// `element` (-1: every element) of the pairs rank `rank` (-1: every rank) pushes at step `step`
// holds `bits` (the element's own bits: 0x8000 is fp16's -0.0).
struct ChosenValue {
  std::uint64_t step = 0;
  int rank = -1;
  int element = -1;
  Word bits = 0;
};

// The payload domain of a run: what every pair's words are, and how they compare.
struct PayloadDomain {
  static constexpr int kMaxChosen = 8;
  ValueType type = ValueType::kHash;
  int chosenCount = 0;
  ChosenValue chosen[kMaxChosen] = {};

  PEERCONF_HD bool typed() const { return type != ValueType::kHash && type != ValueType::kBytes; }
  // Elements a 64-bit word carries, and each one's width in bits.
  PEERCONF_HD int elementsPerWord() const {
    switch (type) {
      case ValueType::kFp32:
        return 2;
      case ValueType::kFp16:
      case ValueType::kBf16:
        return 4;
      case ValueType::kBytes:
        return 8;
      case ValueType::kHash:
      case ValueType::kFp64:
        return 1;
    }
    return 1;
  }
  PEERCONF_HD int elementBits() const { return 64 / elementsPerWord(); }
  PEERCONF_HD Word laneMask() const {
    return elementBits() == 64 ? ~Word{0} : (Word{1} << elementBits()) - 1;
  }
  PEERCONF_HD Word lane(Word word, int lane) const {
    return (word >> (lane * elementBits())) & laneMask();
  }
  PEERCONF_HD Word withLane(Word word, int lane, Word bits) const {
    const int shift = lane * elementBits();
    return (word & ~(laneMask() << shift)) | ((bits & laneMask()) << shift);
  }
  // The bits of -0.0 in an element of this type (0 for the hash and raw bytes: they have none).
  PEERCONF_HD Word negativeZero() const { return typed() ? Word{1} << (elementBits() - 1) : 0; }

  // Word `index` of `writer`'s pair for `reader` at step `step` (epoch `epoch`), chosen values
  // included: what the workload pushes and what a reader must take.
  PEERCONF_HD Word word(std::uint32_t generation, int writer, int reader, std::uint64_t step,
                        std::uint32_t epoch, int index) const {
    Word w = natural(generation, writer, reader, epoch, index);
    for (int c = 0; c < chosenCount && c < kMaxChosen; ++c) {
      const ChosenValue& v = chosen[c];
      if (v.step != step || (v.rank >= 0 && v.rank != writer)) continue;
      const int per = elementsPerWord();
      for (int l = 0; l < per; ++l) {
        if (v.element < 0 || v.element == index * per + l) w = withLane(w, l, v.bits);
      }
    }
    return w;
  }
  // The same without chosen values: what an earlier life of the buffer left (a `prefill:`).
  PEERCONF_HD Word natural(std::uint32_t generation, int writer, int reader, std::uint32_t epoch,
                           int index) const {
    const Word hash = payloadWord(generation, writer, reader, epoch, index);
    if (!typed()) return hash;
    Word w = 0;
    for (int l = 0; l < elementsPerWord(); ++l) w = withLane(w, l, normal(lane(hash, l)));
    return w;
  }

  // Whether word `got` delivers word `want` under `delivery`: bit for bit, or (typed values
  // delivered by value) element by element equal as numbers, two NaNs equal.
  PEERCONF_HD bool same(Word got, Word want, Delivery delivery) const {
    if (got == want) return true;
    if (delivery != Delivery::kValues || !typed()) return false;
    for (int l = 0; l < elementsPerWord(); ++l) {
      if (!sameElement(lane(got, l), lane(want, l))) return false;
    }
    return true;
  }
  PEERCONF_HD bool sameElement(Word a, Word b) const {
    if (a == b) return true;
    const bool nanA = isNan(a);
    const bool nanB = isNan(b);
    if (nanA || nanB) return nanA && nanB;
    const Word magnitude = laneMask() >> 1;
    return (a & magnitude) == 0 && (b & magnitude) == 0;  // +0.0 and -0.0
  }
  PEERCONF_HD bool isNan(Word element) const {
    const int bits = elementBits();
    const int exponent = type == ValueType::kFp64   ? 11
                         : type == ValueType::kFp32 ? 8
                         : type == ValueType::kFp16 ? 5
                                                    : 8;
    const int mantissa = bits - 1 - exponent;
    const Word expMask = ((Word{1} << exponent) - 1) << mantissa;
    return typed() && (element & expMask) == expMask &&
           (element & ((Word{1} << mantissa) - 1)) != 0;
  }
  // An element as a double (typed values; what the all-reduce sums in).
  PEERCONF_HD double toDouble(Word element) const {
    switch (type) {
      case ValueType::kFp64: {
        double d = 0;
        std::memcpy(&d, &element, sizeof d);
        return d;
      }
      case ValueType::kFp32:
        return floatOf(static_cast<std::uint32_t>(element));
      case ValueType::kBf16:
        return floatOf(static_cast<std::uint32_t>(element) << 16);
      case ValueType::kFp16: {
        // Half to float: sign, 5-bit exponent, 10-bit mantissa (subnormals and specials too).
        const auto h = static_cast<std::uint32_t>(element);
        const std::uint32_t sign = (h & 0x8000u) << 16;
        const std::uint32_t exponent = (h >> 10) & 0x1fu;
        std::uint32_t mantissa = h & 0x3ffu;
        if (exponent == 0x1f) return floatOf(sign | 0x7f800000u | (mantissa << 13));
        if (exponent != 0) return floatOf(sign | ((exponent + 112u) << 23) | (mantissa << 13));
        if (mantissa == 0) return floatOf(sign);
        int e = 113;
        while ((mantissa & 0x400u) == 0) {
          mantissa <<= 1;
          --e;
        }
        return floatOf(sign | (static_cast<std::uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13));
      }
      case ValueType::kHash:
      case ValueType::kBytes:
        break;
    }
    return 0;
  }

 private:
  PEERCONF_HD static double floatOf(std::uint32_t bits) {
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  }
  // A normal number of either sign from an element's worth of hash bits (never 0, NaN or inf).
  PEERCONF_HD Word normal(Word bits) const {
    switch (type) {
      case ValueType::kFp64:
        return (bits & 0x800fffffffffffffULL) | ((1023 - 8 + ((bits >> 52) & 15)) << 52);
      case ValueType::kFp32:
        return (bits & 0x807fffffULL) | ((127 - 8 + ((bits >> 23) & 15)) << 23);
      case ValueType::kFp16:
        return (bits & 0x83ffULL) | ((15 - 4 + ((bits >> 10) & 7)) << 10);
      case ValueType::kBf16:
        return (bits & 0x807fULL) | ((127 - 8 + ((bits >> 7) & 15)) << 7);
      case ValueType::kHash:
      case ValueType::kBytes:
        break;
    }
    return bits;
  }
};

// What a read took from a slot: `tag` when the reader took the pair, `tagAfter` re-read after its
// payload (a writer that came round meanwhile shows as a difference), `expected` the tag this
// layout says the step's pair carries, and `later` when `tag` is a later epoch's of this buffer
// (the slot was overwritten before it was read). A layout whose pairs carry no tag at all (a
// Lamport layout: every data word is its own flag) sets `tagless` (Taken::untagged()): the pair is
// then identified by its payload alone (which writer, which step) and the slot the read and the
// push record, and C7 judges no tag.
struct Taken {
  Word tag = 0;
  Word tagAfter = 0;
  Word expected = 0;
  bool later = false;
  bool tagless = false;

  PEERCONF_HD static Taken untagged() {
    Taken taken;
    taken.tagless = true;
    return taken;
  }
};

// The `tag` a push of a tagless layout passes to its observer's pushed(): none.
inline constexpr Word kNoTag = 0;

// What a read pair turned out to be.
enum class PairCheck : std::uint8_t {
  kGenuine,       // the tag and every payload word are this step's, and the tag held still
  kOverwritten,   // a later step's tag or payload, or the tag changed while it was read (C6)
  kStaleTag,      // the layout took a tag that is not this step's (another epoch or buffer) (C7)
  kStalePayload,  // this step's tag over a payload that is not this step's (C7)
};

PEERCONF_HD constexpr const char* pairCheckName(PairCheck check) {
  switch (check) {
    case PairCheck::kGenuine:
      return "genuine";
    case PairCheck::kOverwritten:
      return "overwritten";
    case PairCheck::kStaleTag:
      return "stale-tag";
    case PairCheck::kStalePayload:
      return "stale-payload";
  }
  return "unknown";
}

// Classifies a pair the reader took for step `step` (epoch `epoch`): `taken`, and its payload
// `words` (`payloadWords` words) in `domain`, delivered as `delivery` says; whatever its layout.
// A tag that changed during the read, a later epoch's tag, or a payload word of a later step that
// maps to the same slot (`period`: the layout's slots per source) means the writer came round
// again before the reader was done (overwrite); any other mismatch means the reader took
// something that is not this step's pair (stale). A tagless read is judged by its payload alone.
PEERCONF_HD inline PairCheck classifyTaken(const Taken& taken, const PayloadDomain& domain,
                                           Delivery delivery, std::uint32_t generation, int writer,
                                           int reader, std::uint64_t step, std::uint32_t epoch,
                                           const Word* words, int payloadWords, int period) {
  if (!taken.tagless) {
    if (taken.tagAfter != taken.tag) return PairCheck::kOverwritten;
    if (taken.tag != taken.expected) {
      return taken.later ? PairCheck::kOverwritten : PairCheck::kStaleTag;
    }
  }
  bool later = false;
  bool stale = false;
  const auto slots = static_cast<std::uint32_t>(period);
  for (int i = 0; i < payloadWords; ++i) {
    if (domain.same(words[i], domain.word(generation, writer, reader, step, epoch, i), delivery)) {
      continue;
    }
    bool matchedLater = false;
    for (std::uint32_t ahead = 1; ahead <= 2 && !matchedLater; ++ahead) {
      const std::uint32_t d = ahead * slots;
      matchedLater = domain.same(
          words[i], domain.word(generation, writer, reader, step + d, epoch + d, i), delivery);
    }
    if (matchedLater) {
      later = true;
    } else {
      stale = true;
    }
  }
  if (later) return PairCheck::kOverwritten;
  return stale ? PairCheck::kStalePayload : PairCheck::kGenuine;
}

// The same for the self-verifying hash, bit for bit (the domain every layout ran before values).
PEERCONF_HD inline PairCheck classifyTaken(const Taken& taken, std::uint32_t generation, int writer,
                                           int reader, std::uint32_t epoch, const Word* words,
                                           int payloadWords, int period) {
  return classifyTaken(taken, PayloadDomain{}, Delivery::kBits, generation, writer, reader, 0,
                       epoch, words, payloadWords, period);
}

}  // namespace peerconf::layout
