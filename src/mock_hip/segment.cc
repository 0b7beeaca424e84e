// POSIX shm segments: their random name nonces, create (exclusive, 0600), open at a new address,
// unlink, and sweep the segments of this job's dead processes.
#include "mock_hip/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <random>

#include "mock_hip/control.h"

namespace peerconf::mock_hip {
namespace detail {

namespace {

Mapped failed(const char* step, int error) {
  Mapped out;
  out.error = error;
  out.step = step;
  return out;
}

std::atomic<NonceSource> nonceSource{nullptr};

}  // namespace

std::uint64_t randomNonce() {
  if (const NonceSource source = nonceSource.load(std::memory_order_acquire)) {
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

void setNonceSourceForTesting(NonceSource source) noexcept {
  nonceSource.store(source, std::memory_order_release);
}

namespace {

// The window: 0x7e90'0000'0000 and 64 GiB of steps of 64 MiB from there, each run's mappings after
// its step (a run maps far less than the 64 GiB left above the last step). The kernel's own
// mappings come down from about 0x7f00'0000'0000 or higher; ASan's application memory reaches down
// to 0x1000'7fff'8000 and TSan's high range down to 0x7e80'0000'0000.
constexpr std::uint64_t kWindow = 0x7e90'0000'0000ULL;
constexpr std::uint64_t kStep = std::uint64_t{64} << 20;
constexpr std::uint64_t kSteps = 1024;
constexpr std::uint64_t kHole = std::uint64_t{64} << 10;
std::atomic<std::uint64_t> placement{0};

}  // namespace

void placeMappingsAt(std::uint64_t base) noexcept { placement.store(base); }

std::uint64_t mixSeed(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t placementBase(std::uint64_t seed) noexcept {
  return kWindow + (mixSeed(seed + 0x9E3779B97F4A7C15ULL) % kSteps) * kStep;
}

Mapped mapSegment(int fd, std::size_t size) {
  void* base = MAP_FAILED;
  // At the cursor: a few tries past addresses taken (a mapping left by an abandoned rank), then the
  // kernel's choice.
  const std::uint64_t span = (size + kHole - 1) / kHole * kHole + kHole;
  for (int attempt = 0; attempt < 4 && base == MAP_FAILED; ++attempt) {
    std::uint64_t at = placement.load();
    if (at == 0) break;
    while (!placement.compare_exchange_weak(at, at + span)) {
      if (at == 0) break;
    }
    if (at == 0) break;
    base = ::mmap(reinterpret_cast<void*>(static_cast<std::uintptr_t>(at)), size,
                  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
  }
  if (base == MAP_FAILED) base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return failed("mmap", errno);
  Mapped out;
  out.base = base;
  return out;
}

Mapped createSegment(const std::string& name, std::size_t size, bool keepFd) {
  // shm_open sets FD_CLOEXEC: a kept descriptor does not leak into exec'd programs.
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return failed("shm_open", errno);
  Mapped out;
  // 0600 whatever the umask: openSegment maps only segments of this user with exactly this mode.
  if (::fchmod(fd, 0600) != 0) {
    out = failed("fchmod", errno);
  } else if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    out = failed("ftruncate", errno);
  } else {
    out = mapSegment(fd, size);
  }
  if (out.base != nullptr && keepFd) {
    out.fd = fd;
  } else {
    ::close(fd);
  }
  if (out.base == nullptr) ::shm_unlink(name.c_str());
  return out;
}

Mapped openSegment(const std::string& name, std::size_t size) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return failed("shm_open", errno);
  Mapped out;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    out = failed("fstat", errno);
  } else if (st.st_uid != ::geteuid() || (st.st_mode & 0777) != 0600) {
    // Only a segment createSegment made (this user, 0600) is mapped: a name re-created by someone
    // else after the owner freed it must not be taken for the allocation a stale handle names.
    out = failed("owner", EPERM);
  } else if (static_cast<std::size_t>(st.st_size) != size) {
    out = failed("size", EINVAL);
  } else {
    out = mapSegment(fd, size);
  }
  ::close(fd);
  return out;
}

void unmapSegment(void* base, std::size_t size) noexcept { ::munmap(base, size); }

void closeSegment(int fd) noexcept {
  if (fd >= 0) ::close(fd);
}

void unlinkSegment(const std::string& name) noexcept { ::shm_unlink(name.c_str()); }

std::optional<SegmentId> parseSegmentName(std::string_view fileName) {
  constexpr std::string_view kPrefix = "peerconf.";
  if (!fileName.starts_with(kPrefix)) return std::nullopt;
  fileName.remove_prefix(kPrefix.size());
  SegmentId id{};
  const char* p = fileName.data();
  const char* end = p + fileName.size();
  auto field = [&](auto& value, int base) {
    auto [next, ec] = std::from_chars(p, end, value, base);
    if (ec != std::errc() || next == p) return false;
    p = next;
    return true;
  };
  if (!field(id.job, 16) || p == end || *p++ != '.') return std::nullopt;
  if (!field(id.pid, 10) || p == end || *p++ != '.') return std::nullopt;
  if (!field(id.generation, 10) || p == end || *p++ != '.') return std::nullopt;
  if (!field(id.nonce, 16) || p != end || id.pid <= 0) return std::nullopt;
  return id;
}

}  // namespace detail

std::size_t sweepStaleSegments(std::uint64_t job) {
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return 0;
  const int self = static_cast<int>(::getpid());
  std::size_t removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const auto id = detail::parseSegmentName(entry->d_name);
    // Only this job's segments: a pid in another job's name may be another pid namespace's.
    if (!id || id->job != job || id->pid == self) continue;
    // Only what createSegment makes: a regular file of this user, mode 0600. (In the sticky
    // /dev/shm nobody else can replace such a file between this check and the unlink.)
    struct stat st {};
    if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 0777) != 0600) {
      continue;
    }
    // A zombie still counts as alive; EPERM means alive under another user.
    if (::kill(id->pid, 0) == 0 || errno != ESRCH) continue;
    if (::shm_unlink((std::string("/") + entry->d_name).c_str()) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

std::size_t sweepStaleSegments() { return sweepStaleSegments(job()); }

}  // namespace peerconf::mock_hip
