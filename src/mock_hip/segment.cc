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

Mapped mapSegment(int fd, std::size_t size) {
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
