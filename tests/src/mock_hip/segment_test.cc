// The mocked HIP runtime's shared-memory segments (segment.cc): 0600 memfds released at free and
// with their last process however it ends, never a file in /dev/shm, random name nonces, a file
// under an allocation's name, what openSegment refuses, segment names parsed back, and the sweep
// of the /dev/shm files older builds left.
#include "mock_hip/segment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
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

using test_support::devShmFilesOfThisJob;
using test_support::devShmHas;
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

// Creates a /dev/shm file that the runtime did not make (as builds before memfd segments made
// theirs); returns whether it did.
bool plant(const std::string& name, const char* text, mode_t mode = 0600) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, mode);
  if (fd < 0) return false;
  const auto n = static_cast<ssize_t>(std::strlen(text));
  const bool ok = ::fchmod(fd, mode) == 0 && ::write(fd, text, static_cast<std::size_t>(n)) == n;
  ::close(fd);
  return ok;
}

// The descriptor number of this process's segment `name` (segmentName's), or -1.
int descriptorOf(const std::string& name) {
  for (int fd = 0; fd < 4096; ++fd) {
    char target[256];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    if (std::string(target, static_cast<std::size_t>(n)) ==
        "/memfd:" + name.substr(1) + " (deleted)") {
      return fd;
    }
  }
  return -1;
}

