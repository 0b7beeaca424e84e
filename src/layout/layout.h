// Layout: the buffer map of the reference layout family (protocol.h is its rank): for a step
// (epoch) and a (source, destination) pair of ranks, where the pair lands in the destination's
// PeerBuffer and how it is tagged; the reference layout and, as named kinds, the broken layouts
// the harness ships as negative controls. Built on the public protocol API (rank_base.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/hd.h"
#include "layout/rank_base.h"
#include "layout/tag.h"

namespace peerconf::layout {

enum class LayoutKind : std::uint8_t {
  // `depth` slots per source, indexed by (epoch mod depth, source); tags carry the generation
  // and the epoch and are compared with ==; the payload is stored first, then the tag with a
  // release store; a writer reuses a slot only after the reader acknowledged its previous pair.
  kReference,
  // Control: one slot per source, while writers still wait as if there were `depth` slots, so a
  // writer one step ahead lands on a pair its reader has not read (C6).
  kSingleBuffer,
  // Control: a reader accepts any tag of its generation whose epoch is >= the step's, the classic
  // `while (flag < epoch)`; at the wrap of the epoch field it takes an old pair for new (C7).
  kEpochGe,
  // Control: tags carry the epoch only, so a pair left by an earlier buffer at the same memory
  // passes for this step (C7).
  kNoGeneration,
  // Control: the tag is stored before the payload with no release ordering; the host models the
  // reordering with a window between the two, so a waiting reader takes the old payload (C7).
  kTagBeforePayload,
  // Control: every rank zeroes its receive slots without a fence against its peers' first push;
  // the host models the losing interleaving (the zeroing lands after the push), so an unread
  // pair is overwritten (C6) and then accepted with a zero payload (C7).
  kZeroThenPush,
  // The reference's guarantees (full 64-bit tags with the generation, compared with ==; payload
  // before tag with a release; acknowledged slots) with the tag off the end of the critical path:
  // the pair is cut into chunks of kChunkPayloadWords payload words, each followed by its own tag
  // word (a chunk is one 32-byte unit: its payload, then its tag). A writer releases each chunk's
  // tag right after that chunk's payload; a reader waits on each chunk's own tag, reads the
  // chunk, re-reads that tag, and so consumes chunk 0 while the writer still stores chunk 1.
  kChunkTagged,
  // Control: the chunk-tagged layout with each chunk's tag stored before its payload (no
  // release), modelled by a window between them, so a reader takes a chunk's old payload (C7).
  kChunkTagBeforePayload,
  // Control: the reference layout with the tag stored relaxed instead of with a release: the
  // payload is stored first in program order, but nothing orders it before the tag, so a GPU (or
  // simulated weak memory, --clock sim) may show the tag first and a reader takes the slot's old
  // payload (C7). x86 threads on real time keep the stores in order and never show it.
  kRelaxedTag,
  // Control: the reference layout whose pair wait names the reader itself where it should name
  // the source it waits for (rank for source, copied from the acknowledgement's store): the
  // protocol is the reference's, but when a peer stops, every survivor's timeout blames itself,
  // never the rank that stopped (C8).
  kWaitNamesSelf,
  // Control: the reference layout whose reader acknowledges a pair before it reads it (a premature
  // release): the writer may come round and store the slot's next pair while the reader still
  // reads this one. C6 finds every push that relied on such an acknowledgement.
  kAckBeforeRead,
  // Control: the reference layout whose payload is ordered before its tag by a release fence of
  // DEVICE scope, the tag then stored relaxed: on one GPU that would order them, but the reader is
  // another device, and a device-scope fence orders nothing against it (ROCm/aiter PR 3290's
  // fix: a system-scope fence before the readiness flag). Simulated weak memory gives scopes their
  // meaning (--clock sim): the tag may land first and a reader takes the old payload (C7).
  kDeviceScopeFence,
  // Control: the reference layout whose reader waits for the tag with relaxed loads, no acquire
  // (the writer's release is right): nothing orders the payload's loads after the tag's, so a
  // GPU (or its compiler) may satisfy them early, from the slot's old pair. Simulated weak memory
  // does (--clock sim): the reader takes the old payload under the new tag (C7).
  kReaderWithoutAcquire,
  // Control: the reference layout whose writer, right after a push, re-arms (clears the payload
  // of) its next slot in the destination's buffer, ahead of the acknowledgement its next push
  // waits for: that slot still holds the pair of an earlier step, which a late reader has not
  // read. The clearing is a store into a peer's buffer that is not a push (observer.h's
  // rearming/rearmed): C6 names it ("re-armed peer P's slot ... before rank P read it"), and the
  // reader then takes a cleared payload (C7 in-band).
  kRearmBeforeRead,
  // Control: a reader compares epochs as signed 32-bit integers, `(int32_t)seen >=
  // (int32_t)expected` (the `while ((int)flag < (int)epoch)` of a kernel that stores its epoch
  // in an int), instead of serial-number arithmetic, `(int32_t)(seen - expected) >= 0`. It holds
  // across the 2^32 wrap (-2 < 0) but not across 2^31: at epoch 0x80000000 (INT_MIN) the slot's
  // old pair of 0x7ffffffe (INT_MAX - 1) reads as newer and is taken for new (C7).
  kEpochSignedGe,
};

// Payload words a chunk of the chunk-tagged layouts carries before its tag (chunk = 32 bytes).
inline constexpr int kChunkPayloadWords = 3;

// The name a scenario uses for a layout ("reference", "single-buffer", ...).
PEERCONF_HD constexpr const char* layoutName(LayoutKind kind) {
  switch (kind) {
    case LayoutKind::kReference:
      return "reference";
    case LayoutKind::kSingleBuffer:
      return "single-buffer";
    case LayoutKind::kEpochGe:
      return "epoch-ge";
    case LayoutKind::kNoGeneration:
      return "no-generation";
    case LayoutKind::kTagBeforePayload:
      return "tag-before-payload";
    case LayoutKind::kZeroThenPush:
      return "zero-then-push";
    case LayoutKind::kChunkTagged:
      return "chunk-tagged";
    case LayoutKind::kChunkTagBeforePayload:
      return "chunk-tag-before-payload";
    case LayoutKind::kRelaxedTag:
      return "relaxed-tag";
    case LayoutKind::kWaitNamesSelf:
      return "wait-names-self";
    case LayoutKind::kAckBeforeRead:
      return "ack-before-read";
    case LayoutKind::kDeviceScopeFence:
      return "device-scope-fence";
    case LayoutKind::kReaderWithoutAcquire:
      return "reader-without-acquire";
    case LayoutKind::kRearmBeforeRead:
      return "rearm-before-read";
    case LayoutKind::kEpochSignedGe:
      return "epoch-signed-ge";
  }
  return "unknown";
}

// Where things live in one rank's buffer, in 64-bit words from its start (64-byte lines):
//   line 0                 the abort word
//   line 1 + r             the acknowledgement reader r writes back here: the last epoch it
//                          consumed of this rank's pairs (tagged like a pair)
//   data lines             slot (k, s) for k < slots(), s < ranks: the tag word, then
//                          payloadWords words; pairStrideWords() apart. The chunk-tagged
//                          layouts cut the slot into chunks: kChunkPayloadWords payload words,
//                          then that chunk's tag word (chunks(), chunkTagWord, payloadAt)
// A pair (and its destination's slot) is found by (epoch mod slots, source). The buffer is never
// zeroed: nothing here relies on its initial contents (see generation.h).
struct Layout {
  static constexpr int kLineWords = 8;
  static constexpr int kMaxPayloadWords = 32;
  static constexpr int kMaxRanks = 1024;
  static constexpr int kMaxDepth = 1 << 16;

