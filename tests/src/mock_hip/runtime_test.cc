// The mocked HIP runtime on its own: HIP semantics (codes, texts, refusals), shared-memory
// segments (0600, O_EXCL, unlinked, swept), ledger, fault hooks, resets, and cross-process IPC.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip/segment.h"

namespace peerconf::mock_hip {
namespace {

std::string jobPrefix() {
  const std::string name = segmentName(job(), static_cast<int>(::getpid()), 0, 0);
  // "peerconf.<job>.<pid>." without the slash, the generation and the nonce
  return name.substr(1, name.rfind(".0.") + 1 - 1);
}

// This process's segments in /dev/shm.
std::vector<std::string> ownSegments() {
  std::vector<std::string> out;
  const std::string prefix = jobPrefix();
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) out.push_back(name);
  }
  return out;
}

bool segmentExists(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

std::uint64_t generationOf(void* ptr, int device) {
  for (const LedgerEntry& e : liveAllocations(device)) {
    if (e.ptr == reinterpret_cast<std::uintptr_t>(ptr)) return e.generation;
  }
  ADD_FAILURE() << "no live allocation at " << ptr;
  return 0;
}

// The segment's name, from the allocation's own handle (it carries the nonce).
std::string nameOf(void* ptr, int device) {
  hipIpcMemHandle_t handle;
  EXPECT_EQ(hipIpcGetMemHandle(&handle, ptr), hipSuccess);
  const auto info = decodeHandle(handle);
  EXPECT_TRUE(info.has_value());
  EXPECT_EQ(info->generation, generationOf(ptr, device));
  return info ? segmentName(*info) : std::string();
}

// Nonces the next allocations draw, in order (then random again), for planting their names.
std::vector<std::uint64_t> plannedNonces;
std::uint64_t nextPlannedNonce() {
  if (plannedNonces.empty()) return 0;  // 0: the runtime draws a random one
  const std::uint64_t nonce = plannedNonces.front();
  plannedNonces.erase(plannedNonces.begin());
  return nonce;
}

// Creates a segment of `size` bytes that the runtime did not make; returns whether it did.
bool plant(const std::string& name, const char* text, mode_t mode = 0600) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, mode);
  if (fd < 0) return false;
  const auto n = static_cast<ssize_t>(std::strlen(text));
  const bool ok = ::fchmod(fd, mode) == 0 && ::write(fd, text, static_cast<std::size_t>(n)) == n;
  ::close(fd);
  return ok;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class MockHip : public ::testing::Test {
 protected:
  void SetUp() override {
    resetAll();
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
  }
  void TearDown() override {
    resetAll();
    (void)hipSetDevice(0);
    (void)hipGetLastError();
  }

  // Allocates `size` bytes on `device` and exports them.
  void* allocOn(int device, std::size_t size, hipIpcMemHandle_t* handle = nullptr) {
    EXPECT_EQ(hipSetDevice(device), hipSuccess);
    void* ptr = nullptr;
    EXPECT_EQ(hipExtMallocWithFlags(&ptr, size, hipDeviceMallocUncached), hipSuccess);
    if (handle != nullptr) {
      EXPECT_EQ(hipIpcGetMemHandle(handle, ptr), hipSuccess);
    }
    return ptr;
  }
};

TEST_F(MockHip, ErrorNamesAndTextsAreHips) {
  EXPECT_STREQ(hipGetErrorString(hipSuccess), "no error");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidContext), "invalid device context");
  EXPECT_STREQ(hipGetErrorString(hipErrorOutOfMemory), "out of memory");
  EXPECT_STREQ(hipGetErrorString(hipErrorMapFailed), "mapping of buffer object failed");
  EXPECT_STREQ(hipGetErrorString(static_cast<hipError_t>(12345)), "unknown error");
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidHandle), "hipErrorInvalidHandle");
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidDevice), "hipErrorInvalidDevice");
  EXPECT_EQ(static_cast<int>(hipErrorRuntimeOther), 1053);
  EXPECT_EQ(static_cast<int>(hipErrorNoDevice), 100);
}

