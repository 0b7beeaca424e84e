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

#include "launch/interrupt.h"
#include "mpirun/run_dir.h"

namespace peerconf::harness::mpirun {

namespace {

constexpr const char* kStopFileVariable = "PEERCONF_STOP_FILE";
// Without pidfd_open (Linux before 5.3), how often the wait looks at mpirun.
constexpr int kPollMs = 100;

// A directory of its own under $TMPDIR (mode 0700), or "" when it cannot be made.
std::string newRunDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/peerconf-mpirun.XXXXXX";
  return ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
}

// A descriptor that polls readable once `pid` has ended, or -1 (then the wait polls on a timer).
int openPidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

namespace {

// The keeper, in its own process group: runs mpirun and waits for it; its exit status is mpirun's
// (a signal that ended mpirun ends the keeper too). If the process that started it dies (its
// PR_SET_PDEATHSIG: SIGTERM), it sends mpirun SIGTERM once (mpirun ends its ranks and removes its
// files), waits for it, then removes `cleanup`, which nobody else can remove any more. SIGTERM and
// SIGCHLD are blocked and taken by sigwaitinfo, so that none is missed between two looks.
[[noreturn]] void keep(char** argv, const std::string& log, const std::string& cleanup,
                       pid_t starter) {
  ::setpgid(0, 0);
  struct sigaction ignore {};
  sigemptyset(&ignore.sa_mask);
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, nullptr);
  ::sigaction(SIGHUP, &ignore, nullptr);
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGCHLD);
  sigset_t before;
  ::sigprocmask(SIG_BLOCK, &waited, &before);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  bool starterGone = ::getppid() != starter;
  // Not in the terminal's foreground group: it must never read the terminal.
  if (const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC); in >= 0) ::dup2(in, STDIN_FILENO);
  if (!log.empty()) {
    if (const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
  }
  const pid_t keeper = ::getpid();
  const pid_t mpirun = ::fork();
  if (mpirun == 0) {
    struct sigaction plain {};
    sigemptyset(&plain.sa_mask);
    plain.sa_handler = SIG_DFL;
    for (const int sig : {SIGINT, SIGHUP}) ::sigaction(sig, &plain, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the keeper SIGKILLed: mpirun still ends its ranks
    if (::getppid() != keeper) ::_exit(127);
    ::execvp(argv[0], argv);
    constexpr char kNoMpirun[] = "peerconf: could not start mpirun (is openmpi-bin installed?)\n";
    [[maybe_unused]] const ssize_t ignored =
        ::write(STDERR_FILENO, kNoMpirun, sizeof kNoMpirun - 1);
    ::_exit(127);
  }
  int status = 127 << 8;  // fork failed: as if mpirun was not there
  bool told = false;
  while (mpirun > 0) {
    if (::waitpid(mpirun, &status, WNOHANG) == mpirun) break;
    if (starterGone && !told) {
      ::kill(mpirun, SIGTERM);  // once: a second SIGTERM makes mpirun exit without its cleanup
      told = true;
    }
    siginfo_t info{};
    if (::sigwaitinfo(&waited, &info) == SIGTERM) starterGone = true;
  }
  if ((starterGone || ::getppid() != starter) && !cleanup.empty() &&
      std::getenv("PEERCONF_KEEP_RUN_DIR") == nullptr) {
    removeTree(cleanup);
  }
  if (WIFSIGNALED(status)) {
    struct sigaction plain {};
    sigemptyset(&plain.sa_mask);
    plain.sa_handler = SIG_DFL;
    ::sigaction(WTERMSIG(status), &plain, nullptr);
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, WTERMSIG(status));
    ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
    ::kill(keeper, WTERMSIG(status));
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

pid_t startMpirun(const std::vector<std::string>& args, const std::string& log,
                  const std::string& cleanup) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t starter = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) keep(argv.data(), log, cleanup, starter);
  if (pid > 0) ::setpgid(pid, pid);
  return pid;
}

int runMpirunChild(const std::vector<std::string>& args, std::ostream& err) {
  // The run's directory holds the stop file and mpirun's session directory (orte_tmpdir_base,
  // unless the caller chose one). Held for a second interrupt, and removed by mpirun's keeper
  // when this process dies before mpirun has ended (mpirun may make its files again meanwhile).
  const std::string dir = newRunDirectory();
  if (dir.empty()) {
    err << "peerconf: cannot create a run directory: " << std::strerror(errno) << "\n";
    return 2;
  }
  launch::holdPath(dir);
  const std::string stopFile = dir + "/stop";
  ::setenv(kStopFileVariable, stopFile.c_str(), 1);  // for mpirun, which passes it to its ranks
  ::setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), 0);
  err.flush();
  const pid_t pid = startMpirun(args, "", dir);
  if (pid < 0) {
    err << "peerconf: fork: " << std::strerror(errno) << "\n";
    removeTree(dir);
    launch::releasePath(dir);
    return 2;
  }
  const int pidfd = openPidfd(pid);
  bool relayed = false;
  int status = 0;
  for (;;) {
    if (const pid_t done = ::waitpid(pid, &status, WNOHANG); done == pid) break;
    if (!relayed && launch::interrupted()) {
      relayed = true;
      // Written in place (in the held directory): a rank that reads it empty reads no stop and
      // looks again after its next round.
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
  removeTree(dir);
  launch::releasePath(dir);
  if (relayed) return launch::interruptedExitCode(launch::interruptSignal());
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
