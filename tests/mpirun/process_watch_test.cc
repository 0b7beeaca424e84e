// Process watching (process_watch.h) on this process and on children of the test: the state
// letter and parent from /proc, children, liveness, reaping, and how a wait status reads.
#include "mpirun/process_watch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

namespace peerconf::harness {
namespace {

// A child that raises `signal` at once, then (if it goes on) exits with code 3.
pid_t childRaising(int signal) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::raise(signal);
    ::_exit(3);
  }
  return child;
}

TEST(ProcessWatch, ThisProcessIsRunningUnderItsParent) {
  EXPECT_EQ(mpirun::processState(::getpid()), 'R');
  EXPECT_EQ(mpirun::parentOf(::getpid()), ::getppid());
  EXPECT_TRUE(mpirun::alive(::getpid()));
  // No such process: no state, no parent, not alive.
  EXPECT_EQ(mpirun::processState(-5), 0);
  EXPECT_EQ(mpirun::parentOf(-5), -1);
  EXPECT_FALSE(mpirun::alive(0));
  EXPECT_FALSE(mpirun::alive(-5));
}

TEST(ProcessWatch, ASignalIsCarriedOutOnlyInTheStateItLeaves) {
  // SIGKILL: gone, zombie or dead.
  EXPECT_TRUE(mpirun::signalCarriedOut(true, 0));
  EXPECT_TRUE(mpirun::signalCarriedOut(true, 'Z'));
  EXPECT_TRUE(mpirun::signalCarriedOut(true, 'X'));
  EXPECT_FALSE(mpirun::signalCarriedOut(true, 'S'));
  EXPECT_FALSE(mpirun::signalCarriedOut(true, 'T'));
  // SIGSTOP: stopped, nothing else.
  EXPECT_TRUE(mpirun::signalCarriedOut(false, 'T'));
  EXPECT_FALSE(mpirun::signalCarriedOut(false, 'R'));
  EXPECT_FALSE(mpirun::signalCarriedOut(false, 0));
}

TEST(ProcessWatch, AChildIsSeenStoppedThenReapedWithItsStatus) {
  const pid_t child = childRaising(SIGSTOP);
  ASSERT_GE(child, 0);
  EXPECT_EQ(mpirun::awaitSignal(child, /*dead=*/false), 'T');
  EXPECT_TRUE(mpirun::alive(child));
  EXPECT_EQ(mpirun::parentOf(child), ::getpid());
  const auto kids = mpirun::children();
  EXPECT_NE(std::find(kids.begin(), kids.end(), child), kids.end());
  ::kill(child, SIGCONT);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(mpirun::describeStatus(status), "exit code 3");
  EXPECT_FALSE(mpirun::alive(child));
  EXPECT_TRUE(mpirun::signalCarriedOut(true, mpirun::processState(child)));
}

TEST(ProcessWatch, ReapNotesTheWatchedChildsSignal) {
  const pid_t child = childRaising(SIGKILL);
  ASSERT_GE(child, 0);
  // Once the child has ended (waited for without reaping it), reap() reaps it and notes it.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
  bool exited = false;
  int status = 0;
  mpirun::reap(child, exited, status);
  ASSERT_TRUE(exited);
  EXPECT_EQ(mpirun::describeStatus(status), "signal 9");
  // Nothing left to reap: nothing noted.
  bool again = false;
  mpirun::reap(child, again, status);
  EXPECT_FALSE(again);
}

TEST(ProcessWatch, AStatusThatIsNeitherAnExitNorASignalIsShownRaw) {
  // 0x137f: stopped by SIGSTOP (WIFSTOPPED), as waitpid with WUNTRACED reports it.
  EXPECT_EQ(mpirun::describeStatus(0x137f), "status 4991");
  EXPECT_EQ(mpirun::describeStatus(0), "exit code 0");
}

}  // namespace
}  // namespace peerconf::harness
