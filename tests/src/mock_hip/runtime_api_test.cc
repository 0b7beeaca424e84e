// The mocked HIP runtime's entry points (runtime_api.cc): HIP semantics of every call (codes,
// refusals and their detail, per-thread device and last error), IPC handles opened and closed in
// this process and in another one, copies, and many four-rank handshakes on threads.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip/segment.h"
#include "mock_hip_test_support.h"

namespace peerconf::mock_hip {
namespace {

using test_support::contains;
using test_support::ownSegments;
using MockHipApi = test_support::MockHipTest;

TEST_F(MockHipApi, LastErrorIsPerThreadAndClearedByGetLastError) {
  EXPECT_EQ(hipFree(reinterpret_cast<void*>(0x1000)), hipErrorInvalidValue);
  EXPECT_FALSE(lastErrorDetail().empty());
  std::thread([] { EXPECT_EQ(hipPeekAtLastError(), hipSuccess); }).join();
  EXPECT_EQ(hipPeekAtLastError(), hipErrorInvalidValue);
  EXPECT_EQ(hipGetLastError(), hipErrorInvalidValue);
  EXPECT_EQ(hipGetLastError(), hipSuccess);
  int device = -1;
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_TRUE(lastErrorDetail().empty()) << "a successful call clears the detail";
}

TEST_F(MockHipApi, CurrentDeviceIsPerThreadAndDefaultsToZero) {
  int count = 0;
  ASSERT_EQ(hipGetDeviceCount(&count), hipSuccess);
  const char* env = std::getenv("PEERCONF_MOCK_DEVICES");
  EXPECT_EQ(count, env != nullptr ? std::atoi(env) : 64);
  ASSERT_EQ(hipSetDevice(5), hipSuccess);
  std::thread([] {
    int device = -1;
    EXPECT_EQ(hipGetDevice(&device), hipSuccess);
    EXPECT_EQ(device, 0);
    EXPECT_EQ(hipSetDevice(7), hipSuccess);
  }).join();
  int device = -1;
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_EQ(device, 5);
  EXPECT_EQ(hipSetDevice(-1), hipErrorInvalidDevice);
  EXPECT_EQ(hipSetDevice(count), hipErrorInvalidDevice);
  EXPECT_TRUE(contains(lastErrorDetail(), "PEERCONF_MOCK_DEVICES"));
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_EQ(device, 5) << "a refused hipSetDevice leaves the device unchanged";
}

TEST_F(MockHipApi, ZeroSizeAllocationReturnsNullWithoutAllocating) {
  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(hipMalloc(&ptr, 0), hipSuccess);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_TRUE(liveAllocations(0).empty());
  EXPECT_EQ(hipFree(nullptr), hipSuccess);
  EXPECT_EQ(hipMalloc(nullptr, 16), hipErrorInvalidValue);
  void* p = nullptr;
  EXPECT_EQ(hipExtMallocWithFlags(&p, 16, 0x40), hipErrorInvalidValue);
}

// A handle whose nonce is not the allocation's is refused like a stale handle, in the owner
// process and in another process (where the name it gives does not exist).
TEST_F(MockHipApi, AHandleWithAWrongNonceIsRefusedLikeAStaleHandle) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  HandleInfo wrong = *decodeHandle(handle);
  ASSERT_NE(wrong.nonce, 0u);
  wrong.nonce ^= 1;
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* ptr = reinterpret_cast<void*>(0x77);
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, encodeHandle(wrong), 0), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "stale handle")) << lastErrorDetail();
  EXPECT_TRUE(contains(lastErrorDetail(), "another nonce")) << lastErrorDetail();
  EXPECT_EQ(ptr, reinterpret_cast<void*>(0x77));
  EXPECT_TRUE(liveMappings(1).empty());

  // Another process: the wrong nonce names no segment; the right handle still maps.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    void* p = nullptr;
    if (hipSetDevice(1) != hipSuccess) ::_exit(10);
    if (hipIpcOpenMemHandle(&p, encodeHandle(wrong), 0) != hipErrorInvalidValue) ::_exit(11);
    if (!contains(lastErrorDetail(), "stale handle")) ::_exit(12);
    if (hipIpcOpenMemHandle(&p, handle, 0) != hipSuccess) ::_exit(13);
    if (hipIpcCloseMemHandle(p) != hipSuccess) ::_exit(14);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setDevice, 11: wrong nonce not refused, 12: not as "
                                       "stale, 13: right handle refused, 14: close";
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipApi, GarbageAndCorruptedHandlesAreRefusedAndNeverMapped) {
  hipIpcMemHandle_t good;
  void* buffer = allocOn(0, 4096, &good);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  hipIpcMemHandle_t garbage;
  for (std::size_t i = 0; i < sizeof garbage.reserved; ++i) {
    garbage.reserved[i] = static_cast<char>(i * 37 + 11);
  }
  hipIpcMemHandle_t corrupted = good;
  corrupted.reserved[33] ^= 0x10;  // one bit of the size field
  for (const hipIpcMemHandle_t& bad : {garbage, corrupted, hipIpcMemHandle_t{}}) {
    void* ptr = reinterpret_cast<void*>(0x55);
    EXPECT_EQ(hipIpcOpenMemHandle(&ptr, bad, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
    EXPECT_EQ(ptr, reinterpret_cast<void*>(0x55));
    EXPECT_TRUE(contains(lastErrorDetail(), "not a mock HIP IPC memory handle"));
  }
  EXPECT_TRUE(liveMappings(1).empty());
  const auto entries = ledger(1);
  ASSERT_EQ(entries.size(), 3u);
  for (const auto& e : entries) {
    EXPECT_EQ(e.op, LedgerOp::kOpen);
    EXPECT_EQ(e.error, static_cast<int>(hipErrorInvalidValue));
    EXPECT_EQ(e.ptr, 0u);
  }
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipApi, OpeningOwnHandleIsAnInvalidContext) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(4, 4096, &handle);
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess),
            hipErrorInvalidContext);
  EXPECT_TRUE(contains(lastErrorDetail(), "exporting process cannot open its own IPC handle"))
      << lastErrorDetail();
  EXPECT_EQ(ptr, nullptr);
  EXPECT_TRUE(liveMappings(4).empty());
  // Another thread of this process on the same device is the same exporter (two thread ranks on
  // one device): refused too.
  std::thread([&] {
    ASSERT_EQ(hipSetDevice(4), hipSuccess);
    void* p = nullptr;
    EXPECT_EQ(hipIpcOpenMemHandle(&p, handle, 0), hipErrorInvalidContext);
    EXPECT_EQ(p, nullptr);
  }).join();
  EXPECT_TRUE(liveMappings(4).empty());
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