TEST_F(MockHip, LastErrorIsPerThreadAndClearedByGetLastError) {
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

TEST_F(MockHip, CurrentDeviceIsPerThreadAndDefaultsToZero) {
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

TEST_F(MockHip, ZeroSizeAllocationReturnsNullWithoutAllocating) {
  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(hipMalloc(&ptr, 0), hipSuccess);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_TRUE(liveAllocations(0).empty());
  EXPECT_EQ(hipFree(nullptr), hipSuccess);
  EXPECT_EQ(hipMalloc(nullptr, 16), hipErrorInvalidValue);
  void* p = nullptr;
  EXPECT_EQ(hipExtMallocWithFlags(&p, 16, 0x40), hipErrorInvalidValue);
}

TEST_F(MockHip, AllocationIsA0600SegmentThatFreeUnlinks) {
  void* ptr = allocOn(0, 8192);
  ASSERT_NE(ptr, nullptr);
  const std::string name = nameOf(ptr, 0);
  struct stat st {};
  ASSERT_EQ(::stat(("/dev/shm" + name).c_str(), &st), 0) << name;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 8192);
  EXPECT_EQ(st.st_uid, ::getuid());
  // A device pointer is host-addressable.
  static_cast<unsigned char*>(ptr)[8191] = 0xab;
  EXPECT_EQ(static_cast<unsigned char*>(ptr)[8191], 0xab);
  ASSERT_EQ(hipFree(ptr), hipSuccess);
  EXPECT_FALSE(segmentExists(name));
  EXPECT_TRUE(ownSegments().empty());
}

TEST_F(MockHip, SegmentNamesCarryARandomNonceThatTheHandleCarriesToo) {
  void* a = allocOn(0, 4096);
  void* b = allocOn(0, 4096);
  const std::string nameA = nameOf(a, 0);
  const std::string nameB = nameOf(b, 0);
  EXPECT_TRUE(segmentExists(nameA)) << nameA;
  EXPECT_TRUE(segmentExists(nameB)) << nameB;
  const auto tail = [](const std::string& name) { return name.substr(name.rfind('.') + 1); };
  EXPECT_EQ(tail(nameA).size(), 16u) << nameA;
  EXPECT_NE(tail(nameA), tail(nameB)) << "two allocations drew the same nonce";
  EXPECT_EQ(hipFree(a), hipSuccess);
  EXPECT_EQ(hipFree(b), hipSuccess);
}

// Someone pre-creates the exact name the next allocation will try: the allocation takes another
// nonce and succeeds, and the planted segment is neither truncated, reused nor removed.
TEST_F(MockHip, APreCreatedSegmentNameDoesNotMakeAllocationFail) {
  void* first = allocOn(0, 4096);
  const std::uint64_t generation = generationOf(first, 0);
  ASSERT_EQ(hipFree(first), hipSuccess);
  constexpr std::uint64_t kTaken = 0x0123456789abcdefull;
  constexpr std::uint64_t kAlsoTaken = 0x0fedcba987654321ull;
  const int pid = static_cast<int>(::getpid());
  const std::string planted = segmentName(job(), pid, generation + 1, kTaken);
  const std::string planted2 = segmentName(job(), pid, generation + 1, kAlsoTaken);
  struct Unlink {
    std::vector<std::string> names;
    ~Unlink() {
      for (const auto& n : names) ::shm_unlink(n.c_str());
    }
  } cleanup{{planted, planted2}};  // also when an assertion below returns early
  ASSERT_TRUE(plant(planted, "planted"));
  ASSERT_TRUE(plant(planted2, "planted"));
  plannedNonces = {kTaken, kAlsoTaken};
  detail::setNonceSourceForTesting(&nextPlannedNonce);

  void* ptr = nullptr;
  const hipError_t rc = hipMalloc(&ptr, 4096);
  detail::setNonceSourceForTesting(nullptr);
  EXPECT_TRUE(plannedNonces.empty()) << "the allocation tried the planted names first";
  ASSERT_EQ(rc, hipSuccess) << lastErrorDetail();
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(generationOf(ptr, 0), generation + 1);
  const std::string name = nameOf(ptr, 0);
  EXPECT_NE(name, planted);
  EXPECT_NE(name, planted2);
  EXPECT_TRUE(segmentExists(name));
  for (const std::string& p : {planted, planted2}) {
    struct stat st {};
    ASSERT_EQ(::stat(("/dev/shm" + p).c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_size, 7) << "the existing segment was not truncated or reused";
  }
  // What the allocation hands out is its own segment: a peer maps it, writes show.
  hipIpcMemHandle_t handle;
  ASSERT_EQ(hipIpcGetMemHandle(&handle, ptr), hipSuccess);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, 0), hipSuccess);
  static_cast<unsigned char*>(ptr)[100] = 0x3c;
  EXPECT_EQ(static_cast<unsigned char*>(mapped)[100], 0x3c);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipFree(ptr), hipSuccess);
}

