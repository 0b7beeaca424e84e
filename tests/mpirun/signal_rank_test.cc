// Real-signal mode, the worker side (signal_rank.h): the events a rank streams and the result it
// writes are what the supervisor reads from the run directory (run_dir.h), its pid is announced,
// and a planted death stops its process for real after saying where.
#include "mpirun/signal_rank.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include "mpirun/run_dir.h"

namespace peerconf::harness {

using model::EventKind;
using model::EventLog;
using model::Point;
using model::RankStatus;
using model::toString;
using mpirun::announceSignalRank;
using mpirun::SignalRank;
namespace {

// A fresh directory, removed with everything in it at the end of the test.
class SignalRankFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "peerconf-signal-rank-test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    mpirun::removeTree(dir_);
    EXPECT_FALSE(mpirun::exists(dir_));
  }
  std::string dir_;
};

TEST_F(SignalRankFiles, EventsTheWorkerStreamsAreWhatTheSupervisorReads) {
  const auto start = EventLog::Clock::now();
  {
    SignalRank signal(dir_, 3, 1, start);
    EventLog log(1, start);
    signal.attach(log);
    log.record(EventKind::kPhaseBegin, "construct");
    log.record(EventKind::kCall, "openMemHandle", 0, "ptr=0x10");
    log.record(EventKind::kFault, "open", 0, "fails", 2);
  }
  const std::string path = dir_ + "/" + mpirun::itemName(3, 1, "events");
  // A line not (yet) ended, and one that is not JSON: neither counts.
  {
    std::ofstream out(path, std::ios::app);
    out << "not json\n{\"event\": {\"tNs\": 1";
  }
  const mpirun::Stream stream = mpirun::readStream(path);
  ASSERT_TRUE(stream.found);
  EXPECT_EQ(stream.pid, ::getpid());
  EXPECT_EQ(stream.startNs, mpirun::steadyNs(start));
  ASSERT_EQ(stream.events.size(), 3u);
  EXPECT_EQ(stream.events[0].kind, EventKind::kPhaseBegin);
  EXPECT_EQ(stream.events[1].what, "openMemHandle");
  EXPECT_EQ(stream.events[1].peer, 0);
  EXPECT_EQ(stream.events[1].detail, "ptr=0x10");
  EXPECT_EQ(stream.events[2].kind, EventKind::kFault);
  EXPECT_FALSE(stream.stopped);
}

TEST_F(SignalRankFiles, AResultIsWrittenWholeUnderTheRanksName) {
  SignalRank signal(dir_, 0, 2, EventLog::Clock::now());
  signal.writeResult("{\"rank\": 2}");
  const std::string path = dir_ + "/" + mpirun::itemName(0, 2, "result");
  EXPECT_EQ(mpirun::readFile(path), "{\"rank\": 2}");
  EXPECT_FALSE(mpirun::exists(path + ".tmp"));
}

TEST_F(SignalRankFiles, ARankInADirectoryThatIsNotThereIsAnError) {
  EXPECT_THROW(SignalRank(dir_ + "/absent", 0, 0, EventLog::Clock::now()), std::runtime_error);
}

TEST_F(SignalRankFiles, ThePidIsAnnouncedOnceAProcess) {
  // In a child of its own: the once-a-process flag stays unset in the test's process.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    announceSignalRank(dir_, 4);
    announceSignalRank(dir_, 5);  // a second call in the same process writes nothing
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(mpirun::readFile(dir_ + "/pid.4"), std::to_string(child));
  EXPECT_FALSE(mpirun::exists(dir_ + "/pid.5"));
}

TEST_F(SignalRankFiles, ADeathSaysWhereThenKillsTheProcessForReal) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SignalRank signal(dir_, 1, 0, EventLog::Clock::now());
    signal.die(Point::kClose);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  const mpirun::Stream stream = mpirun::readStream(dir_ + "/" + mpirun::itemName(1, 0, "events"));
  ASSERT_TRUE(stream.found);
  EXPECT_EQ(stream.pid, child);
  EXPECT_EQ(stream.stopped, RankStatus::kDead);
  EXPECT_EQ(stream.stopAt, toString(Point::kClose));
}

}  // namespace
}  // namespace peerconf::harness
