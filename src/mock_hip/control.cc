// The harness's side of the mock runtime (control.h): ledgers, leak queries, fault hooks, device
// resets, the job id and the failure detail, over the shared state of runtime_state.h.
#include "mock_hip/control.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mock_hip/arena.h"
#include "mock_hip/runtime_state.h"
#include "mock_hip/segment.h"

namespace peerconf::mock_hip {

namespace {

using detail::Runtime;

std::uint64_t initialJob() {
  if (const char* value = std::getenv("PEERCONF_MOCK_JOB"); value != nullptr && *value != '\0') {
    char* end = nullptr;
    const unsigned long long job = std::strtoull(value, &end, 16);
    if (*end == '\0') return job;
    std::fprintf(stderr, "mock HIP: ignoring PEERCONF_MOCK_JOB=%s (not hex); using a random job\n",
                 value);
  }
  std::random_device device;
  const std::uint64_t random = (std::uint64_t{device()} << 32) ^ device();
  return random ^ detail::nowNs() ^ static_cast<std::uint64_t>(::getpid());
}

std::atomic<std::uint64_t>& jobId() {
  static std::atomic<std::uint64_t> id{initialJob()};
  return id;
}

void sortByTime(std::vector<LedgerEntry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const LedgerEntry& a, const LedgerEntry& b) {
    return a.timeNs != b.timeNs ? a.timeNs < b.timeNs : a.ptr < b.ptr;
  });
}

