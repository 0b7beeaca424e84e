// Security of the mocked HIP runtime's IPC handles (issue 8), beyond runtime_api_test.cc and
// segment_test.cc here (which cover 0600 memfd segments, releasing them at free and at the end of
// their process, a file under an allocation's name, handles of another job and of a freed
// allocation in this process): what the fuzzer found (non-canonical handles; a handle naming a
// live allocation with another device or size), a freed allocation of another live process, and
// a segment under a handle's name that this runtime did not create.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip_test_support.h"

namespace peerconf::mock_hip {
namespace {

using test_support::contains;

class MockHipHardening : public test_support::MockHipTest {
 protected:
  // Opens `handle` on device 1 and expects a refusal with `code` whose detail names `why`, the
  // output pointer untouched and nothing mapped.
  static void expectRefused(const hipIpcMemHandle_t& handle, hipError_t code,
                            const std::string& why) {
    ASSERT_EQ(hipSetDevice(1), hipSuccess);
    int sentinel = 0;
    void* ptr = &sentinel;
    EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), code);
    EXPECT_EQ(ptr, &sentinel) << "a refused open wrote the pointer";
    EXPECT_TRUE(contains(lastErrorDetail(), why)) << lastErrorDetail();
    EXPECT_TRUE(liveMappings(1).empty());
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
  }
};

// resealHandle recomputes only the checksum: a handle's own bytes come back as they were, a
// changed field fails the checksum until resealed, and then decodes with the new value.
TEST(MockHipHandle, ResealRecomputesOnlyTheChecksum) {
  const HandleInfo info{0x1234, 77, 1, 5, 4096, 99};
  const hipIpcMemHandle_t good = encodeHandle(info);
  const hipIpcMemHandle_t same = resealHandle(good);
  EXPECT_EQ(std::memcmp(same.reserved, good.reserved, sizeof good.reserved), 0);

  hipIpcMemHandle_t changed = good;
  changed.reserved[24] ^= 0x01;  // the generation's low byte
  EXPECT_FALSE(decodeHandle(changed).has_value());
  const auto decoded = decodeHandle(resealHandle(changed));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->generation, 4u);
  EXPECT_EQ(decoded->job, 0x1234u);
  EXPECT_EQ(std::memcmp(resealHandle(changed).reserved, changed.reserved, 56), 0);
}