// A small block lives in a 2 MiB chunk; a large one is a segment of its own.
TEST_F(MockHipSegment, AllocationIsA0600MemfdThatFreeReleases) {
  for (const std::size_t size : {std::size_t{8192}, kLarge}) {
    SCOPED_TRACE(size);
    void* ptr = allocOn(0, size);
    ASSERT_NE(ptr, nullptr);
    const std::string name = nameOf(ptr, 0);
    const int fd = descriptorOf(name);
    ASSERT_GE(fd, 0) << name << " is not a descriptor of this process";
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(static_cast<std::size_t>(st.st_size), size < kChunk ? kChunk : size);
    EXPECT_EQ(st.st_uid, ::geteuid());
    EXPECT_EQ(::fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "a segment must not leak into exec";
    EXPECT_FALSE(devShmHas(name)) << "a segment is never a file";
    // A device pointer is host-addressable.
    static_cast<unsigned char*>(ptr)[size - 1] = 0xab;
    EXPECT_EQ(static_cast<unsigned char*>(ptr)[size - 1], 0xab);
    ASSERT_EQ(hipFree(ptr), hipSuccess);
    EXPECT_FALSE(segmentExists(name));
    EXPECT_TRUE(ownSegments().empty());
  }
}

// Small blocks of one device share a chunk (one name, two blocks), and its last free releases it;
// every segment draws its own nonce.
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

// Someone pre-creates a /dev/shm file under the exact name the next allocation takes: the
// allocation succeeds under that name, the file is neither truncated, reused nor removed, and
// what another process maps through the handle is the allocation, never the file.
TEST_F(MockHipSegment, AFileUnderTheAllocationsNameIsNeverTakenForIt) {
  void* first = allocOn(0, kLarge);  // a segment of its own, numbered as the allocation
  const std::uint64_t generation = generationOf(first, 0);
  ASSERT_EQ(hipFree(first), hipSuccess);
  constexpr std::uint64_t kTaken = 0x0123456789abcdefull;
  const int pid = static_cast<int>(::getpid());
  const std::string planted = segmentName(job(), pid, generation + 1, kTaken);
  struct Unlink {
    std::string name;
    ~Unlink() { ::shm_unlink(name.c_str()); }
  } cleanup{planted};  // also when an assertion below returns early
  ASSERT_TRUE(plant(planted, "planted"));
  plannedNonces = {kTaken};
  detail::setNonceSourceForTesting(&nextPlannedNonce);

  void* ptr = nullptr;
  const hipError_t rc = hipMalloc(&ptr, kLarge);
  detail::setNonceSourceForTesting(nullptr);
  EXPECT_TRUE(plannedNonces.empty()) << "the allocation drew the planted nonce";
  ASSERT_EQ(rc, hipSuccess) << lastErrorDetail();
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(generationOf(ptr, 0), generation + 1);
  EXPECT_EQ(nameOf(ptr, 0), planted);
  struct stat st {};
  ASSERT_EQ(::stat(("/dev/shm" + planted).c_str(), &st), 0) << planted;
  EXPECT_EQ(st.st_size, 7) << "the existing file was not truncated or reused";
  // What the allocation hands out is its own memory: another process maps it and sees its bytes.
  hipIpcMemHandle_t handle;
  ASSERT_EQ(hipIpcGetMemHandle(&handle, ptr), hipSuccess);
  static_cast<unsigned char*>(ptr)[100] = 0x3c;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    void* mapped = nullptr;
    if (hipSetDevice(1) != hipSuccess) ::_exit(10);
    if (hipIpcOpenMemHandle(&mapped, handle, 0) != hipSuccess) ::_exit(11);
    if (static_cast<unsigned char*>(mapped)[100] != 0x3c) ::_exit(12);
    static_cast<unsigned char*>(mapped)[101] = 0x4d;
    ::_exit(hipIpcCloseMemHandle(mapped) == hipSuccess ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setDevice, 11: open, 12: not the allocation's bytes";
  EXPECT_EQ(static_cast<unsigned char*>(ptr)[101], 0x4d) << "the child's write did not show";
  EXPECT_EQ(hipFree(ptr), hipSuccess);
  EXPECT_TRUE(devShmHas(planted)) << "freeing the allocation removed someone else's file";
}

TEST_F(MockHipSegment, NothingIsLeftAfterANormalRun) {
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
  EXPECT_TRUE(devShmFilesOfThisJob().empty());
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipFree(a), hipSuccess);
  EXPECT_EQ(hipFree(b), hipSuccess);
  EXPECT_TRUE(ownSegments().empty());
  EXPECT_TRUE(devShmFilesOfThisJob().empty());
}

// A process that ends without freeing, however it ends (here SIGKILL, which nothing can catch),
// leaves nothing: a peer's mapping keeps the memory while it lasts, the handle is refused once the
// owner is gone (reaped or not), and no file is left anywhere.
TEST_F(MockHipSegment, ASegmentEndsWithItsLastProcessHoweverThatEnds) {
  (void)job();
  int toParent[2];
  int toChild[2];
  ASSERT_EQ(::pipe(toParent), 0);
  ASSERT_EQ(::pipe(toChild), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    void* leaked = nullptr;
    hipIpcMemHandle_t handle{};
    if (hipMalloc(&leaked, 4096) != hipSuccess ||
        hipIpcGetMemHandle(&handle, leaked) != hipSuccess) {
      ::_exit(1);
    }
    static_cast<unsigned char*>(leaked)[7] = 0x5a;
    (void)::write(toParent[1], &handle, sizeof handle);
    char wait = 0;
    (void)::read(toChild[0], &wait, 1);  // until SIGKILLed
    ::_exit(0);
  }
  ::close(toParent[1]);
  ::close(toChild[0]);
  hipIpcMemHandle_t handle{};
  ASSERT_EQ(::read(toParent[0], &handle, sizeof handle), static_cast<ssize_t>(sizeof handle));
  const std::string name = segmentName(*decodeHandle(handle));
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, 0), hipSuccess) << lastErrorDetail();
  EXPECT_FALSE(devShmHas(name));

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  // Dead but not reaped yet (a zombie): its memory is released already, the handle refused.
  char eof = 0;
  EXPECT_EQ(::read(toParent[0], &eof, 1), 0) << "the child's end closes when it dies";
  void* again = nullptr;
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(hipIpcOpenMemHandle(&again, handle, 0), hipErrorInvalidHandle);
  EXPECT_TRUE(test_support::contains(lastErrorDetail(), "is gone")) << lastErrorDetail();
  EXPECT_EQ(static_cast<unsigned char*>(mapped)[7], 0x5a) << "a peer's mapping keeps the memory";
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_EQ(hipIpcOpenMemHandle(&again, handle, 0), hipErrorInvalidHandle);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_FALSE(segmentExists(name)) << "the last mapping is gone: so is the segment";
  EXPECT_FALSE(devShmHas(name));
  ::close(toParent[0]);
  ::close(toChild[1]);
}

