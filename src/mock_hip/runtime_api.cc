// The HIP entry points of the mock runtime (hip_runtime_api.h): the per-thread current device and
// last error, the checks each call makes, and its entries in the shared state (runtime_state.h).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

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

hipError_t allocate(void** ptr, std::size_t size, unsigned int flags) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  auto failed = [&](hipError_t error, std::uint64_t generation = 0) {
    return rt.recordFailure(
        makeEntry(LedgerOp::kAlloc, device, 0, size, device, generation, error));
  };
  if (const hipError_t error = enter(rt, Call::kMalloc, device, -1); error != hipSuccess) {
    return failed(error);
  }
  if (ptr == nullptr) return failed(fail(hipErrorInvalidValue, "ptr is null"));
  if (flags > hipDeviceMallocUncached) {
    return failed(fail(hipErrorInvalidValue, "unknown allocation flags 0x" + hex(flags)));
  }
  if (size == 0) {
    *ptr = nullptr;
    return hipSuccess;
  }
  const std::uint64_t generation = rt.nextGeneration.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t jobNow = job();
  std::string full;  // why the device has no room, if it has none
  std::unique_lock reserve(rt.mu);
  const int gpu = rt.gpuOf(device);
  const std::size_t capacity = rt.capacityOf(device);
  const std::size_t used = rt.usedOn(gpu) + rt.reserved[gpu];
  if (used > capacity || size > capacity - used) {
    full = std::to_string(size) + " bytes do not fit on device " + std::to_string(device) +
           (gpu != device ? " (GPU " + std::to_string(gpu) + ")" : "") + ": " +
           std::to_string(used) + " of its " + std::to_string(capacity) + " bytes are in use";
  } else {
    rt.reserved[gpu] += size;
  }
  reserve.unlock();
  if (!full.empty()) return failed(fail(hipErrorOutOfMemory, std::move(full)), generation);
  // The segment: anonymous memory under a name that carries the job, pid, generation and a random
  // nonce (segment.h); its descriptor stays with the allocation until hipFree.
  const std::uint64_t nonce = detail::randomNonce();
  std::string name = segmentName(jobNow, rt.pid(), generation, nonce);
  const detail::Mapped mapped = detail::createSegment(name, size);
  {
    std::lock_guard lock(rt.mu);
    rt.reserved[gpu] -= size;  // counted from here on as a live allocation, if it is one
  }
  if (mapped.base == nullptr) {
    return failed(fail(hipErrorOutOfMemory, "cannot create shared-memory segment " + name + " of " +
                                                std::to_string(size) + " bytes: " + mapped.step +
                                                ": " + errnoText(mapped.error)),
                  generation);
  }
  const std::uint64_t base = address(mapped.base);
  Allocation allocation{
      makeEntry(LedgerOp::kAlloc, device, base, size, device, generation, hipSuccess), jobNow,
      nonce, std::move(name), mapped.fd};
  {
    std::lock_guard lock(rt.mu);
    rt.record(allocation.entry);
    rt.byGeneration.emplace(generation, base);
    rt.allocations.emplace(base, std::move(allocation));
  }
  *ptr = mapped.base;
  return hipSuccess;
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

