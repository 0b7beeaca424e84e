// Interrupts (interrupt.h): the handlers, the descriptor that wakes pollers, and what a second
// signal ends at once. Everything the handler touches is async-signal-safe: lock-free atomics,
// fixed tables, and system calls only.
#include "launch/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace peerconf::harness::launch {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kMaxChildren = 256;
constexpr int kMaxPaths = 8;
constexpr std::size_t kPathBytes = 4096;

std::atomic<int> firstSignal{0};
std::atomic<int> wakeFd{-1};
std::atomic<bool> announce{false};  // the handlers are this process's (not a child's copy)
std::atomic<bool> installed{false};

// A held child: its pid (or -pgid) in the low 32 bits, the signal to send it in the high ones; 0
// for a free slot.
std::atomic<std::uint64_t> children[kMaxChildren];

std::uint64_t childSlot(pid_t pidOrGroup, int signal) noexcept {
  return static_cast<std::uint32_t>(pidOrGroup) | static_cast<std::uint64_t>(signal) << 32;
}
pid_t pidOf(std::uint64_t slot) noexcept {
  return static_cast<pid_t>(static_cast<std::uint32_t>(slot));
}
int signalOf(std::uint64_t slot) noexcept { return static_cast<int>(slot >> 32); }

// A path slot: 0 free, 1 being written, 2 held (the handler reads only held ones).
std::atomic<int> pathState[kMaxPaths];
char paths[kMaxPaths][kPathBytes];

static_assert(std::atomic<int>::is_always_lock_free &&
              std::atomic<std::uint64_t>::is_always_lock_free);

void say(const char* text) noexcept {
  const std::size_t n = std::strlen(text);
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, text, n);
}

const char* firstMessage(int sig) noexcept {
  switch (sig) {
    case SIGINT:
      return "\npeerconf: SIGINT: ending the run (Ctrl-C again to end it at once)\n";
    case SIGTERM:
      return "peerconf: SIGTERM: ending the run (a second signal ends it at once)\n";
    default:
      return "peerconf: SIGHUP: ending the run (a second signal ends it at once)\n";
  }
}

// getdents64's record (the kernel's struct linux_dirent64).
struct DirEntry64 {
  std::uint64_t ino;
  std::int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Removes `name` under `dirFd` and, when it is a directory, everything below it, with system calls
// only (the handler may not call opendir or malloc).
void removeNow(int dirFd, const char* name, int depth) noexcept {
  if (::unlinkat(dirFd, name, 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  const int fd = ::openat(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (depth < 8) {
    // Entries removed while reading may make the listing skip some: read again until a pass
    // finds nothing left to remove.
    for (bool removed = true; removed;) {
      removed = false;
      ::lseek(fd, 0, SEEK_SET);
      alignas(8) char buffer[4096];
      for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (n <= 0) break;
        for (long at = 0; at < n;) {
          const auto* entry = reinterpret_cast<const DirEntry64*>(buffer + at);
          at += entry->reclen;
          if (std::strcmp(entry->name, ".") == 0 || std::strcmp(entry->name, "..") == 0) continue;
          removeNow(fd, entry->name, depth + 1);
          removed = true;
        }
      }
    }
  }
  ::close(fd);
  ::unlinkat(dirFd, name, AT_REMOVEDIR);
}

void onSignal(int sig) {
  const int savedErrno = errno;
  int expected = 0;
  if (firstSignal.compare_exchange_strong(expected, sig)) {
    if (announce.load()) say(firstMessage(sig));
    if (const int fd = wakeFd.load(); fd >= 0) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t ignored = ::write(fd, &one, sizeof one);
    }
    errno = savedErrno;
    return;
  }
  // A second signal: at once.
  for (auto& child : children) {
    if (const std::uint64_t held = child.load(); held != 0) {
      ::kill(pidOf(held), signalOf(held));
    }
  }
  for (int i = 0; i < kMaxPaths; ++i) {
    if (pathState[i].load() == 2) removeNow(AT_FDCWD, paths[i], 0);
  }
  if (announce.load()) say("peerconf: ended at once\n");
  ::_exit(interruptedExitCode(expected));
}

}  // namespace

void catchInterrupts() {
  if (installed.exchange(true)) return;
  announce.store(true);
  wakeFd.store(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  struct sigaction action {};
  action.sa_handler = &onSignal;
  sigemptyset(&action.sa_mask);
  for (const int sig : kSignals) sigaddset(&action.sa_mask, sig);  // one handler at a time
  action.sa_flags = SA_RESTART;
  for (const int sig : kSignals) ::sigaction(sig, &action, nullptr);
}

int interruptSignal() noexcept { return firstSignal.load(); }

std::string signalName(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal);
  }
}

int interruptFd() noexcept { return wakeFd.load(); }

void throwIfInterrupted() {
  if (const int sig = interruptSignal(); sig != 0) throw Interrupted{sig};
}

void holdChild(pid_t pidOrGroup, int signal) noexcept {
  if (pidOrGroup == 0 || pidOrGroup == -1) return;
  for (auto& child : children) {
    std::uint64_t free = 0;
    if (child.compare_exchange_strong(free, childSlot(pidOrGroup, signal))) return;
  }
}

void releaseChild(pid_t pidOrGroup) noexcept {
  for (auto& child : children) {
    std::uint64_t held = child.load();
    if (held != 0 && pidOf(held) == pidOrGroup && child.compare_exchange_strong(held, 0)) return;
  }
}

void holdPath(const std::string& path) noexcept {
  if (path.empty() || path.size() >= kPathBytes) return;
  for (int i = 0; i < kMaxPaths; ++i) {
    int free = 0;
    if (!pathState[i].compare_exchange_strong(free, 1)) continue;
    std::memcpy(paths[i], path.c_str(), path.size() + 1);
    pathState[i].store(2);
    return;
  }
}

void releasePath(const std::string& path) noexcept {
  for (int i = 0; i < kMaxPaths; ++i) {
    if (pathState[i].load() == 2 && path == paths[i]) {
      pathState[i].store(0);
      return;
    }
  }
}

void leaveInterruptsToParent(pid_t parent) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (const int sig : kSignals) ::sigaction(sig, &ignore, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // the parent died before the line above
  announce.store(false);
  for (auto& child : children) child.store(0);
  for (auto& state : pathState) state.store(0);
  if (const int fd = wakeFd.exchange(-1); fd >= 0) ::close(fd);
  firstSignal.store(0);
}

}  // namespace peerconf::harness::launch
