// The mock runtime's shared state: the device count, the process-wide tables (runtime_state.h)
// and how they survive fork.
#include "mock_hip/runtime_state.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "mock_hip/arena.h"
#include "mock_hip/segment.h"

namespace peerconf::mock_hip::detail {

namespace {

constexpr int kDefaultDevices = 64;
constexpr int kMaxDevices = 4096;

}  // namespace

thread_local std::string tDetail;

std::uint64_t nowNs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

int deviceCount() {
  static const int count = [] {
    const char* value = std::getenv("PEERCONF_MOCK_DEVICES");
    if (value == nullptr || *value == '\0') return kDefaultDevices;
    char* end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (*end != '\0' || n < 0 || n > kMaxDevices) {
      std::fprintf(stderr, "mock HIP: ignoring PEERCONF_MOCK_DEVICES=%s (want 0..%d); using %d\n",
                   value, kMaxDevices, kDefaultDevices);
      return kDefaultDevices;
    }
    return static_cast<int>(n);
  }();
  return count;
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string pointerText(std::uint64_t ptr) { return "0x" + hex(ptr); }

std::string Runtime::describe(std::uint64_t ptr) const {
  if (auto it = mappings.find(ptr); it != mappings.end()) {
    return pointerText(ptr) + " is an IPC mapping (of device " +
           std::to_string(it->second.ownerDevice) + "'s allocation), not an allocation";
  }
  if (auto it = allocations.find(ptr); it != allocations.end()) {
    return pointerText(ptr) + " is an allocation of device " +
           std::to_string(it->second.entry.device) + ", not an IPC mapping";
  }
  if (auto it = allocations.upper_bound(ptr); it != allocations.begin()) {
    --it;
    const LedgerEntry& a = it->second.entry;
    if (ptr < a.ptr + a.size) {
      return pointerText(ptr) + " is " + std::to_string(ptr - a.ptr) +
             " bytes into the allocation at " + pointerText(a.ptr) + " of device " +
             std::to_string(a.device) + ", not its base";
    }
  }
  return pointerText(ptr) +
         " is not a live allocation or mapping of this process (released already, or never "
         "allocated)";
}

bool Runtime::isDeviceRange(std::uint64_t ptr, std::size_t size) const {
  auto inside = [&](const LedgerEntry& e) { return ptr >= e.ptr && ptr + size <= e.ptr + e.size; };
  if (auto it = allocations.upper_bound(ptr); it != allocations.begin()) {
    if (inside(std::prev(it)->second.entry)) return true;
  }
  if (auto it = mappings.upper_bound(ptr); it != mappings.begin()) {
    if (inside(std::prev(it)->second)) return true;
  }
  return false;
}

Runtime::Runtime() : ledgers(static_cast<std::size_t>(deviceCount())), pid_(::getpid()) {
  ::pthread_atfork(&prepareFork, &parentAfterFork, &childAfterFork);
  sweepStaleSegments();
}

void releasePeerMapping(const PeerMapping& mapping) {
  if (mapping.arenaOffset < 0) {
    unmapSegment(reinterpret_cast<void*>(static_cast<std::uintptr_t>(mapping.base)), mapping.size);
  } else if (mapping.view >= 0) {
    Arena::get().unmapped(mapping.view, static_cast<std::uint64_t>(mapping.arenaOffset),
                          mapping.size);
  } else {
    Arena::get().unmapExtra(mapping.base, mapping.size);
  }
}

bool releaseSegment(std::uint64_t base, const Segment& segment) {
  if (segment.arenaOffset >= 0) {
    // A chunk's bytes past its high-water mark were never handed out: nothing to zero there.
    const std::size_t used =
        segment.chunk ? (segment.highWater + kBlockAlign - 1) / kBlockAlign * kBlockAlign : 0;
    Arena::get().released(static_cast<std::uint64_t>(segment.arenaOffset), segment.size,
                          segment.chunk ? std::max<std::size_t>(used, 1) : 0);
    return true;
  }
  bool back = true;
  if (segment.overArena >= 0) {
    // Over the arena's view 0: the arena's file goes back there (`mu` must be held).
    back = Arena::get().restore(static_cast<std::uint64_t>(segment.overArena), segment.size);
  } else {
    unmapSegment(reinterpret_cast<void*>(static_cast<std::uintptr_t>(base)), segment.size);
  }
  closeSegment(segment.fd);
  return back;
}

void releasePlace(const FreePlace& place) noexcept {
  if (place.arenaOffset < 0) {
    unmapSegment(reinterpret_cast<void*>(static_cast<std::uintptr_t>(place.base)), place.size);
  }
}

void Runtime::prepareFork() { get().mu.lock(); }

void Runtime::parentAfterFork() { get().mu.unlock(); }

void Runtime::childAfterFork() {
  Runtime& rt = get();
  for (const auto& [base, segment] : rt.segments) closeSegment(segment.fd);
  rt.allocations.clear();
  rt.byGeneration.clear();
  rt.segments.clear();
  rt.segmentByGeneration.clear();
  rt.mappings.clear();
  rt.spans.clear();
  rt.peerMappings.clear();
  // The parent's free places stay reserved in the child (address space only), never reused.
  rt.freePlaces.clear();
  for (auto& ledger : rt.ledgers) ledger.clear();
  // The arena's views are shared memory with the parent: the child makes its own at first use.
  Arena::get().forget();
  rt.pid_.store(::getpid(), std::memory_order_relaxed);
  rt.mu.unlock();
}

}  // namespace peerconf::mock_hip::detail
