// The CPU group seam: the collectives the handshake needs, each with a deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <vector>

namespace peerconf {

// Every rank of the group must make the same calls in the same order. No call blocks past the
// group's deadline: it throws GroupTimeout instead; any other failure throws GroupError.
class Group {
 public:
  Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  virtual ~Group() = default;

  // This rank's index in [0, size()).
  virtual int rank() const = 0;
  // The number of ranks.
  virtual int size() const = 0;
  // The minimum of `value` over all ranks, returned on every rank.
  virtual int allReduceMin(int value) = 0;
  // Every rank's `bytes`, indexed by rank; every rank passes the same number of bytes.
  virtual std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) = 0;
};

// The deadline a group applies to each call when the caller names none.
inline constexpr std::chrono::milliseconds kDefaultGroupDeadline{30000};

}  // namespace peerconf