// Thread ranks sharing a GPU (--ranks-per-gpu under the mock): each keeps its own device (its
// ledger, hook and "own handle" refusal), placed on one GPU's memory. hipMemGetInfo on either
// counts both devices' buffers; each opens the other's handle, as processes sharing a GPU do; the
// exporter's own device still refuses it; resetAll ends the placement.
TEST_F(MockHipApi, DevicesPlacedOnOneGpuShareItsMemoryAndOpenEachOthersHandles) {
  placeOnGpu(5, 5);
  placeOnGpu(6, 5);
  EXPECT_EQ(gpuOf(6), 5);
  EXPECT_EQ(gpuOf(7), 7) << "an unplaced device is a GPU of its own";
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(5, 4096, &handle);
  std::size_t freeBytes = 0;
  std::size_t total = 0;
  ASSERT_EQ(hipSetDevice(6), hipSuccess);
  ASSERT_EQ(hipMemGetInfo(&freeBytes, &total), hipSuccess);
  EXPECT_EQ(total - freeBytes, 4096u) << "device 6 sees device 5's buffer on their GPU";
  ASSERT_EQ(hipSetDevice(7), hipSuccess);
  ASSERT_EQ(hipMemGetInfo(&freeBytes, &total), hipSuccess);
  EXPECT_EQ(total - freeBytes, 0u) << "device 7 is another GPU";
  ASSERT_EQ(hipSetDevice(6), hipSuccess);
  void* mapped = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, handle, 0), hipSuccess) << lastErrorDetail();
  EXPECT_EQ(liveMappings(6).size(), 1u);
  EXPECT_TRUE(liveAllocations(6).empty()) << "the buffer stays device 5's";
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(5), hipSuccess);
  void* own = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&own, handle, 0), hipErrorInvalidContext);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
  resetAll();
  EXPECT_EQ(gpuOf(6), 6);
}

