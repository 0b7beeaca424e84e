// Protocol API: self-verifying payloads, and how a reader classifies what it took.
// Self-verifying payloads: every payload word is a function of the buffer's generation, the
// writer, the reader, the epoch and the word's index, so a reader can tell a pair of this step
// from one of an earlier step, a later step or another buffer on any backend.
#pragma once

#include <cstdint>

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

// What a read took from a slot: `tag` when the reader took the pair, `tagAfter` re-read after its
// payload (a writer that came round meanwhile shows as a difference), `expected` the tag this
// layout says the step's pair carries, and `later` when `tag` is a later epoch's of this buffer
// (the slot was overwritten before it was read). A layout whose pairs carry no separate tag (the
// payload words carry their own validity) reports the word that identifies the pair.
struct Taken {
  Word tag = 0;
  Word tagAfter = 0;
  Word expected = 0;
  bool later = false;
};

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

// Classifies a pair the reader took for `epoch` (`taken`, payload `words` of `payloadWords`
// words), whatever its layout: a tag that changed during the read, a later epoch's tag, or a
// payload word of a later epoch that maps to the same slot (`period`: the layout's slots per
// source) means the writer came round again before the reader was done (overwrite); any other
// mismatch means the reader took something that is not this step's pair (stale).
PEERCONF_HD inline PairCheck classifyTaken(const Taken& taken, std::uint32_t generation, int writer,
                                           int reader, std::uint32_t epoch, const Word* words,
                                           int payloadWords, int period) {
  if (taken.tagAfter != taken.tag) return PairCheck::kOverwritten;
  if (taken.tag != taken.expected) {
    return taken.later ? PairCheck::kOverwritten : PairCheck::kStaleTag;
  }
  bool later = false;
  bool stale = false;
  const auto slots = static_cast<std::uint32_t>(period);
  for (int i = 0; i < payloadWords; ++i) {
    if (words[i] == payloadWord(generation, writer, reader, epoch, i)) continue;
    bool matchedLater = false;
    for (std::uint32_t ahead = 1; ahead <= 2 && !matchedLater; ++ahead) {
      matchedLater = words[i] == payloadWord(generation, writer, reader, epoch + ahead * slots, i);
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

}  // namespace peerconf::layout
