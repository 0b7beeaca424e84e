// mpirun as a child in a process group of its own, the stop file that relays an interrupt to its
// ranks, and the ranks' side of it (mpirun_child.h).
#include "mpirun/mpirun_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>

#include "launch/interrupt.h"
#include "mpirun/run_dir.h"

namespace peerconf::harness::mpirun {

namespace {

constexpr const char* kStopFileVariable = "PEERCONF_STOP_FILE";
// Without pidfd_open (Linux before 5.3), how often the wait looks at mpirun.
constexpr int kPollMs = 100;

std::string newStopFilePath() {
  const char* tmp = std::getenv("TMPDIR");
  std::random_device random;
  char name[64];
  std::snprintf(name, sizeof name, "/peerconf-stop.%d.%08x%08x", static_cast<int>(::getpid()),
                random(), random());
  return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + name;
}

// A descriptor that polls readable once `pid` has ended, or -1 (then the wait polls on a timer).
int openPidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

int runMpirunChild(const std::vector<std::string>& args, std::ostream& err) {
  const std::string stopFile = newStopFilePath();
  ::setenv(kStopFileVariable, stopFile.c_str(), 1);  // for mpirun, which passes it to its ranks
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  err.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    err << "peerconf: fork: " << std::strerror(errno) << "\n";
    return 2;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    // mpirun ends its ranks on SIGTERM: so does it when this process dies, SIGKILLed or not.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    // Not in the terminal's foreground group any more: it must never read the terminal.
    if (const int in = ::open("/dev/null", O_RDONLY); in >= 0) ::dup2(in, STDIN_FILENO);
    ::execvp("mpirun", argv.data());
    constexpr char kNoMpirun[] = "peerconf: could not start mpirun (is openmpi-bin installed?)\n";
    [[maybe_unused]] const ssize_t ignored =
        ::write(STDERR_FILENO, kNoMpirun, sizeof kNoMpirun - 1);
    ::_exit(127);
  }
  // Not held for a second interrupt (interrupt.h): PR_SET_PDEATHSIG above sends mpirun SIGTERM
  // when this process exits, and a second SIGTERM would make mpirun exit at once, leaving its
  // session directory and its ranks' shared-memory files behind.
  ::setpgid(pid, pid);
  const int pidfd = openPidfd(pid);
  bool relayed = false;
  int status = 0;
  for (;;) {
    if (const pid_t done = ::waitpid(pid, &status, WNOHANG); done == pid) break;
    if (!relayed && launch::interrupted()) {
      relayed = true;
      // Written in place (held first, so that a second interrupt removes it): a rank that reads
      // it empty reads no stop and looks again after its next round.
      launch::holdPath(stopFile);
      const int fd = ::open(stopFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd >= 0) {
        writeAll(fd, std::to_string(launch::interruptSignal()) + "\n");
        ::close(fd);
      }
      err << "peerconf: the ranks stop after the round under way; rank 0 then reports what ran\n";
    }
    // Until mpirun ends or, before the stop is relayed, an interrupt comes (its descriptor stays
    // readable once it has come: not polled after that).
    pollfd p[2] = {{pidfd, POLLIN, 0}, {relayed ? -1 : launch::interruptFd(), POLLIN, 0}};
    ::poll(p, 2, pidfd >= 0 ? -1 : kPollMs);
  }
  if (pidfd >= 0) ::close(pidfd);
  if (relayed) {
    ::unlink(stopFile.c_str());
    launch::releasePath(stopFile);
    return launch::interruptedExitCode(launch::interruptSignal());
  }
  if (WIFSIGNALED(status)) return launch::interruptedExitCode(WTERMSIG(status));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  return code == 127 ? 2 : code;
}

int jobInterrupt() {
  static const char* const path = std::getenv(kStopFileVariable);
  if (path == nullptr || *path == '\0') return 0;
  const auto text = readFile(path);
  if (!text) return 0;
  const int signal = std::atoi(text->c_str());
  return signal > 0 ? signal : 0;
}

void removeStopFile() {
  if (const char* path = std::getenv(kStopFileVariable); path != nullptr && *path != '\0') {
    ::unlink(path);
  }
}

}  // namespace peerconf::harness::mpirun
