// POSIX shared-memory segments backing mock device allocations (internal to the mock runtime).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peerconf::mock_hip::detail {

// A mapping, or the errno of the step that failed (`base` null).
struct Mapped {
  void* base = nullptr;
  int fd = -1;  // the segment's descriptor, when the caller asked to keep it
  int error = 0;
  const char* step = "";  // "shm_open", "fchmod", "ftruncate", "fstat", "owner", "size", "mmap"
};

// Creates a new segment (O_CREAT | O_EXCL, mode 0600) of `size` bytes and maps it shared, keeping
// its descriptor open when `keepFd` (so this process can map it again without a lookup by name).
// On failure nothing is left behind: a segment this call created is unlinked again.
Mapped createSegment(const std::string& name, std::size_t size, bool keepFd);
// Maps an existing segment at a new address; "owner" fails (EPERM) unless it is this user's and
// mode 0600, "size" (EINVAL) unless it is exactly `size` bytes.
Mapped openSegment(const std::string& name, std::size_t size);
// Maps an open descriptor of `size` bytes at a new address: the next one of the placement cursor
// when it is set (placeMappingsAt), else wherever the kernel puts it.
Mapped mapSegment(int fd, std::size_t size);
// The placement cursor: mappings go one after another from `base` (a 64 KiB hole after each, so an
// overrun faults), taken only where nothing is mapped (MAP_FIXED_NOREPLACE; a taken address is
// skipped). So a run that maps the same sizes in the same order gets the same addresses in every
// process. 0: no cursor, the kernel's addresses.
void placeMappingsAt(std::uint64_t base) noexcept;
// splitmix64's output function: a seed's draws (placementBase; mock_hip::beginRun's allocation
// numbers, on another constant).
std::uint64_t mixSeed(std::uint64_t z) noexcept;
// Where a run's mappings start for `seed`: a 64 MiB step, drawn from the seed, into a window below
// where the kernel maps libraries and stacks (and inside the sanitizers' application ranges).
std::uint64_t placementBase(std::uint64_t seed) noexcept;
void unmapSegment(void* base, std::size_t size) noexcept;
void closeSegment(int fd) noexcept;
// ENOENT is not an error: a sweep in another process may have got there first.
void unlinkSegment(const std::string& name) noexcept;

// A fresh random nonce for a segment name, never 0 (the value of a HandleInfo that sets none):
// getrandom, or the test's source below.
std::uint64_t randomNonce();
// Tests only: where allocations draw their segment-name nonces from (nullptr: getrandom, the
// default). Lets a test plant the exact name an allocation is about to try.
using NonceSource = std::uint64_t (*)();
void setNonceSourceForTesting(NonceSource source) noexcept;

struct SegmentId {
  std::uint64_t job;
  int pid;
  std::uint64_t generation;
  std::uint64_t nonce;
};
// Parses a /dev/shm file name ("peerconf.<hex>.<pid>.<generation>.<hex>", no leading slash).
std::optional<SegmentId> parseSegmentName(std::string_view fileName);

}  // namespace peerconf::mock_hip::detail