// Releases what the devices matching `pick` hold, without ledger entries.
template <typename Pick>
void releaseDevices(Pick pick) {
  Runtime& rt = Runtime::get();
  std::vector<std::pair<std::uint64_t, detail::Segment>> segments;
  std::vector<detail::PeerMapping> unmaps;
  std::vector<detail::FreePlace> places;
  {
    std::lock_guard lock(rt.mu);
    // Their free places too: the device is reset, nothing of it is the next block's place.
    for (auto it = rt.freePlaces.begin(); it != rt.freePlaces.end();) {
      if (pick(it->device)) {
        places.push_back(*it);
        it = rt.freePlaces.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = rt.allocations.begin(); it != rt.allocations.end();) {
      if (pick(it->second.entry.device)) {
        rt.byGeneration.erase(it->second.entry.generation);
        it = rt.allocations.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = rt.segments.begin(); it != rt.segments.end();) {
      if (pick(it->second.device)) {
        rt.segmentByGeneration.erase(it->second.generation);
        if (it->second.arenaOffset >= 0 || it->second.overArena >= 0) {
          detail::releaseSegment(it->first, it->second);  // the arena's, under the lock
        } else {
          segments.emplace_back(it->first, std::move(it->second));
        }
        it = rt.segments.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = rt.mappings.begin(); it != rt.mappings.end();) {
      if (pick(it->second.device)) {
        rt.spans.erase(it->first);
        it = rt.mappings.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = rt.peerMappings.begin(); it != rt.peerMappings.end();) {
      if (pick(std::get<0>(it->first))) {
        if (it->second.arenaOffset >= 0) {
          detail::releasePeerMapping(it->second);
        } else {
          unmaps.push_back(it->second);
        }
        it = rt.peerMappings.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const detail::PeerMapping& mapping : unmaps) detail::releasePeerMapping(mapping);
  for (const auto& [base, segment] : segments) detail::releaseSegment(base, segment);
  for (const detail::FreePlace& place : places) detail::releasePlace(place);
}

}  // namespace

// ---- Ledger ------------------------------------------------------------------------------------

std::string_view ledgerOpName(LedgerOp op) {
  switch (op) {
    case LedgerOp::kAlloc:
      return "alloc";
    case LedgerOp::kFree:
      return "free";
    case LedgerOp::kOpen:
      return "open";
    case LedgerOp::kClose:
      return "close";
    case LedgerOp::kGetHandle:
      return "get-handle";
    case LedgerOp::kSetDevice:
      return "set-device";
    case LedgerOp::kMemcpy:
      return "memcpy";
  }
  return "unknown";
}

std::vector<LedgerEntry> ledger(int device) {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  if (device < 0 || device >= static_cast<int>(rt.ledgers.size())) return {};
  return rt.ledgers[static_cast<std::size_t>(device)];
}

void clearLedgers() {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  for (auto& entries : rt.ledgers) entries.clear();
}

std::vector<LedgerEntry> liveAllocations(int device) {
  Runtime& rt = Runtime::get();
  std::vector<LedgerEntry> live;
  {
    std::lock_guard lock(rt.mu);
    for (const auto& [base, allocation] : rt.allocations) {
      if (allocation.entry.device == device) live.push_back(allocation.entry);
    }
  }
  sortByTime(live);
  return live;
}

std::vector<LedgerEntry> liveMappings(int device) {
  Runtime& rt = Runtime::get();
  std::vector<LedgerEntry> live;
  {
    std::lock_guard lock(rt.mu);
    for (const auto& [base, mapping] : rt.mappings) {
      if (mapping.device == device) live.push_back(mapping);
    }
  }
  sortByTime(live);
  return live;
}

// ---- Fault hooks -------------------------------------------------------------------------------

std::string_view callName(Call call) {
  switch (call) {
    case Call::kSetDevice:
      return "hipSetDevice";
    case Call::kMalloc:
      return "hipMalloc";
    case Call::kFree:
      return "hipFree";
    case Call::kGetHandle:
      return "hipIpcGetMemHandle";
    case Call::kOpen:
      return "hipIpcOpenMemHandle";
    case Call::kClose:
      return "hipIpcCloseMemHandle";
    case Call::kMemcpy:
      return "hipMemcpy";
  }
  return "unknown";
}

void setFaultHook(int device, FaultHook hook) {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  if (hook) {
    rt.hooks[device] = std::move(hook);
  } else {
    rt.hooks.erase(device);
  }
  rt.anyHook.store(!rt.hooks.empty(), std::memory_order_release);
}

void clearFaultHooks() {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  rt.hooks.clear();
  rt.anyHook.store(false, std::memory_order_release);
}

// ---- GPUs shared by devices -------------------------------------------------------------------

void placeOnGpu(int device, int gpu) {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  rt.gpus[device] = gpu;
}

int gpuOf(int device) {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  return rt.gpuOf(device);
}

// ---- Device memory -----------------------------------------------------------------------------

void setDeviceMemory(int device, std::size_t bytes) {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  rt.capacities[device] = bytes;
}

std::size_t deviceMemory(int device) {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  return rt.capacityOf(device);
}

// ---- Resets ------------------------------------------------------------------------------------

void resetDevice(int device) {
  releaseDevices([device](int d) { return d == device; });
}

namespace {

// Whether nothing is allocated or mapped (the arena may then be rewound); `mu` must be held.
bool quiet(const Runtime& rt) {
  return rt.allocations.empty() && rt.mappings.empty() && rt.segments.empty() &&
         rt.peerMappings.empty();
}

}  // namespace

void resetAll() {
  releaseDevices([](int) { return true; });
  clearLedgers();
  clearFaultHooks();
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  rt.gpus.clear();
  rt.capacities.clear();
  // After C3's leftover check (the launchers reset once every rank is judged): the bytes the run
  // used are zeroed, so that the next run's fresh memory holds zeros as a new memfd's does.
  if (quiet(rt)) {
    detail::Arena::get().rewind(std::nullopt);
    // The free places go with the rewind: the arena hands their ranges out afresh.
    for (const detail::FreePlace& place : rt.freePlaces) detail::releasePlace(place);
    rt.freePlaces.clear();
  }
}

void beginRun(std::uint64_t seed, DeviceMemory memory) {
  clearLedgers();
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  if (!quiet(rt)) return;
  // A second draw of the seed (another constant than placementBase's): below 2^16.
  rt.nextGeneration.store(1 + detail::mixSeed(seed ^ 0x6A09E667F3BCC909ULL) % 0xFFFF,
                          std::memory_order_relaxed);
  detail::placeMappingsAt(detail::placementBase(seed));
  rt.memory = memory;
  // An earlier run's free places: another job's, never taken again (and the arena rewinds).
  for (const detail::FreePlace& place : rt.freePlaces) detail::releasePlace(place);
  rt.freePlaces.clear();
  detail::Arena::get().rewind(seed);
}

DeviceMemory deviceMemoryKind() {
  Runtime& rt = Runtime::get();
  std::lock_guard lock(rt.mu);
  return rt.memory;
}

// ---- Job id ------------------------------------------------------------------------------------

std::uint64_t job() { return jobId().load(std::memory_order_acquire); }

void setJob(std::uint64_t job) { jobId().store(job, std::memory_order_release); }

// ---- Errors ------------------------------------------------------------------------------------

std::string lastErrorDetail() { return detail::tDetail; }

}  // namespace peerconf::mock_hip