  LayoutKind kind = LayoutKind::kReference;
  int ranks = 2;
  // Slots per source the flow control counts on. A power of two, so that epoch mod depth stays
  // a cycle across the wrap of the 32-bit epoch field.
  int depth = 2;
  int payloadWords = 6;
  // The modelled reordering window of kTagBeforePayload (between tag and payload).
  std::uint64_t windowNs = 2000000;

  // The run's shape (what every layout reads), and the reference family's layout of `kind` for it.
  PEERCONF_HD Shape shape() const { return Shape{ranks, depth, payloadWords, windowNs}; }
  PEERCONF_HD static Layout of(LayoutKind kind, const Shape& shape) {
    Layout layout;
    layout.kind = kind;
    layout.ranks = shape.ranks;
    layout.depth = shape.depth;
    layout.payloadWords = shape.payloadWords;
    layout.windowNs = shape.windowNs;
    return layout;
  }

  PEERCONF_HD int slots() const { return kind == LayoutKind::kSingleBuffer ? 1 : depth; }
  PEERCONF_HD int slotOf(std::uint32_t epoch) const {
    return static_cast<int>(epoch & static_cast<std::uint32_t>(slots() - 1));
  }
  PEERCONF_HD bool chunkTagged() const {
    return kind == LayoutKind::kChunkTagged || kind == LayoutKind::kChunkTagBeforePayload;
  }
  // Chunks a pair is cut into, each with its own tag word (1: the reference's single tag).
  PEERCONF_HD int chunks() const {
    return chunkTagged() ? (payloadWords + kChunkPayloadWords - 1) / kChunkPayloadWords : 1;
  }
  // The payload words [chunkBegin(c), chunkBegin(c + 1)) travel in chunk c.
  PEERCONF_HD int chunkBegin(int chunk) const {
    if (!chunkTagged()) return chunk == 0 ? 0 : payloadWords;
    const int begin = chunk * kChunkPayloadWords;
    return begin < payloadWords ? begin : payloadWords;
  }
  // From a pair's first word: chunk c's tag word, and payload word i.
  PEERCONF_HD std::size_t chunkTagWord(int chunk) const {
    return chunkTagged()
               ? static_cast<std::size_t>(chunk) * (kChunkPayloadWords + 1) + kChunkPayloadWords
               : 0;
  }
  PEERCONF_HD std::size_t payloadAt(int index) const {
    if (!chunkTagged()) return 1 + static_cast<std::size_t>(index);
    return static_cast<std::size_t>(index / kChunkPayloadWords) * (kChunkPayloadWords + 1) +
           static_cast<std::size_t>(index % kChunkPayloadWords);
  }
  // Words a pair occupies (tags included), before rounding up to whole lines.
  PEERCONF_HD std::size_t pairWords() const {
    return chunkTagged() ? static_cast<std::size_t>(chunks()) * (kChunkPayloadWords + 1)
                         : 1 + static_cast<std::size_t>(payloadWords);
  }
  PEERCONF_HD std::size_t pairStrideWords() const {
    const std::size_t words = pairWords();
    return (words + kLineWords - 1) / kLineWords * kLineWords;
  }
  PEERCONF_HD std::size_t abortWord() const { return kAbortWord; }
  // In the source's buffer: where `reader` acknowledges the source's pairs.
  PEERCONF_HD std::size_t ackWord(int reader) const {
    return static_cast<std::size_t>(kLineWords) * (1 + static_cast<std::size_t>(reader));
  }
  PEERCONF_HD std::size_t dataWord() const {
    return static_cast<std::size_t>(kLineWords) * (1 + static_cast<std::size_t>(ranks));
  }
  // In the destination's buffer: the first word of slot (slot, source): its tag word, the
  // payload following it (the chunk-tagged layouts: chunk 0's first payload word).
  PEERCONF_HD std::size_t pairWord(int slot, int source) const {
    return dataWord() + (static_cast<std::size_t>(slot) * static_cast<std::size_t>(ranks) +
                         static_cast<std::size_t>(source)) *
                            pairStrideWords();
  }
  PEERCONF_HD std::size_t words() const {
    return dataWord() +
           static_cast<std::size_t>(slots()) * static_cast<std::size_t>(ranks) * pairStrideWords();
  }
  // The bytes a buffer needs for this layout.
  PEERCONF_HD std::size_t bytes() const { return words() * sizeof(Word); }