// A handle whose nonce is not the allocation's is refused like a stale handle, in the owner
// process and in another process (where the name it gives does not exist).
TEST_F(MockHip, AHandleWithAWrongNonceIsRefusedLikeAStaleHandle) {
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

TEST_F(MockHip, NothingIsLeftInDevShmAfterANormalRun) {
  hipIpcMemHandle_t handle;
  void* a = allocOn(0, 4096, &handle);
  void* b = allocOn(0, 1 << 20);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(ownSegments().size(), 2u);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipFree(a), hipSuccess);
  EXPECT_EQ(hipFree(b), hipSuccess);
  EXPECT_TRUE(ownSegments().empty());
}

TEST_F(MockHip, GarbageAndCorruptedHandlesAreRefusedAndNeverMapped) {
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

TEST_F(MockHip, OpeningOwnHandleIsAnInvalidContext) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(4, 4096, &handle);
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess),
            hipErrorInvalidContext);
  EXPECT_TRUE(contains(lastErrorDetail(), "own IPC handle")) << lastErrorDetail();
  EXPECT_EQ(ptr, nullptr);
  EXPECT_TRUE(liveMappings(4).empty());
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHip, HandleOfAnotherJobIsRefusedWithAClearMessage) {
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

TEST_F(MockHip, SetJobChangesWhatIsAccepted) {
  const std::uint64_t original = job();
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  setJob(original + 1);
  EXPECT_EQ(job(), original + 1);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
  setJob(original);
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(ptr), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHip, StaleHandlesAreRefusedAndNeverMapped) {
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

TEST_F(MockHip, EveryOpenMapsAtANewAddressAndCloseWorksOnce) {
  hipIpcMemHandle_t handle;
  auto* owner = static_cast<std::uint32_t*>(allocOn(0, 4096, &handle));
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&first, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  ASSERT_EQ(hipIpcOpenMemHandle(&second, handle, 0), hipSuccess);
  EXPECT_NE(first, second);
  EXPECT_NE(first, static_cast<void*>(owner));
  EXPECT_NE(second, static_cast<void*>(owner));
  static_cast<std::uint32_t*>(first)[10] = 0xfeedbeef;
  EXPECT_EQ(owner[10], 0xfeedbeefu);
  EXPECT_EQ(static_cast<std::uint32_t*>(second)[10], 0xfeedbeefu);
  EXPECT_EQ(liveMappings(1).size(), 2u);

  EXPECT_EQ(hipIpcCloseMemHandle(first), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(first), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "closed twice")) << lastErrorDetail();
  EXPECT_EQ(hipIpcCloseMemHandle(owner), hipErrorInvalidValue) << "an allocation is no mapping";
  EXPECT_EQ(hipIpcCloseMemHandle(second), hipSuccess);
  EXPECT_TRUE(liveMappings(1).empty());
  EXPECT_EQ(hipFree(owner), hipSuccess);
}

TEST_F(MockHip, FreeingWhatIsNotALiveAllocationFails) {
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

TEST_F(MockHip, OnlyTheBaseOfALiveAllocationCanBeExported) {
  void* buffer = allocOn(0, 4096);
  hipIpcMemHandle_t handle;
  EXPECT_EQ(hipIpcGetMemHandle(&handle, static_cast<char*>(buffer) + 16), hipErrorInvalidValue);
  EXPECT_TRUE(contains(lastErrorDetail(), "16 bytes into")) << lastErrorDetail();
  int onStack = 0;
  EXPECT_EQ(hipIpcGetMemHandle(&handle, &onStack), hipErrorInvalidValue);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
  EXPECT_EQ(hipIpcGetMemHandle(&handle, buffer), hipErrorInvalidValue);
}

TEST_F(MockHip, CopiesCheckDeviceRanges) {
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

TEST_F(MockHip, LedgerRecordsAllocOpenCloseFreeOnTheRightDevices) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(2, 4096, &handle);
  const std::uint64_t generation = generationOf(buffer, 2);
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(liveMappings(3).size(), 1u);
  EXPECT_EQ(liveAllocations(2).size(), 1u);
  ASSERT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(2), hipSuccess);
  ASSERT_EQ(hipFree(buffer), hipSuccess);

  const auto owner = ledger(2);
  ASSERT_EQ(owner.size(), 2u);
  EXPECT_EQ(owner[0].op, LedgerOp::kAlloc);
  EXPECT_EQ(owner[1].op, LedgerOp::kFree);
  for (const auto& e : owner) {
    EXPECT_EQ(e.device, 2);
    EXPECT_EQ(e.ownerDevice, 2);
    EXPECT_EQ(e.ptr, reinterpret_cast<std::uintptr_t>(buffer));
    EXPECT_EQ(e.size, 4096u);
    EXPECT_EQ(e.generation, generation);
    EXPECT_EQ(e.error, 0);
  }
  const auto peer = ledger(3);
  ASSERT_EQ(peer.size(), 2u);
  EXPECT_EQ(peer[0].op, LedgerOp::kOpen);
  EXPECT_EQ(peer[1].op, LedgerOp::kClose);
  for (const auto& e : peer) {
    EXPECT_EQ(e.device, 3);
    EXPECT_EQ(e.ownerDevice, 2);
    EXPECT_EQ(e.ptr, reinterpret_cast<std::uintptr_t>(mapped));
    EXPECT_EQ(e.generation, generation);
    EXPECT_EQ(e.error, 0);
  }
  EXPECT_LE(owner[0].timeNs, peer[0].timeNs);
  EXPECT_LE(peer[1].timeNs, owner[1].timeNs);
  EXPECT_TRUE(ledger(0).empty());
  EXPECT_TRUE(liveAllocations(2).empty());
  EXPECT_TRUE(liveMappings(3).empty());
  clearLedgers();
  EXPECT_TRUE(ledger(2).empty());
  EXPECT_TRUE(ledger(-1).empty());
}

TEST_F(MockHip, FaultHookFailsTheChosenCallWithTheChosenCodeAndNoSideEffect) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  std::vector<std::tuple<Call, int, int>> seen;
  setFaultHook(1, [&seen](Call call, int device, int peer) {
    seen.emplace_back(call, device, peer);
    if (call == Call::kOpen && peer == 0) return static_cast<int>(hipErrorMapFailed);
    if (call == Call::kMalloc) return static_cast<int>(hipErrorOutOfMemory);
    return 0;
  });
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  const auto segmentsBefore = ownSegments().size();

  void* ptr = reinterpret_cast<void*>(0x99);
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipErrorMapFailed);
  EXPECT_EQ(ptr, reinterpret_cast<void*>(0x99));
  EXPECT_TRUE(contains(lastErrorDetail(), "fault hook")) << lastErrorDetail();
  EXPECT_TRUE(liveMappings(1).empty());
  EXPECT_EQ(hipMalloc(&ptr, 4096), hipErrorOutOfMemory);
  EXPECT_EQ(ptr, reinterpret_cast<void*>(0x99));
  EXPECT_TRUE(liveAllocations(1).empty());
  EXPECT_EQ(ownSegments().size(), segmentsBefore);

  const auto entries = ledger(1);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].op, LedgerOp::kOpen);
  EXPECT_EQ(entries[0].error, static_cast<int>(hipErrorMapFailed));
  EXPECT_EQ(entries[0].ownerDevice, 0);
  EXPECT_EQ(entries[1].op, LedgerOp::kAlloc);
  EXPECT_EQ(entries[1].error, static_cast<int>(hipErrorOutOfMemory));
  ASSERT_GE(seen.size(), 3u);  // hipSetDevice(1), open, malloc
  EXPECT_EQ(seen[0], std::make_tuple(Call::kSetDevice, 1, -1));
  EXPECT_EQ(seen[1], std::make_tuple(Call::kOpen, 1, 0));
  EXPECT_EQ(seen[2], std::make_tuple(Call::kMalloc, 1, -1));

  // Another device's hook does not apply; clearing the hooks restores the call.
  setFaultHook(2, [](Call, int, int) { return static_cast<int>(hipErrorUnknown); });
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* mapped = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipSetDevice(2), hipErrorUnknown);
  int device = -1;
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_EQ(device, 3) << "a failed hipSetDevice keeps the current device";
  clearFaultHooks();
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHip, ResetDeviceReleasesEverythingTheDeviceHolds) {
  hipIpcMemHandle_t peerHandle;
  void* peerBuffer = allocOn(3, 4096, &peerHandle);
  void* a = allocOn(2, 4096);
  void* b = allocOn(2, 8192);
  const std::string nameA = nameOf(a, 2);
  const std::string nameB = nameOf(b, 2);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, peerHandle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  const auto ledgerBefore = ledger(2).size();

  resetDevice(2);
  EXPECT_TRUE(liveAllocations(2).empty());
  EXPECT_TRUE(liveMappings(2).empty());
  EXPECT_FALSE(segmentExists(nameA));
  EXPECT_FALSE(segmentExists(nameB));
  EXPECT_EQ(ledger(2).size(), ledgerBefore) << "a reset writes no ledger entries";
  EXPECT_EQ(liveAllocations(3).size(), 1u) << "other devices are untouched";
  EXPECT_EQ(hipFree(a), hipErrorInvalidValue);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipErrorInvalidValue);

  resetAll();
  EXPECT_TRUE(liveAllocations(3).empty());
  EXPECT_TRUE(ownSegments().empty());
  EXPECT_TRUE(ledger(3).empty());
  (void)peerBuffer;
}

