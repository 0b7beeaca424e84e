// Anonymous shared-memory segments backing mock device allocations (internal to the mock runtime).
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
  int fd = -1;  // createSegment: the segment's descriptor, which the allocation keeps
  int error = 0;
  // createSegment: "memfd_create", "fchmod", "ftruncate", "mmap"; openSegment: "gone" (the owner
  // process has ended: ESRCH), "find" (no descriptor of the owner has that name: ENOENT), "open",
  // "fstat", "owner", "size", "mmap".
  const char* step = "";
};

// Creates a segment of `size` bytes with memfd_create (mode 0600, close-on-exec) and maps it
// shared. The segment has a name (`name` without its leading '/': what /proc/<pid>/fd shows as
// "/memfd:<name> (deleted)") but no file anywhere: the memory lives as long as a descriptor or a
// mapping of it does, so the kernel frees it with its last user, however the processes end
// (hipFree, exit, a signal, SIGKILL, a crash); nothing can be left in /dev/shm. The caller keeps
// `fd` for as long as the allocation lives: other processes reach the segment only through it
// (openSegment). On failure nothing is left open.
// With `at` (not 0) the segment is mapped there, over the reservation of a free place the caller
// holds (reservePlace), instead of at the cursor.
Mapped createSegment(const std::string& name, std::size_t size, std::uint64_t at = 0);
// Replaces the mapping [base, +size) of a freed segment with an inaccessible reservation (no
// memory, no file), so that the place stays empty until the caller maps a new segment there
// (createSegment's `at`); false (nothing changed) if the kernel refuses.
bool reservePlace(std::uint64_t base, std::size_t size) noexcept;
// The name (without its leading '/') of the memfd that process `pid` has mapped starting at
// `address` (/proc/<pid>/maps), or "" when nothing of a memfd starts there (an empty place: a
// reservation, or nothing).
std::string segmentMappedAt(int pid, std::uint64_t address);
// Maps, at a new address, the segment named `name` that process `pid` holds open: the one of its
// descriptors (/proc/<pid>/fd) whose target is that memfd name, opened through /proc (which
// needs the rights to read that process's descriptors: the same user, or root). "gone" fails
// (ESRCH) when the process has ended (a zombie too: its memory is released already), "find"
// (ENOENT) when no descriptor of its has that name (freed, or another nonce),
// "owner" (EPERM) unless the segment is this user's with mode 0600, "size" (EINVAL) unless it is
// exactly `size` bytes.
Mapped openSegment(int pid, const std::string& name, std::size_t size);
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
// Parses a segment's name without its leading slash ("peerconf.<hex>.<pid>.<generation>.<hex>"):
// a memfd's name, or the name of a /dev/shm file that builds before memfd segments left.
std::optional<SegmentId> parseSegmentName(std::string_view fileName);

}  // namespace peerconf::mock_hip::detail