// Ranks sharing one device (issue 26): a handle opens in another process on the exporter's own
// device, writes through the mapping land in the exporter's memory, and only the exporting
// process is refused, with 201. The child's own export on that device is refused in the child.
TEST_F(MockHipApi, AnotherProcessOnTheSameDeviceOpensTheHandle) {
  hipIpcMemHandle_t handle;
  auto* buffer = static_cast<char*>(allocOn(3, 4096, &handle));
  std::memset(buffer, 0, 4096);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    void* mapped = nullptr;
    if (hipSetDevice(3) != hipSuccess) ::_exit(10);
    if (hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess) != hipSuccess) {
      ::_exit(11);
    }
    std::memcpy(mapped, "from the same device", 21);
    if (hipIpcCloseMemHandle(mapped) != hipSuccess) ::_exit(12);
    void* own = nullptr;
    hipIpcMemHandle_t ownHandle;
    if (hipMalloc(&own, 4096) != hipSuccess || hipIpcGetMemHandle(&ownHandle, own) != hipSuccess) {
      ::_exit(13);
    }
    void* self = nullptr;
    if (hipIpcOpenMemHandle(&self, ownHandle, 0) != hipErrorInvalidContext) ::_exit(14);
    if (hipFree(own) != hipSuccess) ::_exit(15);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setDevice, 11: open on the same device refused, "
                                       "12: close, 13: child's allocation, 14: child opened its "
                                       "own handle";
  EXPECT_STREQ(buffer, "from the same device");
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, 0), hipErrorInvalidContext);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipApi, HandleOfAnotherJobIsRefusedWithAClearMessage) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  auto info = decodeHandle(handle);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->job, job());
  EXPECT_EQ(info->ownerPid, static_cast<int>(::getpid()));
  EXPECT_EQ(info->ownerDevice, 0);
  EXPECT_EQ(info->size, 4096u);
  HandleInfo foreign = *info;
  foreign.job = job() ^ 0x5a5a5a5a5a5a5a5aull;
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, encodeHandle(foreign), hipIpcMemLazyEnablePeerAccess),
            hipErrorInvalidValue);
  const std::string detail = lastErrorDetail();
  char expected[64];
  std::snprintf(expected, sizeof expected, "handle belongs to job %llx",
                static_cast<unsigned long long>(foreign.job));
  EXPECT_TRUE(contains(detail, expected)) << detail;
  EXPECT_TRUE(contains(detail, "another run")) << detail;
  EXPECT_TRUE(liveMappings(1).empty());
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipApi, StaleHandlesAreRefusedAndNeverMapped) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  ASSERT_EQ(hipFree(buffer), hipSuccess);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "stale handle")) << lastErrorDetail();
  EXPECT_EQ(ptr, nullptr);

  // A handle whose owner process is gone.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  HandleInfo dead{job(), static_cast<int>(child), 0, 1, 4096};
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, encodeHandle(dead), hipIpcMemLazyEnablePeerAccess),
            hipErrorInvalidHandle);
  EXPECT_TRUE(contains(lastErrorDetail(), "is gone")) << lastErrorDetail();
  EXPECT_TRUE(liveMappings(1).empty());
}

