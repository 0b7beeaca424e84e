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
  bool chunk = false;
  // A chunk's live blocks: offset -> bytes taken. A freed block's place keeps what was written
  // there (fresh memory in a live chunk is recycled, as on CUDA); a new chunk is zero.
  std::map<std::size_t, std::size_t> blocks;
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
};
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
  std::vector<std::vector<LedgerEntry>> ledgers;  // indexed by device
  std::unordered_map<int, FaultHook> hooks;
  std::unordered_map<int, int> gpus;  // device -> GPU, for the placed ones (placeOnGpu)
  std::unordered_map<int, std::size_t> capacities;  // device -> bytes (setDeviceMemory)
  // GPU -> bytes of allocations under way (their segment being created outside `mu`), counted
  // as used so that two allocations at once cannot both take the last free bytes.
  std::unordered_map<int, std::size_t> reserved;
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