// Fuzzing finding F1: a valid checksum over non-zero reserved bytes was decoded.
// Since handle version 3 bytes 6..7 hold a sub-allocated block's offset and 48..55 its segment: a
// block of its own segment (a large one) has no offset, and no handle names segment 0 (since
// version 4 a large block's bytes 48..55 hold its place instead: a small block's handle here).
TEST_F(MockHipHardening, OnlyCanonicalHandlesDecode) {
  void* buffer = nullptr;
  ASSERT_EQ(hipMalloc(&buffer, std::size_t{4} << 20), hipSuccess);
  hipIpcMemHandle_t good;
  ASSERT_EQ(hipIpcGetMemHandle(&good, buffer), hipSuccess);
  ASSERT_TRUE(decodeHandle(good).has_value());
  void* small = nullptr;
  ASSERT_EQ(hipMalloc(&small, std::size_t{64} << 10), hipSuccess);
  hipIpcMemHandle_t goodSmall;
  ASSERT_EQ(hipIpcGetMemHandle(&goodSmall, small), hipSuccess);
  for (std::size_t offset : {6u, 7u}) {
    SCOPED_TRACE("offset byte " + std::to_string(offset));
    hipIpcMemHandle_t bad = good;
    bad.reserved[offset] = 1;
    bad = resealHandle(bad);
    EXPECT_FALSE(decodeHandle(bad).has_value());
    expectRefused(bad, hipErrorInvalidValue, "not a mock HIP IPC memory handle");
  }
  hipIpcMemHandle_t noSegment = goodSmall;
  std::memset(noSegment.reserved + 48, 0, 8);
  noSegment = resealHandle(noSegment);
  EXPECT_FALSE(decodeHandle(noSegment).has_value());
  EXPECT_EQ(hipFree(small), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

// Fuzzing finding F2: a well-formed handle naming the live allocation with another owner device or
// size was mapped (the size of the mapping came from the handle). What is mapped is the segment
// whole, so a handle must name its segment's device and size (a large block: its own).
TEST_F(MockHipHardening, AHandleMustNameItsAllocationsDeviceAndSize) {
  void* buffer = nullptr;
  ASSERT_EQ(hipMalloc(&buffer, std::size_t{4} << 20), hipSuccess);
  hipIpcMemHandle_t good;
  ASSERT_EQ(hipIpcGetMemHandle(&good, buffer), hipSuccess);
  const HandleInfo info = *decodeHandle(good);

  HandleInfo otherDevice = info;
  otherDevice.ownerDevice = 2;
  expectRefused(encodeHandle(otherDevice), hipErrorInvalidValue, "handle says device 2");
  for (std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{16384}}) {
    HandleInfo otherSize = info;
    otherSize.size = size;
    expectRefused(encodeHandle(otherSize), hipErrorInvalidValue,
                  "handle says " + std::to_string(size) + " bytes");
  }
  // The handle the runtime issued still opens.
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, good, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

// A small block's handle names its chunk: another size inside the chunk maps the chunk (as CUDA's
// handle of a sub-allocated block does), one that would reach past it is refused.
TEST_F(MockHipHardening, ASmallBlocksHandleNamesItsChunk) {
  void* buffer = nullptr;
  ASSERT_EQ(hipMalloc(&buffer, 8192), hipSuccess);
  hipIpcMemHandle_t good;
  ASSERT_EQ(hipIpcGetMemHandle(&good, buffer), hipSuccess);
  HandleInfo past = *decodeHandle(good);
  past.offset = (std::size_t{2} << 20) - 4096;
  expectRefused(encodeHandle(past), hipErrorInvalidValue, "8192 bytes at offset");
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  HandleInfo inside = *decodeHandle(good);
  inside.size = 4096;
  void* mapped = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, encodeHandle(inside), 0), hipSuccess) << lastErrorDetail();
  if (mapped != nullptr) EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

// A live process of this job that allocates, exports, and then serves requests: free the
// allocation; plant a memfd the runtime did not make under the name `plantedName()` gives, mode
// 0644; give it away (0600, another owner: root only); make it as the runtime makes them (0600,
// this user). The owner side of a cross-process handle.
class Owner {
 public:
  Owner() {
    (void)job();  // the child inherits this job id
    if (::pipe(toOwner_) != 0 || ::pipe(fromOwner_) != 0) return;
    pid_ = ::fork();
    if (pid_ != 0) return;
    void* buffer = nullptr;
    hipIpcMemHandle_t handle{};
    if (hipSetDevice(0) != hipSuccess || hipMalloc(&buffer, kBytes) != hipSuccess ||
        hipIpcGetMemHandle(&handle, buffer) != hipSuccess) {
      ::_exit(1);
    }
    (void)::write(fromOwner_[1], &handle, sizeof handle);
    int planted = -1;
    char command = 0;
    while (::read(toOwner_[0], &command, 1) == 1) {
      bool ok = false;
      if (command == 'f') {
        ok = hipFree(buffer) == hipSuccess;
        buffer = nullptr;
      } else if (command == 'p') {
        const std::string name = segmentName(planted_(static_cast<int>(::getpid())));
        planted = ::memfd_create(name.c_str() + 1, MFD_CLOEXEC);
        // A 4096-byte block's segment: its 2 MiB chunk.
        ok = planted >= 0 && ::fchmod(planted, 0644) == 0 && ::ftruncate(planted, 2 << 20) == 0;
      } else if (command == 'g') {
        ok = ::fchmod(planted, 0600) == 0 && ::fchown(planted, 65534, 65534) == 0;
      } else if (command == 'm') {
        ok = ::fchown(planted, ::getuid(), ::getgid()) == 0 && ::fchmod(planted, 0600) == 0;
      } else {
        break;
      }
      const char done = ok ? 'd' : 'e';
      (void)::write(fromOwner_[1], &done, 1);
    }
    if (buffer != nullptr) (void)hipFree(buffer);
    ::_exit(0);
  }
  ~Owner() {
    if (pid_ <= 0) return;
    const char quit = 'q';
    (void)::write(toOwner_[1], &quit, 1);
    ::waitpid(pid_, nullptr, 0);
    for (int fd : {toOwner_[0], toOwner_[1], fromOwner_[0], fromOwner_[1]}) ::close(fd);
  }

  bool handle(hipIpcMemHandle_t* out) {
    return pid_ > 0 && ::read(fromOwner_[0], out, sizeof *out) == sizeof *out;
  }
  bool free() { return request('f'); }
  bool plant() { return request('p'); }
  bool giveAway() { return request('g'); }
  bool makeAsTheRuntimeDoes() { return request('m'); }
  pid_t pid() const { return pid_; }
  // What a handle of the planted memfd says (no allocation has its generation).
  HandleInfo planted() const { return planted_(static_cast<int>(pid_)); }

  static constexpr std::size_t kBytes = 8192;

 private:
  static HandleInfo planted_(int pid) { return HandleInfo{job(), pid, 0, 987654, 4096, 0x5eed}; }
  bool request(char command) {
    char done = 0;
    return ::write(toOwner_[1], &command, 1) == 1 && ::read(fromOwner_[0], &done, 1) == 1 &&
           done == 'd';
  }

  pid_t pid_ = -1;
  int toOwner_[2] = {-1, -1};
  int fromOwner_[2] = {-1, -1};
};

// An earlier generation of another live process: its segment is gone, the handle is refused.
TEST_F(MockHipHardening, HandleOfAFreedAllocationOfAnotherProcessIsStale) {
  Owner owner;
  hipIpcMemHandle_t handle;
  ASSERT_TRUE(owner.handle(&handle));
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_TRUE(owner.free());
  expectRefused(handle, hipErrorInvalidValue, "stale handle");
  expectRefused(handle, hipErrorInvalidValue, "was freed or has another nonce (no segment");
}

TEST_F(MockHipHardening, ACrossProcessHandleMustNameTheSegmentsSize) {
  Owner owner;
  hipIpcMemHandle_t handle;
  ASSERT_TRUE(owner.handle(&handle));
  HandleInfo info = *decodeHandle(handle);
  // The owner's block is small: its segment is a 2 MiB chunk, which a handle saying 4 MiB does
  // not name.
  const std::size_t size = std::size_t{4} << 20;
  info.size = size;
  info.offset = 0;
  info.generation = info.segment;  // a large block's segment is its generation: the chunk's name
  expectRefused(encodeHandle(info), hipErrorInvalidValue,
                "is not the " + std::to_string(size) + " bytes the handle says");
}

// A segment under a handle's name that the runtime of the owner process did not make (another
// mode, another user) is refused, never mapped; nor is a /dev/shm file under that name.
TEST_F(MockHipHardening, ASegmentThisRuntimeDidNotCreateIsNeverMapped) {
  Owner owner;  // a live owner pid of this job
  hipIpcMemHandle_t unused;
  ASSERT_TRUE(owner.handle(&unused));
  const HandleInfo forged = owner.planted();
  const std::string name = segmentName(forged);
  {
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << name;
    ASSERT_EQ(::ftruncate(fd, 4096), 0);
    ::close(fd);
    expectRefused(encodeHandle(forged), hipErrorInvalidValue, "(no segment " + name);
    ::shm_unlink(name.c_str());
  }
  ASSERT_TRUE(owner.plant());
  expectRefused(encodeHandle(forged), hipErrorInvalidValue, "not a mock allocation of this user");
  if (::geteuid() == 0) {  // only root can give a segment away
    ASSERT_TRUE(owner.giveAway());
    expectRefused(encodeHandle(forged), hipErrorInvalidValue, "not a mock allocation of this user");
  }
  // The same segment as this runtime makes them (this user, 0600) is what a handle maps.
  ASSERT_TRUE(owner.makeAsTheRuntimeDoes());
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, encodeHandle(forged), hipIpcMemLazyEnablePeerAccess),
            hipSuccess)
      << lastErrorDetail();
  if (mapped != nullptr) EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
}

}  // namespace
}  // namespace peerconf::mock_hip
