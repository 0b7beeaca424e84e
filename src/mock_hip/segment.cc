// Anonymous shared-memory segments (memfd): their random name nonces, create (0600), open another
// process's through /proc at a new address, and sweep the /dev/shm names older builds left.
#include "mock_hip/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
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

namespace {

// Linux 6.3's flag (not in older headers): the segment can never be made executable, and the
// kernel does not warn about a memfd created without an exec policy. Older kernels refuse it
// (EINVAL): then without.
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

int createMemfd(const char* name) {
  int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_NOEXEC_SEAL);
  if (fd < 0 && errno == EINVAL) fd = ::memfd_create(name, MFD_CLOEXEC);
  return fd;
}

// Every live allocation holds a descriptor: at the soft limit, raise it to the hard one once.
int createMemfdRaisingTheLimit(const char* name) {
  int fd = createMemfd(name);
  if (fd >= 0 || errno != EMFILE) return fd;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) {
    errno = EMFILE;
    return -1;
  }
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    errno = EMFILE;
    return -1;
  }
  return createMemfd(name);
}

// A segment's name as memfd_create takes it: without the leading '/' of segmentName().
std::string memfdName(const std::string& name) {
  return name.starts_with('/') ? name.substr(1) : name;
}

// What readlink shows for a descriptor of the memfd named `name`: "/memfd:<name> (deleted)".
bool isMemfdLink(std::string_view target, const std::string& name) {
  constexpr std::string_view kPrefix = "/memfd:";
  constexpr std::string_view kDeleted = " (deleted)";
  if (!target.starts_with(kPrefix)) return false;
  target.remove_prefix(kPrefix.size());
  if (target.ends_with(kDeleted)) target.remove_suffix(kDeleted.size());
  return target == name;
}

std::string linkTarget(int dirFd, const char* entry) {
  char target[512];
  const ssize_t n = ::readlinkat(dirFd, entry, target, sizeof target);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof target) return {};
  return std::string(target, static_cast<std::size_t>(n));
}

// Whether process `pid` has ended: gone, or a zombie (whose descriptors and memory are released
// already; its parent has not reaped it yet).
bool processEnded(int pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH;
  char stat[512];
  const ssize_t n = ::read(fd, stat, sizeof stat - 1);
  ::close(fd);
  if (n <= 0) return true;
  stat[n] = '\0';
  const char* close = std::strrchr(stat, ')');  // the name, in parentheses, may hold anything
  return close != nullptr && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

// Opens (O_RDWR) the descriptor of process `pid` whose target is the memfd `name`; -1 with the
// step and errno of what failed ("gone" when the process has ended).
int openPeerDescriptor(int pid, const std::string& name, const char*& step, int& error) {
  const std::string dirPath = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(dirPath.c_str());
  if (dir == nullptr) {
    // A zombie's descriptors are unreadable to other users than root (EACCES): ended, not refused.
    error = errno;
    step = error == ENOENT || error == ESRCH || processEnded(pid) ? "gone" : "open";
    if (std::strcmp(step, "gone") == 0) error = ESRCH;
    return -1;
  }
  int fd = -1;
  step = "find";
  error = ENOENT;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    if (!isMemfdLink(linkTarget(::dirfd(dir), entry->d_name), name)) continue;
    fd = ::openat(::dirfd(dir), entry->d_name, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      // Closed between the readlink and the open: the allocation was freed meanwhile.
      step = errno == ENOENT ? "find" : "open";
      error = errno;
      break;
    }
    // The descriptor number may have been closed and reused between the readlink and the open:
    // what was opened must still be that memfd.
    if (!isMemfdLink(linkTarget(AT_FDCWD, ("/proc/self/fd/" + std::to_string(fd)).c_str()), name)) {
      ::close(fd);
      fd = -1;
      step = "find";
      error = ENOENT;
    }
    break;
  }
  ::closedir(dir);
  if (fd < 0 && std::strcmp(step, "find") == 0 && processEnded(pid)) {
    step = "gone";
    error = ESRCH;
  }
  return fd;
}

}  // namespace

Mapped createSegment(const std::string& name, std::size_t size, std::uint64_t at) {
  const int fd = createMemfdRaisingTheLimit(memfdName(name).c_str());
  if (fd < 0) return failed("memfd_create", errno);
  Mapped out;
  // 0600 whatever the umask: openSegment maps only segments of this user with exactly this mode.
  if (::fchmod(fd, 0600) != 0) {
    out = failed("fchmod", errno);
  } else if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    out = failed("ftruncate", errno);
  } else if (at != 0) {
    // Over the caller's own reservation (reservePlace): MAP_FIXED replaces it whole.
    void* base = ::mmap(reinterpret_cast<void*>(static_cast<std::uintptr_t>(at)), size,
                        PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    out = base == MAP_FAILED ? failed("mmap", errno) : Mapped{base, -1, 0, ""};
  } else {
    out = mapSegment(fd, size);
  }
  if (out.base != nullptr) {
    out.fd = fd;
  } else {
    ::close(fd);
  }
  return out;
}

Mapped openSegment(int pid, const std::string& name, std::size_t size) {
  const char* step = "";
  int error = 0;
  const int fd = openPeerDescriptor(pid, memfdName(name), step, error);
  if (fd < 0) return failed(step, error);
  Mapped out;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    out = failed("fstat", errno);
  } else if (st.st_uid != ::geteuid() || (st.st_mode & 0777) != 0600) {
    // Only a segment createSegment made (this user, 0600) is mapped: a memfd of that name that
    // the owner process made otherwise (or gave away) is not taken for the allocation.
    out = failed("owner", EPERM);
  } else if (static_cast<std::size_t>(st.st_size) != size) {
    out = failed("size", EINVAL);
  } else {
    out = mapSegment(fd, size);
  }
  ::close(fd);
  return out;
}

bool reservePlace(std::uint64_t base, std::size_t size) noexcept {
  void* reserved =
      ::mmap(reinterpret_cast<void*>(static_cast<std::uintptr_t>(base)), size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return reserved != MAP_FAILED;
}

std::string segmentMappedAt(int pid, std::uint64_t address) {
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  std::FILE* maps = std::fopen(path.c_str(), "re");
  if (maps == nullptr) return {};
  // "start-end perms offset dev inode   path": the path (a memfd's "/memfd:<name> (deleted)") is
  // the rest of the line after the inode.
  constexpr std::string_view kPrefix = "/memfd:";
  constexpr std::string_view kDeleted = " (deleted)";
  std::string name;
  char line[1024];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long long start = 0;
    int pathAt = 0;
    if (std::sscanf(line, "%llx-%*llx %*s %*llx %*s %*llu %n", &start, &pathAt) < 1 ||
        start != address || pathAt <= 0) {
      continue;
    }
    std::string_view rest(line + pathAt);
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
    if (rest.ends_with(kDeleted)) rest.remove_suffix(kDeleted.size());
    if (rest.starts_with(kPrefix)) name = std::string(rest.substr(kPrefix.size()));
    break;
  }
  std::fclose(maps);
  return name;
}

void unmapSegment(void* base, std::size_t size) noexcept { ::munmap(base, size); }

void closeSegment(int fd) noexcept {
  if (fd >= 0) ::close(fd);
}

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

// Segments are memfds now and never have a file: this removes what builds before them left.
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
