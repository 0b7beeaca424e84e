// FaultyGroup: group failures, points, and handle faults applied around the inner collectives.
#include "faults/faulty_group.h"

#include <stdexcept>
#include <string>

#include "errors.h"
#include "ipc_backend.h"

namespace peerconf::faults {

using harness::Point;

FaultyGroup::FaultyGroup(Group& inner, RankFaults& faults, RankControl& control)
    : inner_(inner), faults_(faults), control_(control) {}

int FaultyGroup::allReduceMin(int value) {
  faults_.atPoint(Point::kAgree, control_);
  if (faults_.failGroup(Point::kAgree)) {
    throw GroupError("all-reduce failed on rank " + std::to_string(faults_.rank()) +
                         ": injected group failure at agree (local, nothing sent)",
                     Op::kAllReduce, faults_.rank());
  }
  return inner_.allReduceMin(value);
}

std::vector<std::vector<std::byte>> FaultyGroup::allGather(std::span<const std::byte> bytes) {
  if (bytes.size() != IpcHandle::kSize) return inner_.allGather(bytes);

  faults_.atPoint(Point::kExchange, control_);
  if (faults_.failGroup(Point::kExchange)) {
    throw GroupError("all-gather failed on rank " + std::to_string(faults_.rank()) +
                         ": injected group failure at exchange (local, nothing sent)",
                     Op::kAllGather, faults_.rank());
  }

  std::vector<std::vector<std::byte>> handles =
      faults_.staleExchange() ? gatherWithStale(bytes) : inner_.allGather(bytes);
  for (int peer = 0; peer < static_cast<int>(handles.size()); ++peer) {
    if (!faults_.corruptHandle(peer)) continue;
    for (std::byte& b : handles[static_cast<std::size_t>(peer)]) b = ~b;
  }
  return handles;
}

std::vector<std::vector<std::byte>> FaultyGroup::gatherWithStale(std::span<const std::byte> bytes) {
  const std::optional<IpcHandle> stale = faults_.takeStaleHandle();
  if (!stale) {
    throw std::logic_error(
        "FaultyGroup: the scenario has handle-stale faults but this rank's FaultyBackend made no "
        "stale handle; wrap the backend in a FaultyBackend sharing this RankFaults");
  }
  std::vector<std::byte> payload(bytes.begin(), bytes.end());
  payload.insert(payload.end(), stale->bytes.begin(), stale->bytes.end());

  std::vector<std::vector<std::byte>> both = inner_.allGather(payload);
  std::vector<std::vector<std::byte>> handles;
  handles.reserve(both.size());
  for (int peer = 0; peer < static_cast<int>(both.size()); ++peer) {
    const std::vector<std::byte>& sent = both[static_cast<std::size_t>(peer)];
    if (sent.size() != 2 * IpcHandle::kSize) {
      throw GroupError("rank " + std::to_string(peer) + " sent " + std::to_string(sent.size()) +
                           " bytes, expected a handle and a stale handle (" +
                           std::to_string(2 * IpcHandle::kSize) + ")",
                       Op::kAllGather, faults_.rank(), peer);
    }
    const auto half = faults_.staleHandle(peer) ? sent.begin() + IpcHandle::kSize : sent.begin();
    handles.emplace_back(half, half + IpcHandle::kSize);
  }
  return handles;
}

}  // namespace peerconf::faults
