// The mock runtime's process-wide state (internal): the tables of allocations and mappings behind
// one mutex, the ledgers and fault hooks, and this thread's failure detail. The HIP entry points
// (runtime_api.cc) and the harness's control API (control.cc) share it. System calls (memfd_create,
// mmap, munmap, close) run outside the mutex so ranks as threads overlap.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "mock_hip/control.h"

namespace peerconf::mock_hip::detail {

// Why this thread's most recent call failed (lastErrorDetail()); every call clears it first.
extern thread_local std::string tDetail;

std::uint64_t nowNs();
// PEERCONF_MOCK_DEVICES, read once (default 64).
int deviceCount();
std::string hex(std::uint64_t value);
std::string pointerText(std::uint64_t ptr);

// Blocks below this size are sub-allocated from a chunk of this size, as CUDA's allocator does
// (measured on H200: a freed small block's IPC handle still opens while its chunk lives, onto
// whatever occupies that address now); a block of this size or more is a segment of its own.
inline constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
// Offsets of blocks inside a chunk are multiples of this (and handles carry offset / it).
inline constexpr std::size_t kBlockAlign = 512;

// A shared-memory segment backing device memory: one large block, or a chunk that small blocks
// are carved from. Its name and a peer's open name the segment; a block is the segment plus an
// offset.
struct Segment {
  std::uint64_t job = 0;
  std::uint64_t generation = 0;  // in its name and every handle of its blocks
  std::uint64_t nonce = 0;       // random, in its name and every handle of its blocks
  std::string name;
  int device = -1;
  std::size_t size = 0;
  int fd = -1;  // its descriptor (segment.h), kept while the segment lives
  // In the arena (arena.h) instead of a memfd of its own: its offset there (fd is then -1), and
  // how many peer mappings it has had (each new one takes the next view: nothing reused in a run).
  std::int64_t arenaOffset = -1;
  int views = 0;
  // A memfd segment mapped over the arena's view 0 at a free place of the arena that a peer still
  // maps (so its range of the file cannot be the new block's): that offset, -1 otherwise. Its
  // release maps the arena back there (Arena::restore) instead of unmapping.
  std::int64_t overArena = -1;
  bool chunk = false;
  // A chunk's live blocks: offset -> bytes taken. A freed block's place keeps what was written
  // there (fresh memory in a live chunk is recycled, as on CUDA); a new chunk is zero.
  std::map<std::size_t, std::size_t> blocks;
  // An arena chunk's bytes below this were handed out: what the arena zeroes once it is freed
  // (a new arena chunk is zero as a new memfd is, at the cost of what the run touched only).
  std::size_t highWater = 0;
};

struct Allocation {
  LedgerEntry entry;       // op kAlloc, as recorded
  std::uint64_t segment;   // base address of its segment (entry.ptr for a large block)
  std::size_t offset = 0;  // in the segment
  std::size_t taken = 0;   // bytes of the chunk it occupies (entry.size rounded up)
};

// A segment as one device of this process maps it through IPC handles: mapped once and shared by
// every open of any of its blocks, each open counted, unmapped when the last is closed (as CUDA
// maps a chunk once: opening a handle twice gives the same address, two blocks of one chunk sit
// as far apart as in their owner; runtime_table.yaml open-twice, sub-block-offsets).
// Key: (opening device, owner pid, segment generation, nonce).
using PeerMappingKey = std::tuple<int, int, std::uint64_t, std::uint64_t>;
struct PeerMapping {
  std::uint64_t base = 0;
  std::size_t size = 0;
  int opens = 0;
  // An arena segment's (arena.h): the view it is in and its offset there; view -1 with an arena
  // offset: a mapping of the arena's file of its own (past the views). Else a memfd's mmap.
  int view = -1;
  std::int64_t arenaOffset = -1;
};
// Gives a peer mapping up: unmaps it, or tells the arena; `mu` must be held for an arena one.
void releasePeerMapping(const PeerMapping& mapping);
// Gives a freed segment's memory up (the caller took it out of the tables): unmaps and closes a
// memfd's, tells the arena of an arena's; `mu` must be held for an arena one and for a memfd over
// the arena (Segment::overArena), whose range the arena's file is mapped back to. False only when
// that mapping back failed (the range is then unmapped: no place to keep).
bool releaseSegment(std::uint64_t base, const Segment& segment);
// The place of a freed block of its own segment (2 MiB or more), kept empty for the next block of
// the same device and size, which takes it (as on CUDA: runtime_table.yaml large-block-reuse); a
// freed block's handle then opens onto that block (stale-large-place-taken). A memfd segment's
// place stays reserved (mapped PROT_NONE: reservePlace) so that nothing else lands there; an
// arena segment's is its offset in the arena.
struct FreePlace {
  int device = -1;
  std::uint64_t base = 0;
  std::size_t size = 0;
  std::uint64_t job = 0;
  std::int64_t arenaOffset = -1;
};
// How many free places a process keeps at most; past it the oldest is given back (unmapped: the
// kernel may put anything there, and a handle of the block freed there is refused, as any stale
// handle whose place nothing of its size took).
inline constexpr std::size_t kMaxFreePlaces = 256;
// Gives up a free place's reservation (a memfd's; an arena's needs nothing). No lock needed.
void releasePlace(const FreePlace& place) noexcept;

// A block's mapped address: the segment mapping it is in, and how many opens hold it.
struct MappingSpan {
  PeerMappingKey key;
  int opens = 0;
};

// Process-wide state. Never destroyed: HIP calls may come from static destructors.
class Runtime {
 public:
  static Runtime& get() {
    static Runtime* const runtime = new Runtime();
    return *runtime;
  }

