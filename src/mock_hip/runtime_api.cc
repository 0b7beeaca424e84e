// The HIP entry points of the mock runtime (hip_runtime_api.h): the per-thread current device and
// last error, the checks each call makes, and its entries in the shared state (runtime_state.h).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "mock_hip/arena.h"
#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip/runtime_state.h"
#include "mock_hip/segment.h"

namespace peerconf::mock_hip {

namespace {

using detail::Allocation;
using detail::deviceCount;
using detail::hex;
using detail::nowNs;
using detail::pointerText;
using detail::Runtime;
using detail::tDetail;

thread_local int tDevice = 0;
thread_local hipError_t tLastError = hipSuccess;

std::uint64_t address(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

std::string errnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

LedgerEntry makeEntry(LedgerOp op, int device, std::uint64_t ptr, std::size_t size, int owner,
                      std::uint64_t generation, hipError_t error) {
  return LedgerEntry{op, device, ptr, size, owner, generation, static_cast<int>(error), nowNs()};
}

hipError_t fail(hipError_t error, std::string detail) {
  tLastError = error;
  tDetail = std::move(detail);
  return error;
}

// Entry of every call: clears this thread's detail and requires at least one device.
hipError_t begin() {
  tDetail.clear();
  if (deviceCount() == 0) return fail(hipErrorNoDevice, "PEERCONF_MOCK_DEVICES=0: no mock device");
  return hipSuccess;
}

// begin(), then the fault hook of `device`.
hipError_t enter(Runtime& rt, Call call, int device, int peerDevice) {
  if (const hipError_t error = begin(); error != hipSuccess) return error;
  if (!rt.anyHook.load(std::memory_order_acquire)) return hipSuccess;
  FaultHook hook;
  {
    std::lock_guard lock(rt.mu);
    if (auto it = rt.hooks.find(device); it != rt.hooks.end()) hook = it->second;
  }
  if (!hook) return hipSuccess;
  const int code = hook(call, device, peerDevice);
  if (code == 0) return hipSuccess;
  return fail(static_cast<hipError_t>(code), "injected by the fault hook of device " +
                                                 std::to_string(device) + " at " +
                                                 std::string(callName(call)));
}

// A new segment of `size` bytes for `device` under `jobNow`, numbered `generation`, created and
// mapped outside the runtime's lock (anonymous memory: segment.h). Its descriptor is kept for as
// long as the segment lives: other processes reach it only through it. On failure the base is 0
// and `why` says why.
struct NewSegment {
  detail::Segment segment;
  std::uint64_t base = 0;
  std::string why;
};

NewSegment createSegmentFor(Runtime& rt, int device, std::uint64_t jobNow, std::uint64_t generation,
                            std::size_t size, bool chunk, std::uint64_t at = 0) {
  NewSegment out;
  const std::uint64_t nonce = detail::randomNonce();
  std::string name = segmentName(jobNow, rt.pid(), generation, nonce);
  const detail::Mapped mapped = detail::createSegment(name, size, at);
  if (mapped.base == nullptr) {
    out.why = "cannot create shared-memory segment " + name + " of " + std::to_string(size) +
              " bytes: " + mapped.step + ": " + errnoText(mapped.error);
    return out;
  }
  out.base = address(mapped.base);
  out.segment.job = jobNow;
  out.segment.generation = generation;
  out.segment.nonce = nonce;
  out.segment.name = std::move(name);
  out.segment.device = device;
  out.segment.size = size;
  out.segment.fd = mapped.fd;
  out.segment.chunk = chunk;
  return out;
}

// The arena's nonces: a stream seeded once from getrandom (no system call a segment; an arena
// segment is never opened by name from another process). `mu` must be held.
std::uint64_t arenaNonce() {
  static std::uint64_t state = detail::randomNonce();
  std::uint64_t nonce = 0;
  while (nonce == 0) {
    state += 0x9E3779B97F4A7C15ULL;
    nonce = detail::mixSeed(state);
  }
  return nonce;
}

// A new segment as createSegmentFor makes it, in the arena (no system call); base 0 when the
// arena has no room for it. `mu` must be held.
NewSegment arenaSegmentFor(Runtime& rt, int device, std::uint64_t jobNow, std::uint64_t generation,
                           std::size_t size, bool chunk) {
  NewSegment out;
  detail::Arena& arena = detail::Arena::get();
  const std::optional<std::uint64_t> offset = arena.reserve(device, size, chunk);
  if (!offset) return out;
  out.base = arena.address(0, *offset);
  out.segment.job = jobNow;
  out.segment.generation = generation;
  out.segment.nonce = arenaNonce();
  out.segment.name = segmentName(jobNow, rt.pid(), generation, out.segment.nonce);
  out.segment.device = device;
  out.segment.size = size;
  out.segment.chunk = chunk;
  out.segment.arenaOffset = static_cast<std::int64_t>(*offset);
  return out;
}

// The free place a new large block of `device` and `size` takes (the most recently freed one),
// taken out of the list; nullopt when there is none. `mu` must be held.
std::optional<detail::FreePlace> takePlace(Runtime& rt, int device, std::uint64_t jobNow,
                                           std::size_t size) {
  for (auto it = rt.freePlaces.rbegin(); it != rt.freePlaces.rend(); ++it) {
    if (it->device != device || it->size != size || it->job != jobNow) continue;
    const detail::FreePlace place = *it;
    rt.freePlaces.erase(std::next(it).base());
    return place;
  }
  return std::nullopt;
}

// Whether a peer still maps the arena range of free place `place` (a view of the same file
// range): the new block cannot be that range, it would show through the peer's mapping; it takes
// the place with a memfd over the arena instead. `mu` must be held.
bool stillMapped(const Runtime& rt, const detail::FreePlace& place) {
  return std::any_of(rt.peerMappings.begin(), rt.peerMappings.end(),
                     [&](const auto& m) { return m.second.arenaOffset == place.arenaOffset; });
}

// A freed large block's place is kept for the next block of its device and size; past
// kMaxFreePlaces the oldest goes back to the kernel (returned, for the caller to release outside
// the lock if it is a memfd's). `mu` must be held.
std::optional<detail::FreePlace> keepPlace(Runtime& rt, const detail::FreePlace& place) {
  rt.freePlaces.push_back(place);
  if (rt.freePlaces.size() <= detail::kMaxFreePlaces) return std::nullopt;
  const detail::FreePlace oldest = rt.freePlaces.front();
  rt.freePlaces.erase(rt.freePlaces.begin());
  if (oldest.arenaOffset >= 0) return std::nullopt;
  return oldest;
}

// A new large segment in the arena at a free place (takePlace) of the arena: its range again,
// zeroed. `mu` must be held.
NewSegment arenaSegmentAt(Runtime& rt, const detail::FreePlace& place, std::uint64_t jobNow,
                          std::uint64_t generation) {
  NewSegment out;
  out.base = place.base;
  out.segment.job = jobNow;
  out.segment.generation = generation;
  out.segment.nonce = arenaNonce();
  out.segment.name = segmentName(jobNow, rt.pid(), generation, out.segment.nonce);
  out.segment.device = place.device;
  out.segment.size = place.size;
  out.segment.arenaOffset = static_cast<std::int64_t>(
      detail::Arena::get().reuse(static_cast<std::uint64_t>(place.arenaOffset), place.size));
  return out;
}

// The first offset of chunk `segment` with `taken` free bytes, or nullopt; `mu` must be held.
std::optional<std::size_t> freeOffset(const detail::Segment& segment, std::size_t taken) {
  std::size_t at = 0;
  for (const auto& [offset, bytes] : segment.blocks) {
    if (offset - at >= taken) return at;
    at = offset + bytes;
  }
  if (segment.size - at >= taken) return at;
  return std::nullopt;
}

// A chunk of `device` (this job) with room for `taken` bytes: its base and the block's offset;
// `mu` must be held. Chunks in address order, first fit: a block freed is the next one's place.
std::optional<std::pair<std::uint64_t, std::size_t>> roomInChunks(Runtime& rt, int device,
                                                                  std::uint64_t jobNow,
                                                                  std::size_t taken) {
  for (const auto& [base, segment] : rt.segments) {
    if (!segment.chunk || segment.device != device || segment.job != jobNow) continue;
    if (const auto offset = freeOffset(segment, taken)) return std::make_pair(base, *offset);
  }
  return std::nullopt;
}

// Records a new block of `segmentBase` at `offset` as a live allocation; `mu` must be held.
std::uint64_t placeBlock(Runtime& rt, std::uint64_t segmentBase, std::size_t offset,
                         std::size_t taken, LedgerEntry entry) {
  detail::Segment& segment = rt.segments.at(segmentBase);
  const std::uint64_t base = segmentBase + offset;
  if (segment.chunk) {
    segment.blocks.emplace(offset, taken);
    if (segment.arenaOffset >= 0) segment.highWater = std::max(segment.highWater, offset + taken);
  }
  entry.ptr = base;
  rt.record(entry);
  rt.byGeneration.emplace(entry.generation, base);
  rt.allocations.emplace(base, Allocation{entry, segmentBase, offset});
  return base;
}

// Takes segment `base` out of the tables; the caller unmaps, closes and unlinks it outside the
// lock. `mu` must be held.
detail::Segment takeSegment(Runtime& rt, std::uint64_t base) {
  auto it = rt.segments.find(base);
  detail::Segment segment = std::move(it->second);
  rt.segments.erase(it);
  rt.segmentByGeneration.erase(segment.generation);
  return segment;
}

// Why an allocation request is malformed (the error, its detail set), or hipSuccess.
hipError_t badAllocationRequest(void** ptr, unsigned int flags) {
  if (ptr == nullptr) return fail(hipErrorInvalidValue, "ptr is null");
  if (flags > hipDeviceMallocUncached) {
    return fail(hipErrorInvalidValue, "unknown allocation flags 0x" + hex(flags));
  }
  return hipSuccess;
}

// Why `size` more bytes do not fit on `device`'s GPU (every device placed on it, and what other
// allocations reserved), or empty when they do. `mu` must be held.
std::string noRoomFor(Runtime& rt, int device, std::size_t size) {
  const int gpu = rt.gpuOf(device);
  const std::size_t capacity = rt.capacityOf(device);
  const std::size_t used = rt.usedOn(gpu) + rt.reserved[gpu];
  if (used <= capacity && size <= capacity - used) return "";
  return std::to_string(size) + " bytes do not fit on device " + std::to_string(device) +
         (gpu != device ? " (GPU " + std::to_string(gpu) + ")" : "") + ": " + std::to_string(used) +
         " of its " + std::to_string(capacity) + " bytes are in use";
}

hipError_t allocate(void** ptr, std::size_t size, unsigned int flags) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  auto failed = [&](hipError_t error, std::uint64_t generation = 0) {
    return rt.recordFailure(
        makeEntry(LedgerOp::kAlloc, device, 0, size, device, generation, error));
  };
  hipError_t refused = enter(rt, Call::kMalloc, device, -1);
  if (refused == hipSuccess) refused = badAllocationRequest(ptr, flags);
  if (refused != hipSuccess) return failed(refused);
  if (size == 0) {
    *ptr = nullptr;
    return hipSuccess;
  }
  const std::uint64_t generation = rt.nextGeneration.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t jobNow = job();
  const bool small = size < detail::kChunkBytes;
  const std::size_t taken =
      (size + detail::kBlockAlign - 1) / detail::kBlockAlign * detail::kBlockAlign;
  const LedgerEntry entry =
      makeEntry(LedgerOp::kAlloc, device, 0, size, device, generation, hipSuccess);
  std::optional<detail::FreePlace> place;  // a freed large block's place this block takes
  std::unique_lock lock(rt.mu);
  const int gpu = rt.gpuOf(device);
  std::string full = noRoomFor(rt, device, size);  // refused below, outside the lock
  if (full.empty() && small) {
    if (const auto room = roomInChunks(rt, device, jobNow, taken)) {
      *ptr = reinterpret_cast<void*>(
          static_cast<std::uintptr_t>(placeBlock(rt, room->first, room->second, taken, entry)));
      return hipSuccess;
    }
  } else if (full.empty()) {
    place = takePlace(rt, device, jobNow, size);
  }
  // A new chunk for a small block (numbered like an allocation), or the large block's own segment.
  std::uint64_t segmentGeneration = 0;
  auto segmentNumber = [&] {  // a chunk numbered like an allocation; a large block the block's
    return small ? rt.nextGeneration.fetch_add(1, std::memory_order_relaxed) : generation;
  };
  const std::size_t segmentSize = small ? detail::kChunkBytes : size;
  auto keep = [&](NewSegment& created) {  // `mu` must be held
    rt.segmentByGeneration.emplace(segmentGeneration, created.base);
    rt.segments.emplace(created.base, std::move(created.segment));
    *ptr = reinterpret_cast<void*>(
        static_cast<std::uintptr_t>(placeBlock(rt, created.base, 0, small ? taken : size, entry)));
    return hipSuccess;
  };
  if (place && place->arenaOffset >= 0 && !stillMapped(rt, *place)) {
    // The arena's: the freed range again, zeroed (no system call).
    segmentGeneration = generation;
    NewSegment created = arenaSegmentAt(rt, *place, jobNow, generation);
    return keep(created);
  }
  if (full.empty() && !place && rt.memory == DeviceMemory::kArena) {
    // In the arena, under the lock: no system call. Without room there, a memfd as below.
    segmentGeneration = segmentNumber();
    NewSegment created = arenaSegmentFor(rt, device, jobNow, segmentGeneration, segmentSize, small);
    if (created.base != 0) return keep(created);
  }
  if (full.empty()) rt.reserved[gpu] += size;
  lock.unlock();
  if (!full.empty()) return failed(fail(hipErrorOutOfMemory, std::move(full)), generation);
  if (segmentGeneration == 0) segmentGeneration = segmentNumber();
  NewSegment created = createSegmentFor(rt, device, jobNow, segmentGeneration, segmentSize, small,
                                        place ? place->base : 0);
  // A place this block could not take (the segment was not made) is given back.
  if (created.base == 0 && place) detail::releasePlace(*place);
  lock.lock();
  rt.reserved[gpu] -= size;  // counted from here on as a live allocation, if it is one
  if (created.base == 0) {
    lock.unlock();
    return failed(fail(hipErrorOutOfMemory, std::move(created.why)), generation);
  }
  if (place && place->arenaOffset >= 0) {  // a memfd over the arena's view 0 (stillMapped)
    created.segment.overArena = place->arenaOffset;
    detail::Arena::get().overlaid(static_cast<std::uint64_t>(place->arenaOffset), size);
  }
  return keep(created);
}

// Device ranges a copy of `kind` touches must be live; returns the failure detail or "".
std::string checkCopyRanges(Runtime& rt, void* dst, const void* src, std::size_t size,
                            hipMemcpyKind kind) {
  const bool dstOnDevice = kind == hipMemcpyHostToDevice || kind == hipMemcpyDeviceToDevice;
  const bool srcOnDevice = kind == hipMemcpyDeviceToHost || kind == hipMemcpyDeviceToDevice;
  std::lock_guard lock(rt.mu);
  if (dstOnDevice && !rt.isDeviceRange(address(dst), size)) {
    return "destination [" + pointerText(address(dst)) + ", +" + std::to_string(size) +
           ") is not inside a live allocation or mapping";
  }
  if (srcOnDevice && !rt.isDeviceRange(address(src), size)) {
    return "source [" + pointerText(address(src)) + ", +" + std::to_string(size) +
           ") is not inside a live allocation or mapping";
  }
  return {};
}

// Why an open of `info` (null: not a handle of ours) is refused before any mapping is looked at,
// or empty when the request is well formed and the handle is this job's.
std::string refusedRequest(void** devPtr, unsigned int flags,
                           const std::optional<HandleInfo>& info) {
  if (devPtr == nullptr) return "devPtr is null";
  if ((flags & ~hipIpcMemLazyEnablePeerAccess) != 0) return "unknown flags 0x" + hex(flags);
  if (!info) {
    return "not a mock HIP IPC memory handle (bad magic, version or checksum: garbage or corrupted "
           "in transit)";
  }
  const std::uint64_t jobNow = job();
  if (info->job != jobNow) {
    return "handle belongs to job " + hex(info->job) + ", this process runs job " + hex(jobNow) +
           " (a handle of another run; every rank must share the job id: setJob or "
           "PEERCONF_MOCK_JOB)";
  }
  return {};
}

// The bytes of the segment a handle names: a chunk for a block below kChunkBytes, else the block.
std::size_t segmentBytes(const HandleInfo& info) {
  return info.size < detail::kChunkBytes ? detail::kChunkBytes : info.size;
}

// Why a handle exported in this process does not name a live segment as it claims, or empty when
// it does; `rt.mu` must be held. A block of a live chunk is not checked: its handle opens onto the
// chunk while the chunk lives, whatever occupies the block's place now (as on CUDA).
std::string staleInProcess(Runtime& rt, const HandleInfo& info, const std::string& allocationText) {
  const detail::Segment* segment = rt.segmentOf(info.segment);
  if (segment == nullptr) {
    return "stale handle: " + allocationText +
           (info.segment == info.generation ? " was freed" : " was freed with its chunk");
  }
  if (segment->job != info.job) {
    return "stale handle: " + allocationText + " was made under job " + hex(segment->job);
  }
  if (segment->nonce != info.nonce) {
    return "stale handle: " + allocationText + " has another nonce (the handle says " +
           hex(info.nonce) + ")";
  }
  // A handle names one segment whole: its device and size must be the segment's (found by
  // fuzzing: a re-sealed handle with another device or a smaller size was mapped).
  if (info.ownerDevice != segment->device) {
    return "handle says device " + std::to_string(info.ownerDevice) + "; " + allocationText +
           " belongs to device " + std::to_string(segment->device);
  }
  if (segmentBytes(info) != segment->size) {
    return "handle says " + std::to_string(info.size) + " bytes; " + allocationText + " has " +
           std::to_string(segment->size);
  }
  return {};
}

// The block that took a freed large block's place in this process: the live block of the
// handle's job, device and segment size at the handle's place (runtime_table.yaml
// stale-large-place-taken), as (generation, nonce); nullopt when the handle's own segment lives (a
// wrong nonce stays refused), it names no place (a chunk's block), or no such block is there.
// `rt.mu` must be held.
std::optional<std::pair<std::uint64_t, std::uint64_t>> blockAtPlace(Runtime& rt,
                                                                    const HandleInfo& info) {
  if (info.place == 0 || rt.segmentOf(info.segment) != nullptr) return std::nullopt;
  const auto it = rt.segments.find(info.place);
  if (it == rt.segments.end()) return std::nullopt;
  const detail::Segment& now = it->second;
  if (now.chunk || now.job != info.job || now.device != info.ownerDevice ||
      now.size != segmentBytes(info)) {
    return std::nullopt;
  }
  return std::make_pair(now.generation, now.nonce);
}

// The same across processes: the name of the owner's segment mapped at the handle's place
// (/proc/<pid>/maps), when it is a segment of the owner and the job other than the handle's own;
// the caller opens it by name (which checks it still lives and has the handle's size). A free
// place is reserved, not a segment (reservePlace), so an empty place names none.
std::optional<std::pair<std::string, detail::SegmentId>> segmentAtPlace(const HandleInfo& info) {
  if (info.place == 0) return std::nullopt;
  std::string name = detail::segmentMappedAt(info.ownerPid, info.place);
  const auto id = detail::parseSegmentName(name);
  if (!id || id->job != info.job || id->pid != info.ownerPid || id->generation == info.segment) {
    return std::nullopt;
  }
  return std::make_pair(std::move(name), *id);
}

// The error of a failed open of segment `name`, as its step (detail::openSegment) says.
hipError_t segmentOpenFailure(const detail::Mapped& mapped, const std::string& name,
                              std::size_t size, const std::string& allocationText) {
  if (std::strcmp(mapped.step, "gone") == 0) {
    // As for an owner already reaped (hipIpcOpenMemHandle): its memory went with it.
    return fail(hipErrorInvalidHandle,
                "stale handle: the owner process of " + allocationText + " is gone");
  }
  if (std::strcmp(mapped.step, "find") == 0) {
    return fail(hipErrorInvalidValue, "stale handle: " + allocationText +
                                          " was freed or has another nonce " + "(no segment " +
                                          name + " in its process)");
  }
  if (std::strcmp(mapped.step, "size") == 0) {
    return fail(hipErrorInvalidValue, "segment " + name + " is not the " + std::to_string(size) +
                                          " bytes the handle says");
  }
  if (std::strcmp(mapped.step, "owner") == 0) {
    return fail(hipErrorInvalidValue,
                "segment " + name +
                    " is not a mock allocation of this user (owner or mode other than this uid "
                    "and 0600): refused, never mapped");
  }
  return fail(hipErrorMapFailed,
              "cannot map segment " + name + ": " + mapped.step + ": " + errnoText(mapped.error));
}

}  // namespace

// ---- Devices -----------------------------------------------------------------------------------

hipError_t hipSetDevice(int deviceId) {
  Runtime& rt = Runtime::get();
  if (const hipError_t error = begin(); error != hipSuccess) return error;
  if (deviceId < 0 || deviceId >= deviceCount()) {
    return fail(hipErrorInvalidDevice, "device " + std::to_string(deviceId) + " is outside [0, " +
                                           std::to_string(deviceCount()) +
                                           ") (PEERCONF_MOCK_DEVICES)");
  }
  if (const hipError_t error = enter(rt, Call::kSetDevice, deviceId, -1); error != hipSuccess) {
    return rt.recordFailure(makeEntry(LedgerOp::kSetDevice, deviceId, 0, 0, -1, 0, error));
  }
  tDevice = deviceId;
  return hipSuccess;
}

hipError_t hipGetDevice(int* deviceId) {
  if (const hipError_t error = begin(); error != hipSuccess) return error;
  if (deviceId == nullptr) return fail(hipErrorInvalidValue, "deviceId is null");
  *deviceId = tDevice;
  return hipSuccess;
}

hipError_t hipGetDeviceCount(int* count) {
  tDetail.clear();
  if (count == nullptr) return fail(hipErrorInvalidValue, "count is null");
  *count = deviceCount();
  if (*count == 0) return fail(hipErrorNoDevice, "PEERCONF_MOCK_DEVICES=0: no mock device");
  return hipSuccess;
}

hipError_t hipDeviceSynchronize() {
  if (const hipError_t error = begin(); error != hipSuccess) return error;
  // A seq_cst read-modify-write is a full barrier, like a fence, and visible to TSan.
  static std::atomic<int> barrier{0};
  barrier.fetch_add(0, std::memory_order_seq_cst);
  return hipSuccess;
}

hipError_t hipMemGetInfo(std::size_t* free, std::size_t* total) {
  Runtime& rt = Runtime::get();
  if (const hipError_t error = begin(); error != hipSuccess) return error;
  if (free == nullptr || total == nullptr) return fail(hipErrorInvalidValue, "null argument");
  std::size_t used = 0;
  std::size_t capacity = 0;
  {
    // Every device on the current device's GPU (placeOnGpu): ranks sharing a GPU see each
    // other's buffers in its free memory, as on a real one.
    std::lock_guard lock(rt.mu);
    used = rt.usedOn(rt.gpuOf(tDevice));
    capacity = rt.capacityOf(tDevice);
  }
  *total = capacity;
  *free = capacity - std::min(used, capacity);
  return hipSuccess;
}

// ---- Allocation --------------------------------------------------------------------------------

hipError_t hipMalloc(void** ptr, std::size_t size) {
  return allocate(ptr, size, hipDeviceMallocDefault);
}

hipError_t hipExtMallocWithFlags(void** ptr, std::size_t sizeBytes, unsigned int flags) {
  return allocate(ptr, sizeBytes, flags);
}

hipError_t hipFree(void* ptr) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  const std::uint64_t base = address(ptr);
  if (const hipError_t error = enter(rt, Call::kFree, device, -1); error != hipSuccess) {
    return rt.recordFailure(makeEntry(LedgerOp::kFree, device, base, 0, -1, 0, error));
  }
  if (ptr == nullptr) return hipSuccess;
  std::optional<std::pair<std::uint64_t, detail::Segment>> gone;  // a segment left with nothing
  std::optional<detail::FreePlace> evicted;  // a free place given back (keepPlace)
  {
    std::lock_guard lock(rt.mu);
    auto it = rt.allocations.find(base);
    if (it == rt.allocations.end()) {
      rt.record(makeEntry(LedgerOp::kFree, device, base, 0, -1, 0, hipErrorInvalidValue));
      return fail(hipErrorInvalidValue, "hipFree: " + rt.describe(base));
    }
    const Allocation allocation = it->second;
    rt.allocations.erase(it);
    rt.byGeneration.erase(allocation.entry.generation);
    LedgerEntry freed = allocation.entry;
    freed.op = LedgerOp::kFree;
    freed.timeNs = nowNs();
    rt.record(freed);
    detail::Segment& segment = rt.segments.at(allocation.segment);
    segment.blocks.erase(allocation.offset);
    // A chunk goes with its last block; until then its freed blocks' handles still open on it.
    if (segment.blocks.empty()) {
      gone.emplace(allocation.segment, takeSegment(rt, allocation.segment));
      const detail::Segment& freed = gone->second;
      if (freed.arenaOffset >= 0 || freed.overArena >= 0) {  // the arena's, under the lock
        if (detail::releaseSegment(gone->first, freed) && !freed.chunk) {
          evicted = keepPlace(rt, {freed.device, gone->first, freed.size, freed.job,
                                   std::max(freed.arenaOffset, freed.overArena)});
        }
        gone.reset();
      }
    }
  }
  if (gone && !gone->second.chunk && detail::reservePlace(gone->first, gone->second.size)) {
    // A large block's place stays reserved, empty, for the next block of its device and size.
    detail::closeSegment(gone->second.fd);
    std::lock_guard lock(rt.mu);
    evicted =
        keepPlace(rt, {gone->second.device, gone->first, gone->second.size, gone->second.job, -1});
  } else if (gone) {
    detail::releaseSegment(gone->first, gone->second);
  }
  if (evicted) detail::releasePlace(*evicted);
  return hipSuccess;
}

