// The in-process device memory of simulated time (internal to the mock runtime): one anonymous
// shared-memory file per process, mapped once as several views at fixed addresses, from which a
// run's segments are carved without a system call. The runtime's semantics stay those of the
// memfd segments (segment.h), which the arena replaces only as backing store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace peerconf::mock_hip::detail {

// A segment is a range of the file (offset, bytes). View 0 holds every owner's allocations; a
// peer's mapping of a segment is the same range in another view (views alias one file), so the
// owner's and the peer's addresses differ while their bytes are one, as two mmaps of one memfd.
// Each device carves its segments from a region of its own (chunks from its first kChunkArea
// bytes, larger blocks after them), so that a rank's memory sits at the same place run after run
// and the pages a run touches stay few, resident and warm.
// Within a run nothing is reused but a freed large block's place: a segment takes the space after
// the device's last one (a 64 KiB hole between them, as the placement cursor leaves), and a
// segment's every new peer mapping takes the next view (Segment::views), so a pointer kept past its
// free or close never names newer memory (where the memfd runtime would fault, the arena's ASan
// poisoning reports it). The exception is CUDA's: the next block of a freed large block's device
// and size takes its place (runtime_table.yaml large-block-reuse): its range again (reuse) once no
// peer maps it, else a memfd mapped over view 0 there (overlaid, restore), so that a peer's
// mapping of the freed block keeps its bytes (free-while-mapped-contents).
// Between runs the arena rewinds: what the run's segments handed out is zeroed (a chunk up to its
// high-water mark; a larger block where its pages are resident: a huge buffer costs what was
// touched), and the next run starts again at an offset drawn from its seed.
//
// Every call with the runtime's mutex held (runtime_state.h); one arena per process (a forked
// child maps a file of its own at its first use: a parent's views are shared memory).
class Arena {
 public:
  // Bytes of each view, kDeviceBytes for each of the first kDevices devices (a device past them,
  // or a segment past its device's room, is a memfd).
  static constexpr std::uint64_t kViewBytes = std::uint64_t{16} << 30;
  static constexpr int kDevices = 64;
  static constexpr std::uint64_t kDeviceBytes = kViewBytes / kDevices;
  static constexpr std::uint64_t kChunkArea = std::uint64_t{32} << 20;
  // Views at most (the owners' and 15 peer mappings of one segment); past it a peer's mapping is a
  // mapping of the file of its own (mapExtra).
  static constexpr int kViews = 16;
  static constexpr std::uint64_t kAlign = std::uint64_t{64} << 10;

  static Arena& get();

  // The offset of `bytes` of new space for `device` (a chunk, or a larger block), unpoisoned in
  // view 0; nullopt when the device has no room left (or the file cannot be made): the caller
  // makes a memfd segment instead.
  std::optional<std::uint64_t> reserve(int device, std::size_t bytes, bool chunk);
  // The address of `offset` in view `view`, the view mapped at its first use (at a fixed address:
  // every process of a run sees the same pointers); 0 when it cannot be mapped.
  std::uint64_t address(int view, std::uint64_t offset);
  // A peer's mapping of [offset, +bytes) in view `view` (>= 1) begins or ends: ASan is told.
  void mapped(int view, std::uint64_t offset, std::size_t bytes);
  void unmapped(int view, std::uint64_t offset, std::size_t bytes);
  // The owner's segment at `offset` of `bytes` is freed: its view-0 range is poisoned (ASan), and
  // at the next rewind its first `used` bytes are zeroed (a chunk's high-water mark), or, with
  // `used` 0, the pages of its whole range that are resident.
  void released(std::uint64_t offset, std::size_t bytes, std::size_t used);
  // A freed segment's range, no peer mapping of it left, taken again by a new segment of the same
  // device and size (its place: runtime_table.yaml large-block-reuse): zeroed (a new block holds
  // zeros, fresh-large-recycled) and unpoisoned in view 0. Its offset.
  std::uint64_t reuse(std::uint64_t offset, std::size_t bytes);
  // A memfd segment is mapped over view 0's [offset, +bytes) (a free place whose range a peer
  // still maps: the new block takes the place with memory of its own), or it went and the arena's
  // file is mapped back there (false if the kernel refused: the range is then unmapped).
  void overlaid(std::uint64_t offset, std::size_t bytes);
  bool restore(std::uint64_t offset, std::size_t bytes);
  // Past kViews: the range mapped on its own at a kernel-chosen address (0 on failure); unmapped
  // with unmapExtra.
  std::uint64_t mapExtra(std::uint64_t offset, std::size_t bytes);
  void unmapExtra(std::uint64_t base, std::size_t bytes);
  // Nothing of the arena is live any more: what the freed segments handed out is zeroed and the
  // next reservation of each device is at its start (drawn from `seed`; nullopt: as before).
  void rewind(std::optional<std::uint64_t> seed);
  // A forked child's arena is its parent's memory: forgotten (never touched again in the child).
  void forget() noexcept;

  // Counters for the bench and tests.
  struct Stats {
    std::uint64_t zeroedBytes = 0;
    std::uint64_t segments = 0;
    int views = 0;
    int files = 0;
  };
  Stats stats() const { return stats_; }

 private:
  Arena() = default;
  bool ensureFile();
  void zero(std::uint64_t offset, std::size_t bytes, bool residentOnly);

  struct Freed {
    std::uint64_t offset;
    std::size_t bytes;
    bool residentOnly;
  };

  int fd_ = -1;
  std::uint64_t bases_[kViews] = {};
  std::uint64_t touched_[kViews] = {};      // one past the last byte of each view ASan was told of
  std::uint64_t start_ = 0;                 // a run's first segment, in each device's areas
  std::uint64_t nextChunk_[kDevices] = {};  // the next chunk's offset in the device's chunk area
  std::uint64_t nextLarge_[kDevices] = {};  // the next larger block's offset after it
  bool used_[kDevices] = {};
  std::vector<Freed> freed_;  // zeroed at the next rewind
  Stats stats_;
};

}  // namespace peerconf::mock_hip::detail