// As CUDA (runtime_table.yaml large-block-reuse, stale-large-place-taken, stale-large): a freed
// large block's place is taken by the next block of its device and size, and its handle opens onto
// that block (its bytes); a block of another size leaves the place empty and the handle refused.
// In both kinds of device memory (memfd segments, the arena).
TEST_F(MockHipApi, AFreedLargeBlocksHandleOpensOntoTheBlockNowAtItsPlace) {
  constexpr std::size_t kLarge = std::size_t{4} << 20;
  for (const DeviceMemory memory : {DeviceMemory::kSegments, DeviceMemory::kArena}) {
    SCOPED_TRACE(memory == DeviceMemory::kArena ? "arena" : "segments");
    beginRun(3, memory);
    hipIpcMemHandle_t stale;
    void* first = allocOn(0, kLarge, &stale);
    ASSERT_EQ(hipFree(first), hipSuccess);
    void* bigger = nullptr;
    ASSERT_EQ(hipMalloc(&bigger, 2 * kLarge), hipSuccess);
    EXPECT_NE(bigger, first) << "only a block of the freed one's size takes its place";
    ASSERT_EQ(hipSetDevice(1), hipSuccess);
    void* mapped = nullptr;
    EXPECT_EQ(hipIpcOpenMemHandle(&mapped, stale, hipIpcMemLazyEnablePeerAccess),
              hipErrorInvalidValue)
        << "the place is empty: refused (stale-large)";
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
    void* next = nullptr;
    ASSERT_EQ(hipMalloc(&next, kLarge), hipSuccess);
    EXPECT_EQ(next, first) << "the next block of its size takes the freed one's place";
    const std::uint64_t mark = 0x5EEDB10C;
    ASSERT_EQ(hipMemcpy(next, &mark, sizeof mark, hipMemcpyHostToDevice), hipSuccess);
    ASSERT_EQ(hipSetDevice(1), hipSuccess);
    ASSERT_EQ(hipIpcOpenMemHandle(&mapped, stale, hipIpcMemLazyEnablePeerAccess), hipSuccess)
        << lastErrorDetail();
    std::uint64_t seen = 0;
    ASSERT_EQ(hipMemcpy(&seen, mapped, sizeof seen, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(seen, mark) << "the stale handle maps the block now there";
    EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
    EXPECT_EQ(hipFree(next), hipSuccess);
    EXPECT_EQ(hipFree(bigger), hipSuccess);
    resetAll();
  }
  beginRun(0, DeviceMemory::kSegments);
  detail::placeMappingsAt(0);  // the kernel's addresses for the tests after this one
}

// The same while a peer still maps the freed block (free-while-mapped-contents): the next block
// still takes its place, and the peer's mapping keeps the freed block's bytes. In the arena the
// freed range is the peer's, so the new block is a memfd over the arena there; once it is freed
// the place is the arena's range again (zeroed, as a new block).
TEST_F(MockHipApi, ThePlaceIsTakenWhileAPeerStillMapsTheFreedBlock) {
  constexpr std::size_t kLarge = std::size_t{4} << 20;
  for (const DeviceMemory memory : {DeviceMemory::kSegments, DeviceMemory::kArena}) {
    SCOPED_TRACE(memory == DeviceMemory::kArena ? "arena" : "segments");
    beginRun(5, memory);
    hipIpcMemHandle_t stale;
    void* first = allocOn(0, kLarge, &stale);
    const std::uint64_t old = 0x01DB10C;
    ASSERT_EQ(hipMemcpy(first, &old, sizeof old, hipMemcpyHostToDevice), hipSuccess);
    ASSERT_EQ(hipSetDevice(1), hipSuccess);
    void* held = nullptr;
    ASSERT_EQ(hipIpcOpenMemHandle(&held, stale, hipIpcMemLazyEnablePeerAccess), hipSuccess);
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
    ASSERT_EQ(hipFree(first), hipSuccess);
    void* next = nullptr;
    ASSERT_EQ(hipMalloc(&next, kLarge), hipSuccess);
    EXPECT_EQ(next, first);
    std::uint64_t seen = 1;
    ASSERT_EQ(hipMemcpy(&seen, next, sizeof seen, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(seen, 0u) << "a new block holds zeros";
    const std::uint64_t mark = 0x5EEDB10C;
    ASSERT_EQ(hipMemcpy(next, &mark, sizeof mark, hipMemcpyHostToDevice), hipSuccess);
    ASSERT_EQ(hipSetDevice(1), hipSuccess);
    ASSERT_EQ(hipMemcpy(&seen, held, sizeof seen, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(seen, old) << "the peer's mapping keeps the freed block's bytes";
    void* mapped = nullptr;
    ASSERT_EQ(hipIpcOpenMemHandle(&mapped, stale, hipIpcMemLazyEnablePeerAccess), hipSuccess)
        << lastErrorDetail();
    ASSERT_EQ(hipMemcpy(&seen, mapped, sizeof seen, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(seen, mark) << "the stale handle opens onto the block now there";
    EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
    EXPECT_EQ(hipIpcCloseMemHandle(held), hipSuccess);
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
    ASSERT_EQ(hipFree(next), hipSuccess);
    void* third = nullptr;
    ASSERT_EQ(hipMalloc(&third, kLarge), hipSuccess);
    EXPECT_EQ(third, first) << "the place again";
    ASSERT_EQ(hipMemcpy(&seen, third, sizeof seen, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(seen, 0u) << "a new block holds zeros";
    EXPECT_EQ(hipFree(third), hipSuccess);
    resetAll();
  }
  beginRun(0, DeviceMemory::kSegments);
  detail::placeMappingsAt(0);
}

// As CUDA (runtime_table.yaml open-twice, open-twice-closes): a device maps a segment once; opening
// a handle again gives the same address and each open needs its own close, the last one unmaps;
// a block of the same chunk opened beside it sits as far from it as in the owner.
TEST_F(MockHipApi, OpensOfOneSegmentShareOneMappingAndEachNeedsItsClose) {
  hipIpcMemHandle_t handle;
  hipIpcMemHandle_t otherHandle;
  auto* owner = static_cast<std::uint32_t*>(allocOn(0, 4096, &handle));
  auto* other = static_cast<std::uint32_t*>(allocOn(0, 4096, &otherHandle));
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* first = nullptr;
  void* second = nullptr;
  void* beside = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&first, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  ASSERT_EQ(hipIpcOpenMemHandle(&second, handle, 0), hipSuccess);
  ASSERT_EQ(hipIpcOpenMemHandle(&beside, otherHandle, 0), hipSuccess);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, static_cast<void*>(owner));
  EXPECT_EQ(static_cast<char*>(beside) - static_cast<char*>(first),
            reinterpret_cast<char*>(other) - reinterpret_cast<char*>(owner));
  static_cast<std::uint32_t*>(first)[10] = 0xfeedbeef;
  EXPECT_EQ(owner[10], 0xfeedbeefu);
  EXPECT_EQ(liveMappings(1).size(), 2u);  // two addresses: the block and its neighbour

  EXPECT_EQ(hipIpcCloseMemHandle(first), hipSuccess);
  static_cast<std::uint32_t*>(second)[11] = 0xcafe;  // still mapped: one open is left
  EXPECT_EQ(owner[11], 0xcafeu);
  EXPECT_EQ(hipIpcCloseMemHandle(second), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(first), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "closed twice")) << lastErrorDetail();
  EXPECT_EQ(hipIpcCloseMemHandle(owner), hipErrorInvalidValue) << "an allocation is no mapping";
  EXPECT_EQ(liveMappings(1).size(), 1u);
  EXPECT_EQ(hipIpcCloseMemHandle(beside), hipSuccess);
  EXPECT_TRUE(liveMappings(1).empty());
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipFree(owner), hipSuccess);
  EXPECT_EQ(hipFree(other), hipSuccess);
}

TEST_F(MockHipApi, FreeingWhatIsNotALiveAllocationFails) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipFree(mapped), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "IPC mapping")) << lastErrorDetail();
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  int onStack = 0;
  EXPECT_EQ(hipFree(&onStack), hipErrorInvalidValue);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "not a live allocation")) << lastErrorDetail();
}

TEST_F(MockHipApi, OnlyTheBaseOfALiveAllocationCanBeExported) {
  void* buffer = allocOn(0, 4096);
  hipIpcMemHandle_t handle;
  EXPECT_EQ(hipIpcGetMemHandle(&handle, static_cast<char*>(buffer) + 16), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "16 bytes into")) << lastErrorDetail();
  int onStack = 0;
  EXPECT_EQ(hipIpcGetMemHandle(&handle, &onStack), hipErrorInvalidValue);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
  EXPECT_EQ(hipIpcGetMemHandle(&handle, buffer), hipErrorInvalidValue);
}

TEST_F(MockHipApi, CopiesCheckDeviceRanges) {
  hipIpcMemHandle_t handle;
  auto* buffer = static_cast<char*>(allocOn(0, 4096, &handle));
  const char text[] = "peer memory";
  EXPECT_EQ(hipMemcpy(buffer, text, sizeof text, hipMemcpyHostToDevice), hipSuccess);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  char out[sizeof text] = {};
  EXPECT_EQ(hipMemcpy(out, mapped, sizeof text, hipMemcpyDeviceToHost), hipSuccess);
  EXPECT_STREQ(out, text);
  EXPECT_EQ(hipMemcpy(buffer + 4090, text, sizeof text, hipMemcpyHostToDevice),
            hipErrorInvalidValue)
      << "past the end";
  EXPECT_EQ(hipMemcpy(out, text, sizeof text, static_cast<hipMemcpyKind>(9)),
            hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(hipMemset(buffer, 0x11, 64), hipSuccess);
  EXPECT_EQ(buffer[63], 0x11);
  EXPECT_EQ(hipDeviceSynchronize(), hipSuccess);
  std::size_t freeBytes = 0;
  std::size_t total = 0;
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipMemGetInfo(&freeBytes, &total), hipSuccess);
  EXPECT_EQ(total - freeBytes, 4096u);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipMemcpy(out, mapped, sizeof text, hipMemcpyDeviceToHost), hipErrorInvalidValue)
      << "a closed mapping is no longer device memory";
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipApi, AnotherProcessOpensTheHandleAndItsWritesLandHere) {
  (void)job();  // the child inherits this job id
  int toChild[2];
  int toParent[2];
  ASSERT_EQ(::pipe(toChild), 0);
  ASSERT_EQ(::pipe(toParent), 0);
  // Fork before allocating, so the child can reach the memory only through the handle.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    hipIpcMemHandle_t handle;
    char status = 'x';
    if (::read(toChild[0], &handle, sizeof handle) == sizeof handle &&
        hipSetDevice(1) == hipSuccess) {
      void* mapped = nullptr;
      if (hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess) == hipSuccess) {
        std::memcpy(mapped, "written by the child", 21);
        status = hipIpcCloseMemHandle(mapped) == hipSuccess ? 'k' : 'c';
      } else {
        status = 'o';
      }
    }
    (void)::write(toParent[1], &status, 1);
    ::_exit(0);
  }
  hipIpcMemHandle_t handle;
  auto* buffer = static_cast<char*>(allocOn(0, 4096, &handle));
  std::memset(buffer, 0, 4096);
  ASSERT_EQ(::write(toChild[1], &handle, sizeof handle), static_cast<ssize_t>(sizeof handle));
  char status = 0;
  ASSERT_EQ(::read(toParent[0], &status, 1), 1);
  int exitStatus = 0;
  ASSERT_EQ(::waitpid(child, &exitStatus, 0), child);
  EXPECT_EQ(status, 'k') << "o: open failed, c: close failed, x: no handle";
  EXPECT_STREQ(buffer, "written by the child");
  EXPECT_EQ(hipFree(buffer), hipSuccess);
  for (int fd : {toChild[0], toChild[1], toParent[0], toParent[1]}) ::close(fd);
}

