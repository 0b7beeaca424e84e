// The mock IPC handle format (64 bytes, little-endian fields, checksummed) and segment names.
//
//   0 magic "PCMH" | 4 version u16 | 6 offset / 512 u16 | 8 job u64 | 16 owner pid i32
//  20 owner device i32 | 24 generation u64 | 32 size u64 | 40 nonce u64
//  48 segment u64 (a chunk's block), or place u64 (a block of its own: its segment is its
//     generation, so the field holds its address in the owner instead)
//  56 FNV-1a of bytes 0..55
// Version 2 added the nonce, version 3 the segment and offset of a sub-allocated block, version 4
// a large block's place (earlier versions are refused).
#include <cstdio>
#include <cstring>

#include "mock_hip/control.h"

namespace peerconf::mock_hip {

namespace {

constexpr std::uint32_t kMagic = 0x484d4350;  // "PCMH"
constexpr std::uint16_t kVersion = 4;
constexpr std::size_t kBlockOffset = 6;
constexpr std::size_t kNonceOffset = 40;
constexpr std::size_t kSegmentOffset = 48;
constexpr std::size_t kChecksumOffset = 56;
constexpr std::size_t kBlockUnit = 512;  // detail::kBlockAlign
// A block of this size or more is a segment of its own (detail::kChunkBytes).
constexpr std::size_t kOwnSegmentBytes = std::size_t{2} << 20;

std::uint64_t fnv1a(const char* data, std::size_t n) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

template <typename T>
void put(hipIpcMemHandle_t& h, std::size_t offset, T value) {
  std::memcpy(h.reserved + offset, &value, sizeof(T));
}

template <typename T>
T get(const hipIpcMemHandle_t& h, std::size_t offset) {
  T value;
  std::memcpy(&value, h.reserved + offset, sizeof(T));
  return value;
}

}  // namespace

hipIpcMemHandle_t encodeHandle(const HandleInfo& info) {
  hipIpcMemHandle_t h{};
  put(h, 0, kMagic);
  put(h, 4, kVersion);
  put(h, 8, info.job);
  put(h, 16, static_cast<std::int32_t>(info.ownerPid));
  put(h, 20, static_cast<std::int32_t>(info.ownerDevice));
  put(h, 24, info.generation);
  put(h, 32, static_cast<std::uint64_t>(info.size));
  put(h, kNonceOffset, info.nonce);
  put(h, kBlockOffset, static_cast<std::uint16_t>(info.offset / kBlockUnit));
  if (info.size >= kOwnSegmentBytes) {
    put(h, kSegmentOffset, info.place);
  } else {
    put(h, kSegmentOffset, info.segment != 0 ? info.segment : info.generation);
  }
  return resealHandle(h);
}

hipIpcMemHandle_t resealHandle(hipIpcMemHandle_t handle) {
  put(handle, kChecksumOffset, fnv1a(handle.reserved, kChecksumOffset));
  return handle;
}

std::optional<HandleInfo> decodeHandle(const hipIpcMemHandle_t& h) {
  if (get<std::uint32_t>(h, 0) != kMagic || get<std::uint16_t>(h, 4) != kVersion) {
    return std::nullopt;
  }
  if (get<std::uint64_t>(h, kChecksumOffset) != fnv1a(h.reserved, kChecksumOffset)) {
    return std::nullopt;
  }
  HandleInfo info{};
  info.job = get<std::uint64_t>(h, 8);
  info.ownerPid = get<std::int32_t>(h, 16);
  info.ownerDevice = get<std::int32_t>(h, 20);
  info.generation = get<std::uint64_t>(h, 24);
  info.size = static_cast<std::size_t>(get<std::uint64_t>(h, 32));
  info.nonce = get<std::uint64_t>(h, kNonceOffset);
  info.offset = std::size_t{get<std::uint16_t>(h, kBlockOffset)} * kBlockUnit;
  if (info.size >= kOwnSegmentBytes) {
    info.segment = info.generation;
    info.place = get<std::uint64_t>(h, kSegmentOffset);
  } else {
    info.segment = get<std::uint64_t>(h, kSegmentOffset);
  }
  // Only what encodeHandle writes is a handle (found by fuzzing: a valid checksum over
  // unchecked bytes was accepted): a block of its own segment has offset 0 and is the segment.
  if (info.segment == 0 || (info.segment == info.generation && info.offset != 0)) {
    return std::nullopt;
  }
  return info;
}

std::string segmentName(std::uint64_t job, int pid, std::uint64_t generation, std::uint64_t nonce) {
  char name[96];
  std::snprintf(
      name, sizeof name, "/peerconf.%016llx.%d.%llu.%016llx", static_cast<unsigned long long>(job),
      pid, static_cast<unsigned long long>(generation), static_cast<unsigned long long>(nonce));
  return name;
}

std::string segmentName(const HandleInfo& info) {
  return segmentName(info.job, info.ownerPid, info.segment != 0 ? info.segment : info.generation,
                     info.nonce);
}

}  // namespace peerconf::mock_hip