// ---- IPC ---------------------------------------------------------------------------------------

hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* devPtr) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  const std::uint64_t base = address(devPtr);
  auto failed = [&](hipError_t error) {
    return rt.recordFailure(makeEntry(LedgerOp::kGetHandle, device, base, 0, -1, 0, error));
  };
  if (const hipError_t error = enter(rt, Call::kGetHandle, device, -1); error != hipSuccess) {
    return failed(error);
  }
  if (handle == nullptr || devPtr == nullptr) {
    return failed(fail(hipErrorInvalidValue, "null argument"));
  }
  HandleInfo info{};
  {
    std::lock_guard lock(rt.mu);
    auto it = rt.allocations.find(base);
    if (it == rt.allocations.end()) {
      rt.record(makeEntry(LedgerOp::kGetHandle, device, base, 0, -1, 0, hipErrorInvalidValue));
      return fail(hipErrorInvalidValue, "hipIpcGetMemHandle: " + rt.describe(base));
    }
    const Allocation& a = it->second;
    const detail::Segment& segment = rt.segments.at(a.segment);
    info = HandleInfo{segment.job,        rt.pid(),     a.entry.device,
                      a.entry.generation, a.entry.size, segment.nonce,
                      segment.generation, a.offset,     segment.chunk ? 0 : base};
  }
  *handle = encodeHandle(info);
  return hipSuccess;
}

