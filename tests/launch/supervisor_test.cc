// The supervisor of real-signal mode, its parts that need no mpirun: the run directory's files as
// the worker side writes them and the supervisor reads them (run_dir.h, signal_rank.h), the result
// of a rank that wrote none (rankFromStream), the wire format of a rank's outcome (rank_launch.h),
// and the process watching (process_watch.h) on a child of the test.
#include "launch/supervisor.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "launch/process_watch.h"
#include "launch/rank_launch.h"
#include "launch/run_dir.h"
#include "launch/signal_rank.h"

namespace peerconf::harness {
namespace {

// A fresh directory, removed with everything in it at the end of the test.
class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "peerconf-supervisor-test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    run_dir::removeTree(dir_);
    EXPECT_FALSE(run_dir::exists(dir_));
  }
  std::string dir_;
};

TEST_F(RunDirTest, EventsTheWorkerStreamsAreWhatTheSupervisorReads) {
  const auto start = EventLog::Clock::now();
  {
    SignalRank signal(dir_, 3, 1, start);
    EventLog log(1, start);
    signal.attach(log);
    log.record(EventKind::kPhaseBegin, "construct");
    log.record(EventKind::kCall, "openMemHandle", 0, "ptr=0x10");
    log.record(EventKind::kFault, "open", 0, "fails", 2);
  }
  const std::string path = dir_ + "/" + run_dir::itemName(3, 1, "events");
  EXPECT_EQ(run_dir::itemName(3, 1, "events"), "s3.r1.events");
  // A line not (yet) ended, and one that is not JSON: neither counts.
  {
    std::ofstream out(path, std::ios::app);
    out << "not json\n{\"event\": {\"tNs\": 1";
  }
  const run_dir::Stream stream = run_dir::readStream(path);
  ASSERT_TRUE(stream.found);
  EXPECT_EQ(stream.pid, ::getpid());
  EXPECT_EQ(stream.startNs, run_dir::steadyNs(start));
  ASSERT_EQ(stream.events.size(), 3u);
  EXPECT_EQ(stream.events[0].kind, EventKind::kPhaseBegin);
  EXPECT_EQ(stream.events[1].what, "openMemHandle");
  EXPECT_EQ(stream.events[1].peer, 0);
  EXPECT_EQ(stream.events[1].detail, "ptr=0x10");
  EXPECT_EQ(stream.events[2].kind, EventKind::kFault);
  EXPECT_FALSE(stream.stopped);

  EXPECT_FALSE(run_dir::readStream(dir_ + "/absent").found);
}

TEST_F(RunDirTest, AResultIsWrittenWholeAndReadsBackWithItsFiredSites) {
  RankOutcome outcome;
  outcome.result.rank = 2;
  outcome.result.status = RankStatus::kRaised;
  outcome.result.message = "open failed";
  outcome.fired = {FaultSite::kOpen, FaultSite::kClose};
  SignalRank signal(dir_, 0, 2, EventLog::Clock::now());
  signal.writeResult(rankPayload(outcome).dump());
  const auto text = run_dir::readFile(dir_ + "/" + run_dir::itemName(0, 2, "result"));
  ASSERT_TRUE(text);
  EXPECT_FALSE(run_dir::exists(dir_ + "/" + run_dir::itemName(0, 2, "result") + ".tmp"));
  std::set<std::string> fired{"delay"};
  const RankResult back = readRankPayload(*text, fired);
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.status, RankStatus::kRaised);
  EXPECT_EQ(back.message, "open failed");
  EXPECT_EQ(fired, (std::set<std::string>{"close", "delay", "open"}));
  std::set<std::string> none;
  EXPECT_ANY_THROW(readRankPayload("{\"rank\": 1}", none));
  EXPECT_ANY_THROW(readRankPayload("not json", none));
}

run_dir::Stream stoppedStream(RankStatus status) {
  run_dir::Stream stream;
  stream.found = true;
  stream.pid = 4242;
  stream.events = {{10, 1, EventKind::kCall, "allGather", -1, "bytes=8"},
                   {20, 1, EventKind::kFault, "death", -1, "dies", 0}};
  stream.stopped = status;
  stream.stopAt = "exchange";
  return stream;
}

