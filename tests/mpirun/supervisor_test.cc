// The supervisor of real-signal mode, its part that needs no mpirun: the result of a rank that
// wrote none, read from what it streamed (rankFromStream). The run directory's files, the worker
// side and the process watching have their own files (run_dir_test.cc, signal_rank_test.cc,
// process_watch_test.cc).
#include "mpirun/supervisor.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "mpirun/run_dir.h"

namespace peerconf::harness {

using model::EventKind;
using model::RankStatus;
using mpirun::rankFromStream;
using mpirun::StreamedRank;
namespace {

mpirun::Stream stoppedStream(RankStatus status) {
  mpirun::Stream stream;
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
  mpirun::Stream stream = stoppedStream(RankStatus::kDead);
  stream.stopped.reset();
  const StreamedRank silent = rankFromStream(stream, 2, 0, fired);
  EXPECT_EQ(silent.result.status, RankStatus::kMissing);
  EXPECT_EQ(silent.result.message, "no result (last event streamed is kept)");
  EXPECT_EQ(silent.result.events.size(), 2u);
  EXPECT_TRUE(silent.stop.empty());
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(rankFromStream(mpirun::Stream{}, 2, 0, fired).result.message,
            "nothing came back from this rank");
}

}  // namespace
}  // namespace peerconf::harness