// Over 80 lines: the open's checks and its two mapping paths.
// NOLINTNEXTLINE(readability-function-size): to be split
hipError_t hipIpcOpenMemHandle(void** devPtr, hipIpcMemHandle_t handle, unsigned int flags) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  std::optional<HandleInfo> info = decodeHandle(handle);
  const int owner = info ? info->ownerDevice : -1;
  std::uint64_t generation = info ? info->generation : 0;  // the block opened (resolvedAt)
  auto failed = [&](hipError_t error) {
    return rt.recordFailure(
        makeEntry(LedgerOp::kOpen, device, 0, info ? info->size : 0, owner, generation, error));
  };
  if (const hipError_t error = enter(rt, Call::kOpen, device, owner); error != hipSuccess) {
    return failed(error);
  }
  if (const std::string why = refusedRequest(devPtr, flags, info); !why.empty()) {
    return failed(fail(hipErrorInvalidValue, why));
  }
  // The real rule: a handle opens in any other process, on the same device too, and is refused
  // only in the process that exported it (CUDA answers 201). Ranks as threads share this process,
  // so the mock counts each (process, device) as one exporter: a thread rank opens the handles of
  // the others while each has its own device, and two thread ranks on one device are one process,
  // refused as the real runtime would. Ranks sharing a GPU keep devices of their own (placeOnGpu
  // puts them on one GPU's memory), so they open each other's handles as processes sharing a GPU
  // do; the launchers never give two thread ranks one device.
  if (info->ownerDevice == device && info->ownerPid == rt.pid()) {
    return failed(fail(hipErrorInvalidContext,
                       "handle was exported in this process on device " + std::to_string(device) +
                           ", the current device: the exporting process cannot open its own IPC "
                           "handle (another process on the same device can)"));
  }
  // "this process" rather than its pid: ranks as threads print the same text in every run.
  const std::string allocationText =
      "allocation " + std::to_string(generation) + " of device " + std::to_string(owner) +
      (info->ownerPid == rt.pid() ? std::string(" (this process)")
                                  : " (pid " + std::to_string(info->ownerPid) + ")");
  // A freed large block's handle opens onto the block that took its place: from here on the
  // handle is that block's.
  auto resolvedAt = [&](std::uint64_t now, std::uint64_t nonce) {
    info->generation = now;
    info->segment = now;
    info->nonce = nonce;
    generation = now;
  };
  const std::size_t bytes = segmentBytes(*info);
  if (info->offset + info->size > bytes) {
    return failed(fail(hipErrorInvalidValue, "handle says " + std::to_string(info->size) +
                                                 " bytes at offset " +
                                                 std::to_string(info->offset) + " of a " +
                                                 std::to_string(bytes) + "-byte segment"));
  }
  // The whole segment is mapped once for this device; the block is at its offset.
  auto keyNow = [&] {
    return detail::PeerMappingKey{device, info->ownerPid, info->segment, info->nonce};
  };
  detail::PeerMappingKey key = keyNow();
  auto opened = [&](std::uint64_t segmentBase) {  // `mu` must be held
    const std::uint64_t base = segmentBase + info->offset;
    const LedgerEntry entry =
        makeEntry(LedgerOp::kOpen, device, base, info->size, owner, generation, hipSuccess);
    rt.record(entry);
    ++rt.peerMappings.at(key).opens;
    detail::MappingSpan& span = rt.spans[base];
    span.key = key;
    if (span.opens++ == 0) rt.mappings[base] = entry;
    *devPtr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(base));
    return hipSuccess;
  };
  // A mapping made outside the lock, kept unless another open of the segment got there first.
  auto keep = [&](void* mappedBase) {  // `mu` must be held
    auto [it, fresh] =
        rt.peerMappings.try_emplace(key, detail::PeerMapping{address(mappedBase), bytes, 0});
    if (!fresh) detail::unmapSegment(mappedBase, bytes);
    return opened(it->second.base);
  };
  if (info->ownerPid == rt.pid()) {
    // Under the lock, so a concurrent hipFree cannot slip between the check and the mapping.
    std::unique_lock lock(rt.mu);
    if (const auto now = blockAtPlace(rt, *info)) {
      resolvedAt(now->first, now->second);
      key = keyNow();
    }
    if (const std::string why = staleInProcess(rt, *info, allocationText); !why.empty()) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, why));
    }
    if (const auto it = rt.peerMappings.find(key); it != rt.peerMappings.end()) {
      return opened(it->second.base);
    }
    detail::Segment& segment = *rt.segmentOf(info->segment);
    if (segment.arenaOffset >= 0) {
      // The arena's: the segment's range in the next view it has not had (or, past the views, a
      // mapping of the arena's file of its own). No system call, nothing reused in a run.
      detail::Arena& arena = detail::Arena::get();
      const auto offset = static_cast<std::uint64_t>(segment.arenaOffset);
      detail::PeerMapping mapping{0, bytes, 0, -1, segment.arenaOffset};
      const int view = ++segment.views;
      if (view < detail::Arena::kViews) mapping.base = arena.address(view, offset);
      if (mapping.base != 0) {
        mapping.view = view;
        arena.mapped(view, offset, bytes);
      } else {
        mapping.base = arena.mapExtra(offset, bytes);
      }
      if (mapping.base == 0) {
        lock.unlock();
        return failed(fail(hipErrorMapFailed,
                           "cannot map " + allocationText + ": mmap: " + errnoText(errno)));
      }
      rt.peerMappings.emplace(key, mapping);
      return opened(mapping.base);
    }
    if (segment.fd >= 0) {
      const detail::Mapped mapped = detail::mapSegment(segment.fd, bytes);
      if (mapped.base != nullptr) return keep(mapped.base);
      lock.unlock();
      return failed(fail(hipErrorMapFailed,
                         "cannot map " + allocationText + ": mmap: " + errnoText(mapped.error)));
    }
  } else {
    // Always through the owner's descriptor, a mapping of it already held or not: that checks the
    // owner lives and holds the segment (keep() then uses the mapping held).
    if (::kill(info->ownerPid, 0) != 0 && errno == ESRCH) {
      // CUDA 13 answers 400 here (measured on H200), unlike the 1 of a freed allocation.
      return failed(fail(hipErrorInvalidHandle,
                         "stale handle: the owner process of " + allocationText + " is gone"));
    }
  }
  // The name carries the nonce: a handle whose nonce is not the segment's names no segment.
  const std::string name = segmentName(*info);
  detail::Mapped mapped = detail::openSegment(info->ownerPid, name, bytes);
  if (mapped.base == nullptr && std::strcmp(mapped.step, "find") == 0) {
    // Freed: the block of the owner now at its place, of its size, if one is (stale-large-place-
    // taken); else refused as freed.
    if (const auto now = segmentAtPlace(*info)) {
      const detail::Mapped there = detail::openSegment(info->ownerPid, now->first, bytes);
      if (there.base != nullptr) {
        mapped = there;
        resolvedAt(now->second.generation, now->second.nonce);
        key = keyNow();
      }
    }
  }
  if (mapped.base == nullptr) {
    return failed(segmentOpenFailure(mapped, name, bytes, allocationText));
  }
  std::lock_guard lock(rt.mu);
  return keep(mapped.base);
}