// Ranks as threads, as the property runs use them: four ranks exchange handles, open every peer,
// write into it, then release everything, many times over; also reports the rate.
TEST_F(MockHipApi, ManyFourRankHandshakesOnThreads) {
  constexpr int kRanks = 4;
  constexpr int kRounds = 300;
  std::vector<hipIpcMemHandle_t> handles(kRanks);
  std::vector<std::uint32_t*> buffers(kRanks);
  std::barrier sync(kRanks);
  std::atomic<int> failures{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      if (hipSetDevice(rank) != hipSuccess) ++failures;
      for (int round = 0; round < kRounds; ++round) {
        void* buffer = nullptr;
        if (hipExtMallocWithFlags(&buffer, 4096, hipDeviceMallocUncached) != hipSuccess ||
            hipIpcGetMemHandle(&handles[static_cast<std::size_t>(rank)], buffer) != hipSuccess) {
          ++failures;
        }
        buffers[static_cast<std::size_t>(rank)] = static_cast<std::uint32_t*>(buffer);
        sync.arrive_and_wait();
        std::vector<void*> mapped;
        for (int peer = 0; peer < kRanks; ++peer) {
          if (peer == rank) continue;
          void* ptr = nullptr;
          if (hipIpcOpenMemHandle(&ptr, handles[static_cast<std::size_t>(peer)],
                                  hipIpcMemLazyEnablePeerAccess) != hipSuccess) {
            ++failures;
            continue;
          }
          static_cast<std::uint32_t*>(ptr)[rank] = static_cast<std::uint32_t>(round * 16 + rank);
          mapped.push_back(ptr);
        }
        sync.arrive_and_wait();
        for (int peer = 0; peer < kRanks; ++peer) {
          if (peer != rank && buffers[static_cast<std::size_t>(rank)] != nullptr &&
              buffers[static_cast<std::size_t>(rank)][peer] !=
                  static_cast<std::uint32_t>(round * 16 + peer)) {
            ++failures;
          }
        }
        for (void* ptr : mapped) {
          if (hipIpcCloseMemHandle(ptr) != hipSuccess) ++failures;
        }
        sync.arrive_and_wait();  // every peer closed before the owner frees
        if (hipFree(buffer) != hipSuccess) ++failures;
      }
    });
  }
  for (auto& t : ranks) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failures.load(), 0);
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(liveAllocations(rank).empty());
    EXPECT_TRUE(liveMappings(rank).empty());
  }
  EXPECT_TRUE(ownSegments().empty());
  std::cout << kRounds << " four-rank handshakes in " << seconds << " s ("
            << static_cast<int>(kRounds / seconds) << "/s)\n";
  RecordProperty("handshakes_per_second", static_cast<int>(kRounds / seconds));
}

}  // namespace
}  // namespace peerconf::mock_hip