// Why a handle exported in this process does not name the live allocation it claims, or empty
// when it does; `rt.mu` must be held.
std::string staleInProcess(const Runtime& rt, const HandleInfo& info,
                           const std::string& allocationText) {
  const auto live = rt.byGeneration.find(info.generation);
  if (live == rt.byGeneration.end()) return "stale handle: " + allocationText + " was freed";
  const Allocation& allocation = rt.allocations.at(live->second);
  if (allocation.job != info.job) {
    return "stale handle: " + allocationText + " was made under job " + hex(allocation.job);
  }
  if (allocation.nonce != info.nonce) {
    return "stale handle: " + allocationText + " has another nonce (the handle says " +
           hex(info.nonce) + ")";
  }
  // A handle names one allocation whole: its device and size must be the allocation's (found
  // by fuzzing: a re-sealed handle with another device or a smaller size was mapped).
  if (info.ownerDevice != allocation.entry.device) {
    return "handle says device " + std::to_string(info.ownerDevice) + "; " + allocationText +
           " belongs to device " + std::to_string(allocation.entry.device);
  }
  if (info.size != allocation.entry.size) {
    return "handle says " + std::to_string(info.size) + " bytes; " + allocationText + " has " +
           std::to_string(allocation.entry.size);
  }
  return {};
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
  Allocation allocation;
  {
    std::lock_guard lock(rt.mu);
    auto it = rt.allocations.find(base);
    if (it == rt.allocations.end()) {
      rt.record(makeEntry(LedgerOp::kFree, device, base, 0, -1, 0, hipErrorInvalidValue));
      return fail(hipErrorInvalidValue, "hipFree: " + rt.describe(base));
    }
    allocation = std::move(it->second);
    rt.allocations.erase(it);
    rt.byGeneration.erase(allocation.entry.generation);
    LedgerEntry freed = allocation.entry;
    freed.op = LedgerOp::kFree;
    freed.timeNs = nowNs();
    rt.record(freed);
  }
  // Its last descriptor here: the memory goes once every peer's mapping of it is gone too.
  detail::unmapSegment(ptr, allocation.entry.size);
  detail::closeSegment(allocation.fd);
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
    info = HandleInfo{a.job, rt.pid(), a.entry.device, a.entry.generation, a.entry.size, a.nonce};
  }
  *handle = encodeHandle(info);
  return hipSuccess;
}

hipError_t hipIpcOpenMemHandle(void** devPtr, hipIpcMemHandle_t handle, unsigned int flags) {
  Runtime& rt = Runtime::get();
  const int device = tDevice;
  const std::optional<HandleInfo> info = decodeHandle(handle);
  const int owner = info ? info->ownerDevice : -1;
  const std::uint64_t generation = info ? info->generation : 0;
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
  auto opened = [&](void* base) {  // `mu` must be held
    const LedgerEntry entry = makeEntry(LedgerOp::kOpen, device, address(base), info->size, owner,
                                        generation, hipSuccess);
    rt.record(entry);
    rt.mappings.emplace(entry.ptr, entry);
    *devPtr = base;
    return hipSuccess;
  };
  if (info->ownerPid == rt.pid()) {
    // Under the lock, so a concurrent hipFree cannot slip between the check and the mapping.
    std::unique_lock lock(rt.mu);
    if (const std::string why = staleInProcess(rt, *info, allocationText); !why.empty()) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, why));
    }
    const Allocation& allocation = rt.allocations.at(rt.byGeneration.at(generation));
    const detail::Mapped mapped = detail::mapSegment(allocation.fd, info->size);
    if (mapped.base != nullptr) return opened(mapped.base);
    lock.unlock();
    return failed(fail(hipErrorMapFailed,
                       "cannot map " + allocationText + ": mmap: " + errnoText(mapped.error)));
  }
  if (::kill(info->ownerPid, 0) != 0 && errno == ESRCH) {
    // CUDA 13 answers 400 here (measured on H200), unlike the 1 of a freed allocation.
    return failed(fail(hipErrorInvalidHandle,
                       "stale handle: the owner process of " + allocationText + " is gone"));
  }
  // Another process's: the owner's descriptor of the segment the handle names (its nonce is part
  // of the name: a handle with another nonce names none).
  const std::string name = segmentName(*info);
  const detail::Mapped mapped = detail::openSegment(info->ownerPid, name, info->size);
  if (mapped.base == nullptr) {
    return failed(segmentOpenFailure(mapped, name, info->size, allocationText));
  }
  std::lock_guard lock(rt.mu);
  return opened(mapped.base);
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
    rt.mappings.erase(it);
    closed.op = LedgerOp::kClose;
    closed.timeNs = nowNs();
    rt.record(closed);
  }
  detail::unmapSegment(devPtr, closed.size);
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
