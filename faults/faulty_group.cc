// FaultyGroup: group failures, points, and handle faults applied around the inner collectives.
#include "faults/faulty_group.h"

#include <algorithm>
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

  std::vector<std::vector<std::byte>> entries =
      faults_.staleExchange() ? gatherWithStale(bytes) : inner_.allGather(bytes);
  // exchange-long first: the decoder refuses a list of the wrong length before it reads any entry,
  // so the handle and entry faults below are not what this rank's failure is about (the rules keep
  // entry-corrupt off its rank). The extra entry is a well-formed one (this rank's own, as sent):
  // only the length is wrong.
  const int ranks = static_cast<int>(entries.size());
  if (faults_.lengthenExchange(entries.size())) {
    entries.emplace_back(bytes.begin(), bytes.end());
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

std::vector<std::vector<std::byte>> FaultyGroup::gatherWithStale(std::span<const std::byte> bytes) {
  std::vector<std::byte> own(bytes.begin(), bytes.end());
  const bool ownHasHandle = !handleRegion(own).empty();
  // A rank that sends a failure record made no handle, so no stale one either: it sends zeros in
  // that place (no peer reads them: a failure record's stale half is never used).
  std::optional<IpcHandle> stale = faults_.takeStaleHandle();
  if (!stale && !ownHasHandle) stale = IpcHandle{};
  if (!stale) {
    throw std::logic_error(
        "FaultyGroup: the scenario has handle-stale faults but this rank's FaultyBackend made no "
        "stale handle; wrap the backend in a FaultyBackend sharing this RankFaults");
  }
  std::vector<std::byte> payload(bytes.begin(), bytes.end());
  payload.insert(payload.end(), stale->bytes.begin(), stale->bytes.end());

  std::vector<std::vector<std::byte>> both = inner_.allGather(payload);
  std::vector<std::vector<std::byte>> entries;
  entries.reserve(both.size());
  for (int peer = 0; peer < static_cast<int>(both.size()); ++peer) {
    const std::vector<std::byte>& sent = both[static_cast<std::size_t>(peer)];
    if (sent.size() != payload.size()) {
      throw GroupError("rank " + std::to_string(peer) + " sent " + std::to_string(sent.size()) +
                           " bytes, expected its entry and a stale handle (" +
                           std::to_string(payload.size()) + ")",
                       Op::kAllGather, faults_.rank(), peer);
    }
    std::vector<std::byte> entry(sent.begin(),
                                 sent.begin() + static_cast<std::ptrdiff_t>(bytes.size()));
    const std::span<std::byte> handle = handleRegion(entry);
    if (!handle.empty() && faults_.staleHandle(peer)) {
      std::copy(sent.end() - static_cast<std::ptrdiff_t>(IpcHandle::kSize), sent.end(),
                handle.begin());
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace peerconf::faults
