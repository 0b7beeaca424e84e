// The mock HIP runtime proper: the per-thread current device, the process-wide tables of
// allocations and mappings behind one mutex, the ledgers and fault hooks, and the HIP entry points.
// System calls (shm_open, mmap, munmap, unlink) run outside the mutex so ranks as threads overlap.
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <system_error>
#include <unordered_map>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip/segment.h"

namespace peerconf::mock_hip {

namespace {

constexpr std::size_t kTotalMemory = std::size_t{64} << 30;
constexpr int kDefaultDevices = 64;
constexpr int kMaxDevices = 4096;
// Allocations keep their segment's descriptor so in-process opens map it without a name lookup;
// past this many, new ones close it and opens go through shm_open like other processes do.
constexpr int kMaxKeptDescriptors = 512;

thread_local int tDevice = 0;
thread_local hipError_t tLastError = hipSuccess;
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
  return random ^ nowNs() ^ static_cast<std::uint64_t>(::getpid());
}

std::atomic<detail::NonceSource> nonceSource{nullptr};

// A fresh random nonce for a segment name, never 0 (the value of a HandleInfo that sets none).
std::uint64_t randomNonce() {
  if (const detail::NonceSource source = nonceSource.load(std::memory_order_acquire)) {
    if (const std::uint64_t nonce = source(); nonce != 0) return nonce;
  }
  std::uint64_t nonce = 0;
  while (nonce == 0) {
    if (::getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) {
      thread_local std::random_device device;
      nonce = (std::uint64_t{device()} << 32) ^ device();
    }
  }
  return nonce;
}

// Names taken by someone else are retried with a new nonce this many times; with 64 random bits
// a second collision means /dev/shm answers EEXIST for everything, which no retry fixes.
constexpr int kNameAttempts = 16;

std::atomic<std::uint64_t>& jobId() {
  static std::atomic<std::uint64_t> id{initialJob()};
  return id;
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string pointerText(std::uint64_t ptr) { return "0x" + hex(ptr); }

std::uint64_t address(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

std::string errnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

LedgerEntry makeEntry(LedgerOp op, int device, std::uint64_t ptr, std::size_t size, int owner,
                      std::uint64_t generation, hipError_t error) {
  return LedgerEntry{op, device, ptr, size, owner, generation, static_cast<int>(error), nowNs()};
}

struct Allocation {
  LedgerEntry entry;  // op kAlloc, as recorded
  std::uint64_t job;
  std::uint64_t nonce;  // random, in the segment's name and the handle
  std::string name;
  int fd = -1;  // the segment's descriptor, if kept
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
  std::string describe(std::uint64_t ptr) const {
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

  // True when [ptr, ptr + size) lies inside one live allocation or mapping; `mu` must be held.
  bool isDeviceRange(std::uint64_t ptr, std::size_t size) const {
    auto inside = [&](const LedgerEntry& e) {
      return ptr >= e.ptr && ptr + size <= e.ptr + e.size;
    };
    if (auto it = allocations.upper_bound(ptr); it != allocations.begin()) {
      if (inside(std::prev(it)->second.entry)) return true;
    }
    if (auto it = mappings.upper_bound(ptr); it != mappings.begin()) {
      if (inside(std::prev(it)->second)) return true;
    }
    return false;
  }

  // getpid() is a system call on current glibc; forked children refresh this.
  int pid() const { return pid_.load(std::memory_order_relaxed); }

  std::mutex mu;
  std::map<std::uint64_t, Allocation> allocations;                // by base address
  std::unordered_map<std::uint64_t, std::uint64_t> byGeneration;  // live generation -> base
  int keptDescriptors = 0;
  std::map<std::uint64_t, LedgerEntry> mappings;  // op kOpen entries, by mapped address
  std::vector<std::vector<LedgerEntry>> ledgers;  // indexed by device
  std::unordered_map<int, FaultHook> hooks;
  std::atomic<bool> anyHook{false};
  std::atomic<std::uint64_t> nextGeneration{1};

 private:
  Runtime() : ledgers(static_cast<std::size_t>(deviceCount())), pid_(::getpid()) {
    ::pthread_atfork(&prepareFork, &parentAfterFork, &childAfterFork);
    sweepStaleSegments();
  }

  // Forking while another thread holds `mu` would leave the child's copy locked forever.
  static void prepareFork() { get().mu.lock(); }
  static void parentAfterFork() { get().mu.unlock(); }
  // The child is a new process of the same job: what the parent held stays mapped in it, but is
  // not the child's to free, close or report.
  static void childAfterFork() {
    Runtime& rt = get();
    for (const auto& [base, allocation] : rt.allocations) detail::closeSegment(allocation.fd);
    rt.allocations.clear();
    rt.byGeneration.clear();
    rt.keptDescriptors = 0;
    rt.mappings.clear();
    for (auto& ledger : rt.ledgers) ledger.clear();
    rt.pid_.store(::getpid(), std::memory_order_relaxed);
    rt.mu.unlock();
  }

  std::atomic<int> pid_;
};

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
  bool keepFd = false;
  {
    std::lock_guard lock(rt.mu);
    keepFd = rt.keptDescriptors < kMaxKeptDescriptors;
    if (keepFd) ++rt.keptDescriptors;  // reserved; returned below if unused
  }
  // O_EXCL never takes over an existing name; one that exists (planted by someone, or left by a
  // process of the same pid and job) is skipped with a new nonce, never reported as a failure.
  std::uint64_t nonce = 0;
  std::string name;
  detail::Mapped mapped;
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    nonce = randomNonce();
    name = segmentName(jobNow, rt.pid(), generation, nonce);
    mapped = detail::createSegment(name, size, keepFd);
    if (mapped.base != nullptr || mapped.error != EEXIST) break;
  }
  if (keepFd && mapped.fd < 0) {
    std::lock_guard lock(rt.mu);
    --rt.keptDescriptors;
  }
  if (mapped.base == nullptr) {
    std::string why = "cannot create shared-memory segment " + name + " of " +
                      std::to_string(size) + " bytes: " + mapped.step + ": " +
                      errnoText(mapped.error);
    if (mapped.error == EEXIST) {
      why += " (every one of " + std::to_string(kNameAttempts) +
             " random names already existed; created with O_EXCL)";
    }
    return failed(fail(hipErrorOutOfMemory, std::move(why)), generation);
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

}  // namespace

void detail::setNonceSourceForTesting(detail::NonceSource source) noexcept {
  nonceSource.store(source, std::memory_order_release);
}

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
  {
    std::lock_guard lock(rt.mu);
    for (const auto& [base, allocation] : rt.allocations) {
      if (allocation.entry.device == tDevice) used += allocation.entry.size;
    }
  }
  *total = kTotalMemory;
  *free = kTotalMemory - std::min(used, kTotalMemory);
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
    if (allocation.fd >= 0) --rt.keptDescriptors;
    LedgerEntry freed = allocation.entry;
    freed.op = LedgerOp::kFree;
    freed.timeNs = nowNs();
    rt.record(freed);
  }
  detail::unmapSegment(ptr, allocation.entry.size);
  detail::closeSegment(allocation.fd);
  detail::unlinkSegment(allocation.name);
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
  if (devPtr == nullptr) return failed(fail(hipErrorInvalidValue, "devPtr is null"));
  if ((flags & ~hipIpcMemLazyEnablePeerAccess) != 0) {
    return failed(fail(hipErrorInvalidValue, "unknown flags 0x" + hex(flags)));
  }
  if (!info) {
    return failed(fail(hipErrorInvalidValue,
                       "not a mock HIP IPC memory handle (bad magic, version or checksum: garbage "
                       "or corrupted in transit)"));
  }
  const std::uint64_t jobNow = job();
  if (info->job != jobNow) {
    return failed(fail(hipErrorInvalidValue,
                       "handle belongs to job " + hex(info->job) + ", this process runs job " +
                           hex(jobNow) +
                           " (a handle of another run; every rank must share the job id: "
                           "setJob or PEERCONF_MOCK_JOB)"));
  }
  if (info->ownerDevice == device) {
    return failed(fail(hipErrorInvalidContext,
                       "handle was exported by device " + std::to_string(device) +
                           ", the current device: a device cannot open its own IPC handle"));
  }
  const std::string allocationText = "allocation " + std::to_string(generation) + " of device " +
                                     std::to_string(owner) + " (pid " +
                                     std::to_string(info->ownerPid) + ")";
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
    const auto live = rt.byGeneration.find(generation);
    if (live == rt.byGeneration.end()) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, "stale handle: " + allocationText + " was freed"));
    }
    const Allocation& allocation = rt.allocations.at(live->second);
    if (allocation.job != info->job) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, "stale handle: " + allocationText +
                                                   " was made under job " + hex(allocation.job)));
    }
    if (allocation.nonce != info->nonce) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, "stale handle: " + allocationText +
                                                   " has another nonce (the handle says " +
                                                   hex(info->nonce) + ")"));
    }
    // A handle names one allocation whole: its device and size must be the allocation's (found
    // by fuzzing: a re-sealed handle with another device or a smaller size was mapped).
    if (info->ownerDevice != allocation.entry.device) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, "handle says device " +
                                                   std::to_string(info->ownerDevice) + "; " +
                                                   allocationText + " belongs to device " +
                                                   std::to_string(allocation.entry.device)));
    }
    if (info->size != allocation.entry.size) {
      lock.unlock();
      return failed(fail(hipErrorInvalidValue, "handle says " + std::to_string(info->size) +
                                                   " bytes; " + allocationText + " has " +
                                                   std::to_string(allocation.entry.size)));
    }
    if (allocation.fd >= 0) {
      const detail::Mapped mapped = detail::mapSegment(allocation.fd, info->size);
      if (mapped.base != nullptr) return opened(mapped.base);
      lock.unlock();
      return failed(fail(hipErrorMapFailed,
                         "cannot map " + allocationText + ": mmap: " + errnoText(mapped.error)));
    }
  } else if (::kill(info->ownerPid, 0) != 0 && errno == ESRCH) {
    // CUDA 13 answers 400 here (measured on H200), unlike the 1 of a freed allocation.
    return failed(fail(hipErrorInvalidHandle,
                       "stale handle: the owner process of " + allocationText + " is gone"));
  }
  // The name carries the nonce: a handle whose nonce is not the allocation's names no segment.
  const std::string name = segmentName(*info);
  const detail::Mapped mapped = detail::openSegment(name, info->size);
  if (mapped.base == nullptr) {
    if (mapped.error == ENOENT) {
      return failed(fail(hipErrorInvalidValue, "stale handle: " + allocationText +
                                                   " was freed or has another nonce " +
                                                   "(no segment " + name + ")"));
    }
    if (std::strcmp(mapped.step, "size") == 0) {
      return failed(fail(hipErrorInvalidValue, "segment " + name + " is not the " +
                                                   std::to_string(info->size) +
                                                   " bytes the handle says"));
    }
    if (std::strcmp(mapped.step, "owner") == 0) {
      return failed(fail(hipErrorInvalidValue,
                         "segment " + name +
                             " is not a mock allocation of this user (owner or mode other than "
                             "this uid and 0600): refused, never mapped"));
    }
    return failed(fail(hipErrorMapFailed, "cannot map segment " + name + ": " + mapped.step + ": " +
                                              errnoText(mapped.error)));
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

hipError_t hipGetLastError() {
  const hipError_t error = tLastError;
  tLastError = hipSuccess;
  return error;
}

hipError_t hipPeekAtLastError() { return tLastError; }

// ---- Control -----------------------------------------------------------------------------------

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

namespace {
void sortByTime(std::vector<LedgerEntry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const LedgerEntry& a, const LedgerEntry& b) {
    return a.timeNs != b.timeNs ? a.timeNs < b.timeNs : a.ptr < b.ptr;
  });
}
}  // namespace

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