hipError_t hipIpcCloseMemHandle(void* devPtr) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  const std::uint64_t base = address(devPtr);
  int owner = -1;
  {
    std::lock_guard lock(rt.mu);
    if (auto it = rt.mappings.find(base); it != rt.mappings.end()) owner = it->second.ownerDevice;
  }
  auto failed = [&](hipError_t error) {
    return rt.recordFailure(makeEntry(LedgerOp::kClose, device, base, 0, owner, 0, error));
  };
  if (const hipError_t error = enter(rt, Call::kClose, device, owner); error != hipSuccess) {
    return failed(error);
  }
  if (devPtr == nullptr) return failed(fail(hipErrorInvalidValue, "devPtr is null"));
  LedgerEntry closed;
  std::optional<detail::PeerMapping> unmap;  // the segment mapping its last close releases
  {
    std::lock_guard lock(rt.mu);
    auto it = rt.mappings.find(base);
    if (it == rt.mappings.end()) {
      rt.record(makeEntry(LedgerOp::kClose, device, base, 0, owner, 0, hipErrorInvalidValue));
      return fail(hipErrorInvalidValue,
                  "hipIpcCloseMemHandle: " + rt.describe(base) +
                      (rt.allocations.count(base) != 0 ? "" : " (closed twice?)"));
    }
    closed = it->second;
    detail::MappingSpan& span = rt.spans.at(base);
    const auto peer = rt.peerMappings.find(span.key);
    if (--peer->second.opens == 0) {
      unmap = peer->second;
      rt.peerMappings.erase(peer);
      if (unmap->arenaOffset >= 0) {  // the arena's, under the lock
        detail::releasePeerMapping(*unmap);
        unmap.reset();
      }
    }
    if (--span.opens == 0) {
      rt.spans.erase(base);
      rt.mappings.erase(it);
    }
    closed.op = LedgerOp::kClose;
    closed.timeNs = nowNs();
    rt.record(closed);
  }
  if (unmap) detail::releasePeerMapping(*unmap);
  return hipSuccess;
}

