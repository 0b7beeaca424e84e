// The arena (arena.h): one memfd, views mapped once at fixed addresses, a bump pointer a device
// rewound between runs, what the freed segments handed out zeroed, and ASan told what is live.
#include "mock_hip/arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "mock_hip/segment.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEERCONF_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PEERCONF_ARENA_ASAN 1
#endif
#if defined(PEERCONF_ARENA_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace peerconf::mock_hip::detail {

namespace {

// Above the placement cursor's window (segment.cc: 0x7e90'0000'0000 and 64 GiB of steps) and a
// run's mappings after it, inside ASan's and TSan's application ranges: kViews views of
// kViewBytes, 256 GiB, up to 0x7ee8'0000'0000, below where the kernel maps libraries and stacks.
static_assert(Arena::kViews * Arena::kViewBytes <= 0x40'0000'0000ULL);
constexpr std::uint64_t kArenaWindow = 0x7ea8'0000'0000ULL;
// A run's first segment of each device: one of this many kAlign steps into the device's areas,
// drawn from its seed (so pointers move with the seed, while the pages a run touches stay few).
constexpr std::uint64_t kStarts = 16;
static_assert(kStarts * Arena::kAlign < Arena::kChunkArea / 2);

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

void* at(std::uint64_t address) { return reinterpret_cast<void*>(address); }

void poison([[maybe_unused]] std::uint64_t address, [[maybe_unused]] std::size_t bytes) {
#if defined(PEERCONF_ARENA_ASAN)
  if (address != 0 && bytes != 0) __asan_poison_memory_region(at(address), bytes);
#endif
}

void unpoison([[maybe_unused]] std::uint64_t address, [[maybe_unused]] std::size_t bytes) {
#if defined(PEERCONF_ARENA_ASAN)
  if (address != 0 && bytes != 0) __asan_unpoison_memory_region(at(address), bytes);
#endif
}

std::uint64_t roundUp(std::uint64_t bytes, std::uint64_t to) { return (bytes + to - 1) / to * to; }

}  // namespace

Arena& Arena::get() {
  static Arena* const arena = new Arena();  // never destroyed, as the runtime
  return *arena;
}

