// The mocked HIP runtime's shared-memory segments (segment.cc): 0600 segments created O_EXCL
// and unlinked when their last block is freed (a large block is a segment of its own, small ones
// share a 2 MiB chunk), random name nonces, names that exist already, what openSegment refuses,
// segment names parsed back, and the sweep of dead processes' segments.
#include "mock_hip/segment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip_test_support.h"

namespace peerconf::mock_hip {
namespace {

using test_support::generationOf;
using test_support::nameOf;
using test_support::ownSegments;
using test_support::segmentExists;
using MockHipSegment = test_support::MockHipTest;

constexpr std::size_t kChunk = std::size_t{2} << 20;
constexpr std::size_t kLarge = std::size_t{4} << 20;  // a segment of its own

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

TEST_F(MockHipSegment, AllocationIsA0600SegmentThatFreeUnlinks) {
  for (const std::size_t size : {std::size_t{8192}, kLarge}) {
    SCOPED_TRACE(size);
    void* ptr = allocOn(0, size);
    ASSERT_NE(ptr, nullptr);
    const std::string name = nameOf(ptr, 0);
    struct stat st {};
    ASSERT_EQ(::stat(("/dev/shm" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // A small block lives in a chunk; a large one is its segment.
    EXPECT_EQ(static_cast<std::size_t>(st.st_size), size < kChunk ? kChunk : size);
    EXPECT_EQ(st.st_uid, ::getuid());
    // A device pointer is host-addressable.
    static_cast<unsigned char*>(ptr)[size - 1] = 0xab;
    EXPECT_EQ(static_cast<unsigned char*>(ptr)[size - 1], 0xab);
    ASSERT_EQ(hipFree(ptr), hipSuccess);
    EXPECT_FALSE(segmentExists(name));
    EXPECT_TRUE(ownSegments().empty());
  }
}

// Small blocks of one device share a chunk until it is full (one name, two blocks), and its last
// free unlinks it; every segment draws its own nonce.
TEST_F(MockHipSegment, SegmentNamesCarryARandomNonceThatTheHandleCarriesToo) {
  void* a = allocOn(0, 4096);
  void* b = allocOn(0, 4096);
  void* c = allocOn(1, 4096);
  const std::string nameA = nameOf(a, 0);
  const std::string nameB = nameOf(b, 0);
  const std::string nameC = nameOf(c, 1);
  EXPECT_EQ(nameA, nameB) << "two small blocks of one device are one chunk";
  EXPECT_TRUE(segmentExists(nameA)) << nameA;
  EXPECT_TRUE(segmentExists(nameC)) << nameC;
  const auto tail = [](const std::string& name) { return name.substr(name.rfind('.') + 1); };
  EXPECT_EQ(tail(nameA).size(), 16u) << nameA;
  EXPECT_NE(tail(nameA), tail(nameC)) << "two segments drew the same nonce";
  EXPECT_EQ(hipFree(a), hipSuccess);
  EXPECT_TRUE(segmentExists(nameB)) << "the chunk lives while a block of it does";
  EXPECT_EQ(hipFree(b), hipSuccess);
  EXPECT_FALSE(segmentExists(nameB));
  EXPECT_EQ(hipFree(c), hipSuccess);
}

// Someone pre-creates the exact name the next allocation will try: the allocation takes another
// nonce and succeeds, and the planted segment is neither truncated, reused nor removed.
TEST_F(MockHipSegment, APreCreatedSegmentNameDoesNotMakeAllocationFail) {
  void* first = allocOn(0, kLarge);  // a segment of its own, numbered as the allocation
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
  const hipError_t rc = hipMalloc(&ptr, kLarge);
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

TEST_F(MockHipSegment, NothingIsLeftInDevShmAfterANormalRun) {
  hipIpcMemHandle_t handle;
  void* a = allocOn(0, 4096, &handle);
  void* b = allocOn(0, kLarge);
  void* c = allocOn(0, 1 << 20);  // in a's chunk
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(ownSegments().size(), 2u);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  EXPECT_EQ(hipFree(c), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipFree(a), hipSuccess);
  EXPECT_EQ(hipFree(b), hipSuccess);
  EXPECT_TRUE(ownSegments().empty());
}

TEST_F(MockHipSegment, SweepRemovesSegmentsOfDeadProcessesAndKeepsLiveOnes) {
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
TEST_F(MockHipSegment, SweepLeavesSegmentsItCannotProveAreItsJobsAlone) {
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

// The placement cursor: one mapping after another from the base, a hole after each, an address
// already taken skipped, and without a cursor the kernel's choice.
TEST_F(MockHipSegment, MappingsGoOneAfterAnotherFromTheCursorAndSkipATakenAddress) {
  const std::uint64_t base = detail::placementBase(11);
  EXPECT_EQ(base % (std::uint64_t{64} << 20), 0u);
  const std::string name = "/peerconf-placement-test-" + std::to_string(::getpid());
  const detail::Mapped created = detail::createSegment(name, 4096, true);
  ASSERT_NE(created.base, nullptr);
  detail::placeMappingsAt(base);
  const detail::Mapped first = detail::mapSegment(created.fd, 4096);
  const detail::Mapped second = detail::mapSegment(created.fd, 100000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first.base), base);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(second.base), base + 2 * (64 << 10))
      << "4096 bytes round up to 64 KiB, then a 64 KiB hole";
  // Someone else's mapping where the cursor is: skipped, not replaced.
  const std::uint64_t cursor = base + 2 * (64 << 10) + 2 * (64 << 10) + (64 << 10);
  void* squatter = ::mmap(reinterpret_cast<void*>(static_cast<std::uintptr_t>(cursor)), 4096,
                          PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(squatter), cursor);
  const detail::Mapped third = detail::mapSegment(created.fd, 4096);
  ASSERT_NE(third.base, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(third.base), cursor + 2 * (64 << 10));
  detail::placeMappingsAt(0);
  const detail::Mapped kernel = detail::mapSegment(created.fd, 4096);
  ASSERT_NE(kernel.base, nullptr);
  EXPECT_TRUE(reinterpret_cast<std::uintptr_t>(kernel.base) < base ||
              reinterpret_cast<std::uintptr_t>(kernel.base) > cursor + (1 << 20));
  for (const detail::Mapped& m : {first, third, kernel}) detail::unmapSegment(m.base, 4096);
  detail::unmapSegment(second.base, 100000);
  ::munmap(squatter, 4096);
  detail::unmapSegment(created.base, 4096);
  detail::closeSegment(created.fd);
  detail::unlinkSegment(name);
}

TEST(MockHipSegmentNames, ParseSegmentNameReadsBackWhatSegmentNameWrites) {
  const std::string name = segmentName(0xabcdef0123456789ull, 4321, 17, 0x0fedcba987654321ull);
  EXPECT_EQ(name, "/peerconf.abcdef0123456789.4321.17.0fedcba987654321");
  const auto id = detail::parseSegmentName(name.substr(1));
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->job, 0xabcdef0123456789ull);
  EXPECT_EQ(id->pid, 4321);
  EXPECT_EQ(id->generation, 17u);
  EXPECT_EQ(id->nonce, 0x0fedcba987654321ull);
  for (const char* bad :
       {"peerconf.1.2.3", "peerconf.1.2.3.4.5", "other.1.2.3.4", "peerconf.1.0.3.4",
        "peerconf.1.-2.3.4", "peerconf.zz.2.3.4", "peerconf.1..3.4", "peerconf.1.2.3.4x", ""}) {
    EXPECT_FALSE(detail::parseSegmentName(bad).has_value()) << bad;
  }
}

TEST(MockHipSegmentNames, RandomNoncesAreNeverZeroAndATestSourceIsUsedUntilItGivesZero) {
  for (int i = 0; i < 100; ++i) EXPECT_NE(detail::randomNonce(), 0u);
  plannedNonces = {42};
  detail::setNonceSourceForTesting(&nextPlannedNonce);
  const std::uint64_t planned = detail::randomNonce();
  const std::uint64_t drawn = detail::randomNonce();  // the source gives 0: a random one
  detail::setNonceSourceForTesting(nullptr);
  EXPECT_EQ(planned, 42u);
  EXPECT_NE(drawn, 0u);
}

// createSegment never takes over an existing name; openSegment maps only a 0600 segment of this
// user of exactly the size asked, and says which step refused.
TEST(MockHipSegmentFiles, CreateIsExclusiveAndOpenChecksOwnerModeAndSize) {
  const std::string name = segmentName(job(), static_cast<int>(::getpid()), 0, 0x5e6e5e6e5e6eull);
  const detail::Mapped created = detail::createSegment(name, 4096, /*keepFd=*/true);
  ASSERT_NE(created.base, nullptr) << created.step << " errno " << created.error;
  EXPECT_GE(created.fd, 0);
  static_cast<char*>(created.base)[10] = 'x';

  const detail::Mapped again = detail::createSegment(name, 4096, false);
  EXPECT_EQ(again.base, nullptr);
  EXPECT_STREQ(again.step, "shm_open");
  EXPECT_EQ(again.error, EEXIST);
  EXPECT_TRUE(segmentExists(name)) << "a refused create removed someone else's segment";

  const detail::Mapped opened = detail::openSegment(name, 4096);
  ASSERT_NE(opened.base, nullptr) << opened.step;
  EXPECT_NE(opened.base, created.base);
  EXPECT_EQ(static_cast<char*>(opened.base)[10], 'x');
  const detail::Mapped wrongSize = detail::openSegment(name, 8192);
  EXPECT_EQ(wrongSize.base, nullptr);
  EXPECT_STREQ(wrongSize.step, "size");
  EXPECT_EQ(wrongSize.error, EINVAL);
  ASSERT_EQ(::fchmod(created.fd, 0644), 0);
  const detail::Mapped wrongMode = detail::openSegment(name, 4096);
  EXPECT_EQ(wrongMode.base, nullptr);
  EXPECT_STREQ(wrongMode.step, "owner");
  EXPECT_EQ(wrongMode.error, EPERM);

  detail::unmapSegment(opened.base, 4096);
  detail::unmapSegment(created.base, 4096);
  detail::closeSegment(created.fd);
  detail::unlinkSegment(name);
  EXPECT_FALSE(segmentExists(name));
  detail::unlinkSegment(name);  // a second unlink (ENOENT) is not an error
  const detail::Mapped gone = detail::openSegment(name, 4096);
  EXPECT_STREQ(gone.step, "shm_open");
  EXPECT_EQ(gone.error, ENOENT);
}

}  // namespace
}  // namespace peerconf::mock_hip