// The sweep of the /dev/shm files builds before memfd segments left: it removes only what it can
// prove is its own job's and dead: a file of another job (another run, user or pid namespace
// sharing /dev/shm, where the pid means nothing here) or one this runtime did not create (another
// mode) stays, even when its pid is not alive here, and so does one of a live process.
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
  EXPECT_TRUE(devShmHas(foreign)) << "another job's segment was removed";
  EXPECT_TRUE(devShmHas(otherMode)) << "a segment the runtime did not create was removed";
  EXPECT_TRUE(devShmHas(livePid)) << "a live process's segment was removed";
  EXPECT_FALSE(devShmHas(ours)) << "this job's segment of a dead process is swept";
  // Swept as its own job's by a process of the foreign job.
  sweepStaleSegments(foreignJob);
  EXPECT_FALSE(devShmHas(foreign));
  for (const std::string& name : {foreign, otherMode, livePid, ours}) ::shm_unlink(name.c_str());
}

// The placement cursor: one mapping after another from the base, a hole after each, an address
// already taken skipped, and without a cursor the kernel's choice.
TEST_F(MockHipSegment, MappingsGoOneAfterAnotherFromTheCursorAndSkipATakenAddress) {
  const std::uint64_t base = detail::placementBase(11);
  EXPECT_EQ(base % (std::uint64_t{64} << 20), 0u);
  const std::string name = "/peerconf-placement-test-" + std::to_string(::getpid());
  const detail::Mapped created = detail::createSegment(name, 4096);
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

// createSegment makes a 0600 memfd and no file; openSegment maps another process's segment only
// while that process holds it, only if it is a 0600 segment of this user of exactly the size
// asked, and says which step refused.
TEST(MockHipSegmentFiles, CreateMakesA0600MemfdAndOpenChecksOwnerModeAndSize) {
  const int self = static_cast<int>(::getpid());
  const std::string name = segmentName(job(), self, 0, 0x5e6e5e6e5e6eull);
  struct Unlink {
    std::string name;
    ~Unlink() { ::shm_unlink(name.c_str()); }
  } cleanup{name};
  // A file under the name is never what an open finds.
  ASSERT_TRUE(plant(name, "a file"));
  const detail::Mapped before = detail::openSegment(self, name, 4096);
  EXPECT_EQ(before.base, nullptr);
  EXPECT_STREQ(before.step, "find");
  EXPECT_EQ(before.error, ENOENT);

  const detail::Mapped created = detail::createSegment(name, 4096);
  ASSERT_NE(created.base, nullptr) << created.step << " errno " << created.error;
  EXPECT_GE(created.fd, 0);
  static_cast<char*>(created.base)[10] = 'x';
  EXPECT_TRUE(devShmHas(name)) << "creating a segment touched the file under its name";

  const detail::Mapped opened = detail::openSegment(self, name, 4096);
  ASSERT_NE(opened.base, nullptr) << opened.step;
  EXPECT_NE(opened.base, created.base);
  EXPECT_EQ(static_cast<char*>(opened.base)[10], 'x');
  const detail::Mapped wrongSize = detail::openSegment(self, name, 8192);
  EXPECT_EQ(wrongSize.base, nullptr);
  EXPECT_STREQ(wrongSize.step, "size");
  EXPECT_EQ(wrongSize.error, EINVAL);
  ASSERT_EQ(::fchmod(created.fd, 0644), 0);
  const detail::Mapped wrongMode = detail::openSegment(self, name, 4096);
  EXPECT_EQ(wrongMode.base, nullptr);
  EXPECT_STREQ(wrongMode.step, "owner");
  EXPECT_EQ(wrongMode.error, EPERM);
  if (::geteuid() == 0) {  // only root can give a segment away
    ASSERT_EQ(::fchmod(created.fd, 0600), 0);
    ASSERT_EQ(::fchown(created.fd, 65534, 65534), 0);
    const detail::Mapped givenAway = detail::openSegment(self, name, 4096);
    EXPECT_EQ(givenAway.base, nullptr);
    EXPECT_STREQ(givenAway.step, "owner");
  }

  detail::unmapSegment(opened.base, 4096);
  detail::unmapSegment(created.base, 4096);
  detail::closeSegment(created.fd);
  const detail::Mapped gone = detail::openSegment(self, name, 4096);
  EXPECT_EQ(gone.base, nullptr);
  EXPECT_STREQ(gone.step, "find");
  EXPECT_EQ(gone.error, ENOENT);
  // A process that has ended holds nothing.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const detail::Mapped dead = detail::openSegment(static_cast<int>(child), name, 4096);
  EXPECT_EQ(dead.base, nullptr);
  EXPECT_STREQ(dead.step, "gone");
  EXPECT_TRUE(devShmHas(name)) << "the file under the name is someone else's: still there";
}

}  // namespace
}  // namespace peerconf::mock_hip
