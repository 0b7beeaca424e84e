// Interrupts (harness/launch/interrupt.h): the first signal asks (its number, the descriptor that
// wakes pollers, Interrupted thrown), a second ends the process at once with 128 + the first
// signal, killing the children and removing the paths held then and nothing released; a forked
// worker leaves interrupts to its parent and dies with it. Each case runs in a process of its own
// (forked), so that this test's own signal handling stays as it was.
#include "launch/interrupt.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace peerconf::harness::launch {
namespace {

namespace fs = std::filesystem;

// Runs `body` in a forked child; its exit status (or -signal when a signal ended it).
template <typename Body>
int inChild(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1000;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

// A process that lives until it is killed, holding the write end of `alive` (so that its death,
// and only that, ends the reader's wait with EOF); its pid.
pid_t sleeper(int alive[2]) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(alive[0]);
    for (;;) ::pause();
  }
  return pid;
}

// EOF on `fd` once every writer is gone; false if data came instead.
bool writersGone(int fd) {
  char byte = 0;
  return ::read(fd, &byte, 1) == 0;
}

class Interrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("peerconf_interrupt_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "tree" / "deeper");
    std::ofstream(dir_ / "tree" / "deeper" / "file") << "x";
    std::ofstream(dir_ / "tree" / "file") << "x";
    std::ofstream(dir_ / "report.partial") << "half";
    std::ofstream(dir_ / "kept") << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Interrupt, TheFirstSignalAsksAndWakesPollers) {
  const int code = inChild([] {
    catchInterrupts();
    if (interruptSignal() != 0 || interrupted()) ::_exit(10);
    if (interruptFd() < 0 || readable(interruptFd())) ::_exit(11);
    try {
      throwIfInterrupted();
    } catch (const Interrupted&) {
      ::_exit(12);
    }
    ::raise(SIGTERM);  // handled: the process goes on
    if (interruptSignal() != SIGTERM || !interrupted()) ::_exit(13);
    if (!readable(interruptFd())) ::_exit(14);
    if (!readable(interruptFd())) ::_exit(15);  // and stays readable
    try {
      throwIfInterrupted();
      ::_exit(16);
    } catch (const Interrupted& stop) {
      if (stop.signal != SIGTERM) ::_exit(17);
    }
    ::_exit(0);
  });
  EXPECT_EQ(code, 0) << "10: signalled before any signal, 11: descriptor, 12: thrown early, 13: "
                        "not recorded, 14-15: descriptor not readable, 16-17: not thrown";
}

TEST_F(Interrupt, ASecondSignalKillsTheHeldChildrenRemovesTheHeldPathsAndExits) {
  int alive[2];
  ASSERT_EQ(::pipe(alive), 0);
  const fs::path tree = dir_ / "tree";
  const fs::path partial = dir_ / "report.partial";
  const int code = inChild([&] {
    catchInterrupts();
    holdChild(sleeper(alive), SIGKILL);
    ::close(alive[1]);
    holdPath(tree.string());
    holdPath(partial.string());
    ::raise(SIGINT);
    if (interruptSignal() != SIGINT) ::_exit(10);
    ::raise(SIGHUP);  // a second one: does not return
    ::_exit(11);
  });
  ::close(alive[1]);
  EXPECT_EQ(code, 128 + SIGINT) << "the exit status is the first signal's";
  EXPECT_TRUE(writersGone(alive[0])) << "the held child is still alive";
  ::close(alive[0]);
  EXPECT_FALSE(fs::exists(tree)) << "a held directory is left";
  EXPECT_FALSE(fs::exists(partial)) << "a held file is left";
  EXPECT_TRUE(fs::exists(dir_ / "kept")) << "a path never held was removed";
}

// The control: what was released before the second signal is neither killed nor removed.
TEST_F(Interrupt, ReleasedChildrenAndPathsAreLeftAlone) {
  int alive[2];
  ASSERT_EQ(::pipe(alive), 0);
  const fs::path tree = dir_ / "tree";
  int reported[2];
  ASSERT_EQ(::pipe(reported), 0);
  const int code = inChild([&] {
    catchInterrupts();
    const pid_t child = sleeper(alive);
    ::close(alive[1]);
    (void)!::write(reported[1], &child, sizeof child);
    holdChild(child, SIGKILL);
    holdPath(tree.string());
    releaseChild(child);
    releasePath(tree.string());
    ::raise(SIGINT);
    ::raise(SIGINT);
    ::_exit(11);
  });
  ::close(alive[1]);
  ::close(reported[1]);
  pid_t child = -1;
  ASSERT_EQ(::read(reported[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(reported[0]);
  EXPECT_EQ(code, 128 + SIGINT);
  EXPECT_TRUE(fs::exists(tree)) << "a released path was removed";
  EXPECT_EQ(::kill(child, 0), 0) << "a released child was killed";
  ::kill(child, SIGKILL);  // orphaned now: init reaps it
  EXPECT_TRUE(writersGone(alive[0]));
  ::close(alive[0]);
}

// A forked worker: interrupts are its parent's (it ignores them) and it dies with its parent.
TEST_F(Interrupt, AWorkerLeavesInterruptsToItsParentAndDiesWithIt) {
  int alive[2];
  ASSERT_EQ(::pipe(alive), 0);
  int heard[2];
  ASSERT_EQ(::pipe(heard), 0);
  const int code = inChild([&] {
    catchInterrupts();
    const pid_t parent = ::getpid();
    const pid_t worker = ::fork();
    if (worker == 0) {
      ::close(alive[0]);
      leaveInterruptsToParent(parent);
      ::raise(SIGINT);  // ignored
      ::raise(SIGTERM);
      const char state = interruptSignal() == 0 && interruptFd() < 0 ? 'i' : 'x';
      (void)!::write(heard[1], &state, 1);
      for (;;) ::pause();  // until the parent's death kills it
    }
    ::close(alive[1]);
    char state = 0;
    if (::read(heard[0], &state, 1) != 1 || state != 'i') ::_exit(10);
    ::_exit(0);  // the worker is not waited for: it must die with this process
  });
  ::close(alive[1]);
  ::close(heard[1]);
  ::close(heard[0]);
  EXPECT_EQ(code, 0) << "10: the worker took the interrupts as its own";
  EXPECT_TRUE(writersGone(alive[0])) << "the worker outlived its parent";
  ::close(alive[0]);
}

TEST(InterruptNames, SignalNames) {
  EXPECT_EQ(signalName(SIGINT), "SIGINT");
  EXPECT_EQ(signalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(signalName(SIGHUP), "SIGHUP");
  EXPECT_EQ(signalName(SIGUSR1), "signal " + std::to_string(SIGUSR1));
  EXPECT_EQ(interruptedExitCode(SIGINT), 130);
  EXPECT_EQ(interruptedExitCode(SIGTERM), 143);
}

}  // namespace
}  // namespace peerconf::harness::launch
