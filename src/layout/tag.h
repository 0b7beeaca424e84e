// Tags: the 64-bit word that names the pair in a slot (or an acknowledgement): the buffer's
// generation in the high half, the step's epoch in the low half.
#pragma once

#include <cstdint>

#include "layout/hd.h"

namespace peerconf::layout {

// Every word of the data plane: tags, acknowledgements and payload are 64-bit words.
using Word = std::uint64_t;

// A tag is written and read as one 64-bit atomic word, so its generation and epoch are never
// seen torn apart.
PEERCONF_HD constexpr Word makeTag(std::uint32_t generation, std::uint32_t epoch) {
  return (static_cast<Word>(generation) << 32) | epoch;
}
PEERCONF_HD constexpr std::uint32_t tagGeneration(Word tag) {
  return static_cast<std::uint32_t>(tag >> 32);
}
PEERCONF_HD constexpr std::uint32_t tagEpoch(Word tag) { return static_cast<std::uint32_t>(tag); }

// The epoch field is 32 bits and wraps; epochs compare by serial-number arithmetic (RFC 1982):
// the signed distance from `from` to `to`, valid while the two are less than 2^31 apart.
PEERCONF_HD constexpr std::int32_t epochDistance(std::uint32_t from, std::uint32_t to) {
  return static_cast<std::int32_t>(to - from);
}

}  // namespace peerconf::layout