// ---- Copies ------------------------------------------------------------------------------------

hipError_t hipMemcpy(void* dst, const void* src, std::size_t sizeBytes, hipMemcpyKind kind) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  auto failed = [&](hipError_t error) {
    return rt.recordFailure(
        makeEntry(LedgerOp::kMemcpy, device, address(dst), sizeBytes, -1, 0, error));
  };
  if (const hipError_t error = enter(rt, Call::kMemcpy, device, -1); error != hipSuccess) {
    return failed(error);
  }
  if (sizeBytes == 0) return hipSuccess;
  if (dst == nullptr || src == nullptr) return failed(fail(hipErrorInvalidValue, "null pointer"));
  if (kind < hipMemcpyHostToHost || kind > hipMemcpyDefault) {
    return failed(fail(hipErrorInvalidMemcpyDirection,
                       "unknown hipMemcpyKind " + std::to_string(static_cast<int>(kind))));
  }
  if (std::string why = checkCopyRanges(rt, dst, src, sizeBytes, kind); !why.empty()) {
    return failed(fail(hipErrorInvalidValue, "hipMemcpy: " + why));
  }
  std::memmove(dst, src, sizeBytes);
  return hipSuccess;
}

hipError_t hipMemset(void* dst, int value, std::size_t sizeBytes) {
  Runtime& rt = Runtime::get();
  if (const hipError_t error = begin(); error != hipSuccess) return error;
  if (sizeBytes == 0) return hipSuccess;
  if (dst == nullptr) return fail(hipErrorInvalidValue, "dst is null");
  if (std::string why = checkCopyRanges(rt, dst, dst, sizeBytes, hipMemcpyHostToDevice);
      !why.empty()) {
    return fail(hipErrorInvalidValue, "hipMemset: " + why);
  }
  std::memset(dst, value, sizeBytes);
  return hipSuccess;
}

// ---- Errors ------------------------------------------------------------------------------------

void exchangeThreadState(ThreadState& other) {
  std::swap(tDevice, other.device);
  std::swap(tLastError, other.lastError);
  std::swap(tDetail, other.detail);
}

hipError_t hipGetLastError() {
  const hipError_t error = tLastError;
  tLastError = hipSuccess;
  return error;
}

hipError_t hipPeekAtLastError() { return tLastError; }

}  // namespace peerconf::mock_hip