TEST(SupervisorRankFromStream, AKilledRankIsDeadWithItsEventsAndAnOutcome) {
  std::set<std::string> fired;
  const StreamedRank dead = rankFromStream(stoppedStream(RankStatus::kDead), 1, 0, fired);
  EXPECT_TRUE(dead.signalled);
  EXPECT_EQ(dead.result.rank, 1);
  EXPECT_EQ(dead.result.status, RankStatus::kDead);
  EXPECT_EQ(dead.result.message, "stopped at exchange by SIGKILL (pid 4242: process gone)");
  EXPECT_EQ(dead.stop, "rank 1 SIGKILLed at exchange");
  EXPECT_EQ(dead.result.endNs, 20);
  ASSERT_EQ(dead.result.events.size(), 3u);
  EXPECT_EQ(dead.result.events.back().kind, EventKind::kOutcome);
  EXPECT_EQ(dead.result.events.back().what, "dead");
  EXPECT_EQ(fired, (std::set<std::string>{"death"}));
  // A zombie is dead too.
  EXPECT_TRUE(rankFromStream(stoppedStream(RankStatus::kDead), 1, 'Z', fired).signalled);
}

TEST(SupervisorRankFromStream, AKillThatWasNotCarriedOutIsSaid) {
  std::set<std::string> fired;
  const StreamedRank alive = rankFromStream(stoppedStream(RankStatus::kDead), 1, 'S', fired);
  EXPECT_FALSE(alive.signalled);
  EXPECT_EQ(alive.result.message,
            "stopped at exchange by SIGKILL (pid 4242: process still there, state S)");
}

TEST(SupervisorRankFromStream, AStoppedRankIsHungOnlyWhileItsProcessIsStopped) {
  std::set<std::string> fired;
  const StreamedRank hung = rankFromStream(stoppedStream(RankStatus::kHung), 0, 'T', fired);
  EXPECT_TRUE(hung.signalled);
  EXPECT_EQ(hung.result.status, RankStatus::kHung);
  EXPECT_EQ(hung.result.message,
            "stopped at exchange by SIGSTOP (pid 4242: process stopped (state T))");
  EXPECT_EQ(hung.stop, "rank 0 SIGSTOPped at exchange");
  const StreamedRank gone = rankFromStream(stoppedStream(RankStatus::kHung), 0, 0, fired);
  EXPECT_FALSE(gone.signalled);
  EXPECT_EQ(gone.result.message,
            "stopped at exchange by SIGSTOP (pid 4242: process not stopped, state gone)");
}

TEST(SupervisorRankFromStream, ARankWithoutAStopIsMissing) {
  std::set<std::string> fired;
  run_dir::Stream stream = stoppedStream(RankStatus::kDead);
  stream.stopped.reset();
  const StreamedRank silent = rankFromStream(stream, 2, 0, fired);
  EXPECT_EQ(silent.result.status, RankStatus::kMissing);
  EXPECT_EQ(silent.result.message, "no result (last event streamed is kept)");
  EXPECT_EQ(silent.result.events.size(), 2u);
  EXPECT_TRUE(silent.stop.empty());
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(rankFromStream(run_dir::Stream{}, 2, 0, fired).result.message,
            "nothing came back from this rank");
}

TEST(SupervisorText, LastLinesKeepsTheTailOfTheLog) {
  EXPECT_EQ(run_dir::lastLines("a\nb\nc\n", 2), "c\n");
  EXPECT_EQ(run_dir::lastLines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(run_dir::lastLines("a\nb", 5), "a\nb");
  EXPECT_EQ(run_dir::lastLines("", 3), "");
}

// A child that raises `signal` at once, then (if it goes on) exits with code 3.
pid_t childRaising(int signal) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::raise(signal);
    ::_exit(3);
  }
  return child;
}

TEST(SupervisorProcessWatch, AChildIsSeenStoppedThenReapedWithItsStatus) {
  const pid_t child = childRaising(SIGSTOP);
  ASSERT_GE(child, 0);
  EXPECT_EQ(process_watch::awaitSignal(child, /*dead=*/false), 'T');
  EXPECT_TRUE(process_watch::alive(child));
  const auto kids = process_watch::children();
  EXPECT_NE(std::find(kids.begin(), kids.end(), child), kids.end());
  ::kill(child, SIGCONT);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(process_watch::describeStatus(status), "exit code 3");
  EXPECT_FALSE(process_watch::alive(child));
  EXPECT_TRUE(process_watch::signalCarriedOut(true, process_watch::processState(child)));
}

TEST(SupervisorProcessWatch, ReapNotesTheWatchedChildsSignal) {
  const pid_t child = childRaising(SIGKILL);
  ASSERT_GE(child, 0);
  // Once the child has ended (waited for without reaping it), reap() reaps it and notes it.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
  bool exited = false;
  int status = 0;
  process_watch::reap(child, exited, status);
  ASSERT_TRUE(exited);
  EXPECT_EQ(process_watch::describeStatus(status), "signal 9");
}

}  // namespace
}  // namespace peerconf::harness