  // Appends to the ledger of entry.device; `mu` must be held.
  void record(const LedgerEntry& entry) {
    if (entry.device >= 0 && entry.device < static_cast<int>(ledgers.size())) {
      ledgers[static_cast<std::size_t>(entry.device)].push_back(entry);
    }
  }

  // Records a failed call and passes its error through.
  hipError_t recordFailure(const LedgerEntry& entry) {
    std::lock_guard lock(mu);
    record(entry);
    return static_cast<hipError_t>(entry.error);
  }

  // Why `ptr` is not what a call wanted; `mu` must be held.
  std::string describe(std::uint64_t ptr) const;

  // True when [ptr, ptr + size) lies inside one live allocation or mapping; `mu` must be held.
  bool isDeviceRange(std::uint64_t ptr, std::size_t size) const;

  // The GPU whose memory `device` draws on (placeOnGpu); `mu` must be held.
  int gpuOf(int device) const {
    const auto it = gpus.find(device);
    return it != gpus.end() ? it->second : device;
  }

  // The memory of `device` (setDeviceMemory); `mu` must be held.
  std::size_t capacityOf(int device) const {
    const auto it = capacities.find(device);
    return it != capacities.end() ? it->second : kDefaultDeviceMemory;
  }

  // Bytes the live allocations of every device on `gpu` hold; `mu` must be held.
  std::size_t usedOn(int gpu) const {
    std::size_t used = 0;
    for (const auto& [base, allocation] : allocations) {
      if (gpuOf(allocation.entry.device) == gpu) used += allocation.entry.size;
    }
    return used;
  }

  // getpid() is a system call on current glibc; forked children refresh this.
  int pid() const { return pid_.load(std::memory_order_relaxed); }

  // The segment whose generation is `generation`, or null; `mu` must be held.
  Segment* segmentOf(std::uint64_t generation) {
    const auto it = segmentByGeneration.find(generation);
    return it == segmentByGeneration.end() ? nullptr : &segments.at(it->second);
  }

  std::mutex mu;
  std::map<std::uint64_t, Allocation> allocations;                       // by base address
  std::unordered_map<std::uint64_t, std::uint64_t> byGeneration;         // live generation -> base
  std::map<std::uint64_t, Segment> segments;                             // by base address
  std::unordered_map<std::uint64_t, std::uint64_t> segmentByGeneration;  // -> base
  std::map<std::uint64_t, LedgerEntry> mappings;  // op kOpen entries, by mapped address
  std::map<std::uint64_t, MappingSpan> spans;     // by mapped address: its segment mapping
  std::map<PeerMappingKey, PeerMapping> peerMappings;
  std::vector<FreePlace> freePlaces;              // oldest first
  std::vector<std::vector<LedgerEntry>> ledgers;  // indexed by device
  std::unordered_map<int, FaultHook> hooks;
  std::unordered_map<int, int> gpus;  // device -> GPU, for the placed ones (placeOnGpu)
  std::unordered_map<int, std::size_t> capacities;  // device -> bytes (setDeviceMemory)
  // GPU -> bytes of allocations under way (their segment being created outside `mu`), counted
  // as used so that two allocations at once cannot both take the last free bytes.
  std::unordered_map<int, std::size_t> reserved;
  // Where new segments go (beginRun): the arena on simulated time, memfds otherwise.
  DeviceMemory memory = DeviceMemory::kSegments;
  std::atomic<bool> anyHook{false};
  std::atomic<std::uint64_t> nextGeneration{1};

 private:
  Runtime();

  // Forking while another thread holds `mu` would leave the child's copy locked forever.
  static void prepareFork();
  static void parentAfterFork();
  // The child is a new process of the same job: what the parent held stays mapped in it, but is
  // not the child's to free, close or report.
  static void childAfterFork();

  std::atomic<int> pid_;
};

}  // namespace peerconf::mock_hip::detail