bool Arena::ensureFile() {
  if (fd_ >= 0) return true;
  int fd = ::memfd_create("peerconf.arena", MFD_CLOEXEC | MFD_NOEXEC_SEAL);
  if (fd < 0) fd = ::memfd_create("peerconf.arena", MFD_CLOEXEC);
  if (fd < 0) return false;
  if (::ftruncate(fd, static_cast<off_t>(kViewBytes)) != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  ++stats_.files;
  return true;
}

std::uint64_t Arena::address(int view, std::uint64_t offset) {
  if (view < 0 || view >= kViews || !ensureFile()) return 0;
  std::uint64_t& base = bases_[view];
  if (base == 0) {
    const std::uint64_t fixed = kArenaWindow + static_cast<std::uint64_t>(view) * kViewBytes;
    constexpr int kProt = PROT_READ | PROT_WRITE;
    void* mapped = ::mmap(at(fixed), kViewBytes, kProt, MAP_SHARED | MAP_FIXED_NOREPLACE, fd_, 0);
    // Taken (or a kernel that ignores the flag put it elsewhere): anywhere. Pointers then differ
    // from process to process, nothing else.
    if (mapped != MAP_FAILED && mapped != at(fixed)) {
      ::munmap(mapped, kViewBytes);
      mapped = MAP_FAILED;
    }
    if (mapped == MAP_FAILED) mapped = ::mmap(nullptr, kViewBytes, kProt, MAP_SHARED, fd_, 0);
    if (mapped == MAP_FAILED) return 0;
    base = reinterpret_cast<std::uintptr_t>(mapped);
    ++stats_.views;
  }
  return base + offset;
}

std::optional<std::uint64_t> Arena::reserve(int device, std::size_t bytes, bool chunk) {
  if (device < 0 || device >= kDevices || !ensureFile()) return std::nullopt;
  const auto d = static_cast<std::size_t>(device);
  if (!used_[d]) {
    used_[d] = true;
    nextChunk_[d] = start_;
    nextLarge_[d] = kChunkArea + start_;
  }
  const std::uint64_t span = roundUp(bytes, kAlign) + kAlign;  // a hole after it, as the cursor
  std::uint64_t& next = chunk ? nextChunk_[d] : nextLarge_[d];
  const std::uint64_t end = chunk ? kChunkArea : kDeviceBytes;
  if (next > end || span > end - next) return std::nullopt;
  const std::uint64_t offset = device * kDeviceBytes + next;
  const std::uint64_t base = address(0, offset);
  if (base == 0) return std::nullopt;
  next += span;
  unpoison(base, bytes);
  poison(base + bytes, span - bytes);
  touched_[0] = std::max(touched_[0], offset + span);
  ++stats_.segments;
  return offset;
}

void Arena::mapped(int view, std::uint64_t offset, std::size_t bytes) {
  unpoison(bases_[view] != 0 ? bases_[view] + offset : 0, bytes);
  touched_[view] = std::max(touched_[view], offset + bytes);
}

void Arena::unmapped(int view, std::uint64_t offset, std::size_t bytes) {
  poison(bases_[view] != 0 ? bases_[view] + offset : 0, bytes);
}

void Arena::released(std::uint64_t offset, std::size_t bytes, std::size_t used) {
  poison(bases_[0] != 0 ? bases_[0] + offset : 0, bytes);
  freed_.push_back(used != 0 ? Freed{offset, used, false} : Freed{offset, bytes, true});
}

std::uint64_t Arena::reuse(std::uint64_t offset, std::size_t bytes) {
  zero(offset, bytes, true);  // leaves it poisoned
  unpoison(bases_[0] + offset, bytes);
  ++stats_.segments;
  return offset;
}

void Arena::overlaid(std::uint64_t offset, std::size_t bytes) {
  unpoison(bases_[0] + offset, bytes);
}

bool Arena::restore(std::uint64_t offset, std::size_t bytes) {
  void* back = ::mmap(at(bases_[0] + offset), bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                      fd_, static_cast<off_t>(offset));
  if (back == MAP_FAILED) {
    ::munmap(at(bases_[0] + offset), bytes);
    return false;
  }
  poison(bases_[0] + offset, bytes);  // freed: as released() left it
  return true;
}

std::uint64_t Arena::mapExtra(std::uint64_t offset, std::size_t bytes) {
  if (!ensureFile()) return 0;
  void* mapped =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
  return mapped == MAP_FAILED ? 0 : reinterpret_cast<std::uintptr_t>(mapped);
}

void Arena::unmapExtra(std::uint64_t base, std::size_t bytes) { ::munmap(at(base), bytes); }

void Arena::zero(std::uint64_t offset, std::size_t bytes, bool residentOnly) {
  const std::uint64_t from = bases_[0] + offset;
  unpoison(from, bytes);  // free: poisoned again below
  if (!residentOnly) {
    std::memset(at(from), 0, bytes);
    stats_.zeroedBytes += bytes;
  } else {
    // Only the pages some view touched hold anything: the rest of the file is a hole.
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t pages = (bytes + page - 1) / page;
    std::vector<unsigned char> resident(pages);
    if (::mincore(at(from), pages * page, resident.data()) != 0) {
      std::fill(resident.begin(), resident.end(), 1);
    }
    for (std::uint64_t p = 0; p < pages;) {
      if ((resident[p] & 1) == 0) {
        ++p;
        continue;
      }
      std::uint64_t end = p;
      while (end < pages && (resident[end] & 1) != 0) ++end;
      const std::uint64_t length = std::min<std::uint64_t>(end * page, bytes) - p * page;
      std::memset(at(from + p * page), 0, length);
      stats_.zeroedBytes += length;
      p = end;
    }
  }
  poison(from, bytes);
}

void Arena::rewind(std::optional<std::uint64_t> seed) {
  if (bases_[0] != 0) {
    for (const Freed& f : freed_) zero(f.offset, f.bytes, f.residentOnly);
  }
  freed_.clear();
  if (seed) start_ = (mixSeed(*seed ^ 0x3C6EF372FE94F82BULL) % kStarts) * kAlign;
  std::fill(std::begin(used_), std::end(used_), false);
}

void Arena::forget() noexcept {
  for (int view = 0; view < kViews; ++view) {
    std::uint64_t& base = bases_[view];
    // What the kernel maps here next must not inherit the views' poison.
    unpoison(base, touched_[view]);
    if (base != 0) ::munmap(at(base), kViewBytes);
    base = 0;
    touched_[view] = 0;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  freed_.clear();
  std::fill(std::begin(used_), std::end(used_), false);
}

}  // namespace peerconf::mock_hip::detail
