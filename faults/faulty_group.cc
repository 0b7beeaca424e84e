// FaultyGroup: group failures, points, and handle faults applied around the inner collectives.
#include "faults/faulty_group.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "errors.h"
#include "exchange_entry.h"
#include "ipc_backend.h"

namespace peerconf::faults {

FaultyGroup::FaultyGroup(Group& inner, RankFaults& faults, RankControl& control)
    : inner_(inner), faults_(faults), control_(control) {}

int FaultyGroup::allReduceMin(int value) {
  faults_.atPoint(Point::kAgree, control_);
  if (faults_.failGroup(Point::kAgree)) {
    throw GroupError("all-reduce failed on rank " + std::to_string(faults_.rank()) +
                         ": injected group failure at agree (local, nothing sent)",
                     Op::kAllReduce, faults_.rank());
  }
  faults_.throwForeign(SeamCall::kAgree);
  if (faults_.reorderCollectives(Point::kAgree)) {
    // The rank enters another exchange (a next buffer's, its entry zeros) while its peers are in
    // the agreement. A group that paired the two would return here; the rank then agrees, late.
    const std::vector<std::byte> next(ExchangeEntry::kSize);
    (void)inner_.allGather(next);
  }
  return inner_.allReduceMin(value);
}

namespace {

// Where the handle sits in one rank's contribution to the exchange: the whole of a bare
// IpcHandle (the seed's wire format, still spoken by the planted copies of the core), or the
// handle part of an ExchangeEntry. Empty for a failure record: no fault turns one into a handle.
std::span<std::byte> handleRegion(std::vector<std::byte>& item) {
  if (item.size() == IpcHandle::kSize) return item;
  return ExchangeEntry::handleBytes(item);
}

// Damages `entry` (an ExchangeEntry, src/exchange_entry.h: magic 2 bytes, kind 1, operation and
// code, the handle, the registered size, the label) in `part`, so that no part of the decoder's
// check can be skipped unseen: the magic's second byte (a check of the first alone misses it), a
// failure record's last handle byte (a check of a prefix misses it).
void damage(std::vector<std::byte>& entry, EntryPart part, bool failureRecord) {
  constexpr std::size_t kMagicSecond = 1;
  constexpr std::size_t kKind = 2;
  switch (part) {
    case EntryPart::kMagic:
      entry[kMagicSecond] = ~entry[kMagicSecond];
      break;
    case EntryPart::kKind:
      entry[kKind] = ~entry[kKind];
      break;
    case EntryPart::kTail:
      entry[failureRecord ? ExchangeEntry::kHeaderSize + IpcHandle::kSize - 1 : entry.size() - 1] =
          std::byte{0xff};
      break;
  }
}

bool isExchange(std::size_t bytes) {
  return bytes == IpcHandle::kSize || bytes == ExchangeEntry::kSize;
}

}  // namespace

std::vector<std::vector<std::byte>> FaultyGroup::allGather(std::span<const std::byte> bytes) {
  if (!isExchange(bytes.size())) return inner_.allGather(bytes);

  faults_.atPoint(Point::kExchange, control_);
  faults_.atPoint(Point::kExchangeSend, control_);
  if (faults_.failGroup(Point::kExchange)) {
    throw GroupError("all-gather failed on rank " + std::to_string(faults_.rank()) +
                         ": injected group failure at exchange (local, nothing sent)",
                     Op::kAllGather, faults_.rank());
  }
  faults_.throwForeign(SeamCall::kExchange);
  if (faults_.reorderCollectives(Point::kExchange)) {
    // The rank enters the agreement (voting 1, as a rank that mapped every peer) while its peers
    // are in the exchange. A group that paired the two would return here; the rank then makes
    // its exchange, late: the two calls swapped.
    (void)inner_.allReduceMin(1);
  }

  std::vector<SideHandles> side;
  std::vector<std::vector<std::byte>> entries =
      faults_.staleExchange() || faults_.aliasExchange() || faults_.mappedExchange()
          ? gatherWithSideHandles(bytes, side)
          : inner_.allGather(bytes);
  const int ranks = static_cast<int>(entries.size());
  // What each peer exported, as it sent it: what the open of that peer must reach.
  for (int peer = 0; peer < ranks; ++peer) {
    std::vector<std::byte>& entry = entries[static_cast<std::size_t>(peer)];
    if (peer == faults_.rank()) continue;
    const std::span<std::byte> handle = handleRegion(entry);
    if (handle.size() != IpcHandle::kSize) continue;
    RankFaults::Exported exported;
    std::memcpy(exported.handle.bytes.data(), handle.data(), IpcHandle::kSize);
    // 0 (unknown) for a bare handle, not an entry.
    exported.bytes = ExchangeEntry::registration(entry).size;
    faults_.putExported(peer, exported);
  }
  // exchange-long first: the decoder refuses a list of the wrong length before it reads any entry,
  // so the handle and entry faults below are not what this rank's failure is about (the rules keep
  // entry-corrupt off its rank). The extra entry is a well-formed one (this rank's own, as sent):
  // only the length is wrong.
  if (faults_.lengthenExchange(entries.size())) {
    entries.emplace_back(bytes.begin(), bytes.end());
  }
  // handle-stale, then handle-aliased, then handle-mapped: the handle a peer sent beside its
  // entry replaces the one in it (handle-mapped's only where the peer had one: not all zeros).
  for (int peer = 0; peer < static_cast<int>(side.size()); ++peer) {
    const std::span<std::byte> handle = handleRegion(entries[static_cast<std::size_t>(peer)]);
    const SideHandles& sent = side[static_cast<std::size_t>(peer)];
    if (handle.empty()) continue;
    if (sent.stale && faults_.staleHandle(peer)) {
      std::copy(sent.stale->bytes.begin(), sent.stale->bytes.end(), handle.begin());
    } else if (sent.aliased && faults_.aliasedHandle(peer)) {
      std::copy(sent.aliased->bytes.begin(), sent.aliased->bytes.end(), handle.begin());
    } else if (sent.mapped && *sent.mapped != IpcHandle{} && faults_.mappedHandle(peer)) {
      std::copy(sent.mapped->bytes.begin(), sent.mapped->bytes.end(), handle.begin());
    }
  }
  for (int peer = 0; peer < ranks; ++peer) {
    const std::span<std::byte> handle = handleRegion(entries[static_cast<std::size_t>(peer)]);
    if (handle.empty() || !faults_.corruptHandle(peer)) continue;
    for (std::byte& b : handle) b = ~b;
  }
  // Whole entries (not the seed's bare handles), damaged after the handle faults so that both can
  // fire on one entry: a failure record is the entry without a handle.
  for (int peer = 0; peer < ranks; ++peer) {
    std::vector<std::byte>& entry = entries[static_cast<std::size_t>(peer)];
    if (entry.size() != ExchangeEntry::kSize) continue;
    const bool failureRecord = ExchangeEntry::handleBytes(entry).empty();
    if (const auto part = faults_.corruptEntry(peer, failureRecord)) {
      damage(entry, *part, failureRecord);
    }
  }
  // This rank's entry is posted and every other rank received it: they go on to open its handle.
  // (What this rank received was damaged in transit before: a rank that stops here damaged
  // nothing the rules let it plant.)
  faults_.atPoint(Point::kExchangeRecv, control_);
  return entries;
}

std::vector<std::vector<std::byte>> FaultyGroup::gatherWithSideHandles(
    std::span<const std::byte> bytes, std::vector<SideHandles>& side) {
  std::vector<std::byte> own(bytes.begin(), bytes.end());
  const bool ownHasHandle = !handleRegion(own).empty();
  // A rank that sends a failure record made no handle, so no stale or aliased one either: it
  // sends zeros in their place (no peer reads them: a failure record's handles are never used).
  auto made = [&](std::optional<IpcHandle> handle, const char* site) {
    if (!handle && !ownHasHandle) handle = IpcHandle{};
    if (!handle) {
      throw std::logic_error(std::string("FaultyGroup: the scenario has ") + site +
                             " faults but this rank's FaultyBackend made no such handle; wrap "
                             "the backend in a FaultyBackend sharing this RankFaults");
    }
    return *handle;
  };
  std::vector<std::byte> payload(bytes.begin(), bytes.end());
  if (faults_.staleExchange()) {
    const IpcHandle stale = made(faults_.takeStaleHandle(), "handle-stale");
    payload.insert(payload.end(), stale.bytes.begin(), stale.bytes.end());
  }
  if (faults_.aliasExchange()) {
    const IpcHandle aliased = made(faults_.takeAliasedHandle(), "handle-aliased");
    payload.insert(payload.end(), aliased.bytes.begin(), aliased.bytes.end());
  }
  if (faults_.mappedExchange()) {
    const IpcHandle mapped = made(faults_.takeMappedHandle(), "handle-mapped");
    payload.insert(payload.end(), mapped.bytes.begin(), mapped.bytes.end());
  }

  std::vector<std::vector<std::byte>> all = inner_.allGather(payload);
  std::vector<std::vector<std::byte>> entries;
  entries.reserve(all.size());
  side.assign(all.size(), SideHandles{});
  for (int peer = 0; peer < static_cast<int>(all.size()); ++peer) {
    const std::vector<std::byte>& sent = all[static_cast<std::size_t>(peer)];
    if (sent.size() != payload.size()) {
      throw GroupError("rank " + std::to_string(peer) + " sent " + std::to_string(sent.size()) +
                           " bytes, expected its entry and its side handles (" +
                           std::to_string(payload.size()) + ")",
                       Op::kAllGather, faults_.rank(), peer);
    }
    auto at = sent.begin() + static_cast<std::ptrdiff_t>(bytes.size());
    entries.emplace_back(sent.begin(), at);
    auto take = [&](std::optional<IpcHandle>& into) {
      IpcHandle handle;
      std::copy(at, at + static_cast<std::ptrdiff_t>(IpcHandle::kSize), handle.bytes.begin());
      at += static_cast<std::ptrdiff_t>(IpcHandle::kSize);
      into = handle;
    };
    if (faults_.staleExchange()) take(side[static_cast<std::size_t>(peer)].stale);
    if (faults_.aliasExchange()) take(side[static_cast<std::size_t>(peer)].aliased);
    if (faults_.mappedExchange()) take(side[static_cast<std::size_t>(peer)].mapped);
  }
  return entries;
}

}  // namespace peerconf::faults