  // The tag of the pair (or acknowledgement) of `epoch` in a buffer of `generation`.
  PEERCONF_HD Word tag(std::uint32_t generation, std::uint32_t epoch) const {
    return makeTag(kind == LayoutKind::kNoGeneration ? 0u : generation, epoch);
  }
  // Whether a reader waiting for `expected` takes the pair tagged `seen`.
  PEERCONF_HD bool accepts(Word seen, Word expected) const {
    if (kind == LayoutKind::kEpochGe) {
      return tagGeneration(seen) == tagGeneration(expected) && tagEpoch(seen) >= tagEpoch(expected);
    }
    if (kind == LayoutKind::kEpochSignedGe) {
      return tagGeneration(seen) == tagGeneration(expected) &&
             static_cast<std::int32_t>(tagEpoch(seen)) >=
                 static_cast<std::int32_t>(tagEpoch(expected));
    }
    return seen == expected;
  }
  // Whether acknowledgement `ack` says the reader consumed the pair of `epoch` (or a later one).
  PEERCONF_HD bool acknowledges(Word ack, std::uint32_t generation, std::uint32_t epoch) const {
    return tagGeneration(ack) == tagGeneration(tag(generation, 0)) &&
           epochDistance(epoch, tagEpoch(ack)) >= 0;
  }
  // Whether `seen` is a pair of this buffer for a later epoch than `epoch`: evidence that the
  // slot was overwritten before its pair for `epoch` was read.
  PEERCONF_HD bool isLater(Word seen, std::uint32_t generation, std::uint32_t epoch) const {
    return tagGeneration(seen) == tagGeneration(tag(generation, 0)) &&
           epochDistance(epoch, tagEpoch(seen)) > 0;
  }
  PEERCONF_HD bool tagBeforePayload() const {
    return kind == LayoutKind::kTagBeforePayload || kind == LayoutKind::kChunkTagBeforePayload;
  }
  PEERCONF_HD bool zeroesReceiveSlots() const { return kind == LayoutKind::kZeroThenPush; }
  // The tag's store after the payload: a release (every layout but relaxed-tag and
  // device-scope-fence) or relaxed.
  PEERCONF_HD bool tagReleased() const {
    return kind != LayoutKind::kRelaxedTag && kind != LayoutKind::kDeviceScopeFence;
  }
  // Whether a release fence of device scope comes between the payload and the relaxed tag.
  PEERCONF_HD bool deviceScopeFence() const { return kind == LayoutKind::kDeviceScopeFence; }
  // Whether the reader's wait for a tag loads it with acquire (every layout but
  // reader-without-acquire) or relaxed.
  PEERCONF_HD bool tagAcquired() const { return kind != LayoutKind::kReaderWithoutAcquire; }
  // Whether the reader acknowledges a pair before reading it (ack-before-read) instead of after.
  PEERCONF_HD bool acksBeforeRead() const { return kind == LayoutKind::kAckBeforeRead; }
  // Whether a writer re-arms its next slot in the destination's buffer right after a push
  // (rearm-before-read), before that slot's pair was acknowledged.
  PEERCONF_HD bool rearmsAhead() const { return kind == LayoutKind::kRearmBeforeRead; }
  // The peer a wait for `source`'s pair names: the source (every layout but wait-names-self).
  PEERCONF_HD int pairWaitPeer(int source, int reader) const {
    return kind == LayoutKind::kWaitNamesSelf ? reader : source;
  }

  // Why this layout cannot run, or nullptr when it can.
  PEERCONF_HD const char* invalidReason() const {
    if (ranks < 1 || ranks > kMaxRanks) return "ranks must be between 1 and 1024";
    if (depth < 1 || depth > kMaxDepth || (depth & (depth - 1)) != 0) {
      return "depth must be a power of two between 1 and 65536";
    }
    if (payloadWords < 1 || payloadWords > kMaxPayloadWords) {
      return "payload must be between 1 and 32 words";
    }
    return nullptr;
  }
};

}  // namespace peerconf::layout