TEST_F(MockHip, AnotherProcessOpensTheHandleAndItsWritesLandHere) {
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

TEST_F(MockHip, SweepRemovesSegmentsOfDeadProcessesAndKeepsLiveOnes) {
  (void)job();
  void* mine = allocOn(0, 4096);
  const std::string myName = nameOf(mine, 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    void* leaked = nullptr;
    std::string name;
    if (hipMalloc(&leaked, 4096) == hipSuccess) {
      name = nameOf(leaked, 0);
    }
    (void)::write(fds[1], name.data(), name.size());
    ::_exit(0);  // dies without freeing
  }
  ::close(fds[1]);
  char buffer[128] = {};
  const ssize_t got = ::read(fds[0], buffer, sizeof buffer - 1);
  ::close(fds[0]);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  ASSERT_GT(got, 0);
  const std::string leakedName(buffer, static_cast<std::size_t>(got));
  ASSERT_TRUE(segmentExists(leakedName)) << leakedName;

  // Another test process's sweep may get there first; what matters is that it is gone after ours.
  sweepStaleSegments();
  EXPECT_FALSE(segmentExists(leakedName)) << "the dead child's segment is swept";
  EXPECT_TRUE(segmentExists(myName)) << "a live process's segment is kept";
  EXPECT_EQ(hipFree(mine), hipSuccess);
}

// The sweep removes only what it can prove is its own job's and dead: a segment of another job
// (another run, user or pid namespace sharing /dev/shm, where the pid means nothing here) or one
// this runtime did not create (another mode) stays, even when its pid is not alive here.
TEST_F(MockHip, SweepLeavesSegmentsItCannotProveAreItsJobsAlone) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const int dead = static_cast<int>(child);  // not alive in this pid namespace
  const std::uint64_t foreignJob = job() ^ 0xa5a5a5a5a5a5a5a5ull;
  const std::string foreign = segmentName(foreignJob, dead, 1, 0x1111111111111111ull);
  const std::string otherMode = segmentName(job(), dead, 2, 0x2222222222222222ull);
  const std::string livePid = segmentName(job(), 1, 3, 0x3333333333333333ull);
  const std::string ours = segmentName(job(), dead, 4, 0x4444444444444444ull);
  ASSERT_TRUE(plant(foreign, "foreign"));
  ASSERT_TRUE(plant(otherMode, "other mode", 0644));
  ASSERT_TRUE(plant(livePid, "pid 1"));
  ASSERT_TRUE(plant(ours, "ours"));

  sweepStaleSegments();
  EXPECT_TRUE(segmentExists(foreign)) << "another job's segment was removed";
  EXPECT_TRUE(segmentExists(otherMode)) << "a segment the runtime did not create was removed";
  EXPECT_TRUE(segmentExists(livePid)) << "a live process's segment was removed";
  EXPECT_FALSE(segmentExists(ours)) << "this job's segment of a dead process is swept";
  // Swept as its own job's by a process of the foreign job.
  sweepStaleSegments(foreignJob);
  EXPECT_FALSE(segmentExists(foreign));
  for (const std::string& name : {foreign, otherMode, livePid, ours}) ::shm_unlink(name.c_str());
}

// Ranks as threads, as the property runs use them: four ranks exchange handles, open every peer,
// write into it, then release everything, many times over; also reports the rate.
TEST_F(MockHip, ManyFourRankHandshakesOnThreads) {
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