namespace {
// Releases what the devices matching `pick` hold, without ledger entries.
template <typename Pick>
void releaseDevices(Pick pick) {
  Runtime& rt = Runtime::get();
  std::vector<Allocation> allocations;
  std::vector<LedgerEntry> mappings;
  {
    std::lock_guard lock(rt.mu);
    for (auto it = rt.allocations.begin(); it != rt.allocations.end();) {
      if (pick(it->second.entry.device)) {
        rt.byGeneration.erase(it->second.entry.generation);
        if (it->second.fd >= 0) --rt.keptDescriptors;
        allocations.push_back(std::move(it->second));
        it = rt.allocations.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = rt.mappings.begin(); it != rt.mappings.end();) {
      if (pick(it->second.device)) {
        mappings.push_back(it->second);
        it = rt.mappings.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const LedgerEntry& m : mappings) {
    detail::unmapSegment(reinterpret_cast<void*>(static_cast<std::uintptr_t>(m.ptr)), m.size);
  }
  for (const Allocation& a : allocations) {
    detail::unmapSegment(reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.entry.ptr)),
                         a.entry.size);
    detail::closeSegment(a.fd);
    detail::unlinkSegment(a.name);
  }
}
}  // namespace

void resetDevice(int device) {
  releaseDevices([device](int d) { return d == device; });
}

void resetAll() {
  releaseDevices([](int) { return true; });
  clearLedgers();
  clearFaultHooks();
}

std::uint64_t job() { return jobId().load(std::memory_order_acquire); }

void setJob(std::uint64_t job) { jobId().store(job, std::memory_order_release); }

std::string lastErrorDetail() { return tDetail; }

}  // namespace peerconf::mock_hip
