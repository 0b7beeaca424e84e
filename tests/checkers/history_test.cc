// The replay of the data plane's histories (analyzeOverwrites for C6, analyzeStale for C7) read
// directly: what it counts on a clean history, which problems it attributes to whom, what it
// cannot replay, and which ranks did not run the data plane.
#include "checkers/history.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "dataplane_test_support.h"
#include "layout/layout.h"

namespace peerconf::harness::dataplane {

using checkers::Analysis;
using checkers::analyzeOverwrites;
using checkers::analyzeStale;
using checkers::ran;
using model::DataplaneEvent;
using model::DataplaneEventKind;
using model::DataplaneOutcome;
using model::Result;
using model::RunRecord;
using model::Violation;
namespace {

using testing::cleanHistory;
using testing::findEvent;
using testing::recordOf;

TEST(History, ACleanHistoryIsCountedAndHasNoProblem) {
  const RunRecord record = recordOf(cleanHistory());
  const Analysis c6 = analyzeOverwrites(record);
  EXPECT_TRUE(c6.asked);
  EXPECT_TRUE(c6.ran);
  EXPECT_TRUE(c6.notRun.empty());
  EXPECT_TRUE(c6.problems.empty());
  EXPECT_EQ(c6.historySteps, 8u);
  EXPECT_EQ(c6.pairsChecked, 16u);  // 8 pairs read in-band by each rank
  // Every push but the first into each of the 2 slots of each writer follows a pair there.
  EXPECT_EQ(c6.eventsReplayed, 12u);
  const Analysis c7 = analyzeStale(record);
  EXPECT_TRUE(c7.problems.empty());
  EXPECT_EQ(c7.eventsReplayed, 16u);
}

TEST(History, ProblemsAreAttributedAndCounted) {
  auto results = cleanHistory();
  const layout::Layout layout;
  findEvent(results[0], DataplaneEventKind::kPush, 5)->aux =
      layout.tag(testing::kCleanGeneration, 2);
  results[1].overwrites = 2;
  results[1].findings.push_back({Violation::kOverwrite, 1, 0, 1, 7, 7, "seen in-band"});
  const Analysis a = analyzeOverwrites(recordOf(results));
  EXPECT_EQ(a.inBand, 2u);  // the exact count, not the findings kept
  EXPECT_EQ(a.replayed, 1u);
  ASSERT_EQ(a.problems.size(), 2u);
  EXPECT_TRUE(a.problems[0].inBand);  // in-band first
  EXPECT_EQ(a.problems[0].rank, 1);
  EXPECT_FALSE(a.problems[1].inBand);
  EXPECT_EQ(a.problems[1].rank, 0);  // the writer of the push
  // The stale replay ignores what only concerns C6.
  EXPECT_TRUE(analyzeStale(recordOf(results)).problems.empty());
}

// C6 judges a layout from its record alone: a layout that waits for no acknowledgement (aux 0,
// no ack events) is still held to "the reader's release of the slot's previous pair is ordered
// before the push by a pair the writer read".
TEST(History, APushBeforeTheReaderReleasedThePreviousPairIsFoundWithoutAcknowledgements) {
  auto results = cleanHistory();
  for (auto& r : results) {
    std::erase_if(r.history,
                  [](const DataplaneEvent& e) { return e.kind == DataplaneEventKind::kAck; });
    for (DataplaneEvent& e : r.history) {
      if (e.kind == DataplaneEventKind::kPush) e.aux = 0;
    }
  }
  EXPECT_TRUE(analyzeOverwrites(recordOf(results)).problems.empty());
  // Rank 1 reads rank 0's pair of epoch 3 only at the end, after its own pushes of steps 4 to 7:
  // nothing rank 0 read from rank 1 before pushing epoch 5 into that slot came after that read.
  auto& history = results[1].history;
  const auto late = std::find_if(history.begin(), history.end(), [](const DataplaneEvent& e) {
    return e.kind == DataplaneEventKind::kRead && e.step == 3;
  });
  const DataplaneEvent read = *late;
  history.erase(late);
  history.push_back(read);
  const Analysis a = analyzeOverwrites(recordOf(results));
  ASSERT_GE(a.problems.size(), 1u);
  EXPECT_EQ(a.problems[0].rank, 0);
  EXPECT_NE(a.problems[0].text.find("pair of epoch 5 (step 5) into slot (1, source 0) of rank 1's "
                                    "buffer while its pair of epoch 3 there was unread: nothing "
                                    "it had seen from rank 1 came after rank 1 read it"),
            std::string::npos)
      << a.problems[0].text;
  // ... and one it never read at all.
  history.pop_back();
  const Analysis never = analyzeOverwrites(recordOf(results));
  ASSERT_GE(never.problems.size(), 1u);
  EXPECT_NE(never.problems[0].text.find("rank 1 never read it"), std::string::npos);
}

// An acknowledgement a push relied on must be one its reader wrote.
// A store into a slot that is not a push (kRearm), judged by the recorded order (real time and
// GPUs: check 0, nothing said what it overwrote): rank 0 re-arms peer 1's slot of epoch 5 right
// after pushing epoch 4, while its pair of epoch 3 there may be unread; rank 1 re-arming its own
// slot of epoch 3 after reading it is fine.
TEST(History, AReArmOfAPeersSlotBeforeThePeerReadItIsFoundByTheRecordedOrder) {
  const layout::Layout layout;
  const auto rearm = [&](int owner, std::uint32_t epoch, std::uint64_t step) {
    DataplaneEvent e;
    e.kind = DataplaneEventKind::kRearm;
    e.peer = owner;
    e.source = 0;
    e.slot = layout.slotOf(epoch);
    e.step = step;
    e.epoch = static_cast<std::uint32_t>(step);
    return e;
  };
  auto fine = cleanHistory();
  auto& own = fine[1].history;
  const auto read3 = std::find_if(own.begin(), own.end(), [](const DataplaneEvent& e) {
    return e.kind == DataplaneEventKind::kRead && e.step == 3;
  });
  own.insert(read3 + 1, rearm(1, 3, 3));
  EXPECT_TRUE(analyzeOverwrites(recordOf(fine)).problems.empty());

  auto broken = cleanHistory();
  auto& history = broken[0].history;
  const auto push4 = std::find_if(history.begin(), history.end(), [](const DataplaneEvent& e) {
    return e.kind == DataplaneEventKind::kPush && e.step == 4;
  });
  history.insert(push4 + 1, rearm(1, 5, 4));
  const Analysis a = analyzeOverwrites(recordOf(broken));
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_EQ(a.problems[0].rank, 0);
  EXPECT_NE(a.problems[0].text.find("rank 0 re-armed peer 1's slot (1, source 0) while rank 0's "
                                    "pair of epoch 3 (step 3) there was unread"),
            std::string::npos)
      << a.problems[0].text;
  EXPECT_NE(a.problems[0].text.find("by the recorded order"), std::string::npos);
}

TEST(History, AnAcknowledgementTheReaderNeverWroteIsFound) {
  auto results = cleanHistory();
  findEvent(results[0], DataplaneEventKind::kPush, 4)->aux = 0x1234;
  const Analysis a = analyzeOverwrites(recordOf(results));
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_NE(a.problems[0].text.find("an acknowledgement rank 1 never wrote"), std::string::npos)
      << a.problems[0].text;
}

// An acknowledgement written before the reader read the pair orders nothing.
TEST(History, AnAcknowledgementWrittenBeforeTheReadIsFound) {
  auto results = cleanHistory();
  auto& history = results[1].history;
  // Rank 1 acknowledges rank 0's epoch 4 before it reads rank 0's epoch 3.
  const auto ack = std::find_if(history.begin(), history.end(), [](const DataplaneEvent& e) {
    return e.kind == DataplaneEventKind::kAck && e.epoch == 4;
  });
  const DataplaneEvent early = *ack;
  history.erase(ack);
  const auto read = std::find_if(history.begin(), history.end(), [](const DataplaneEvent& e) {
    return e.kind == DataplaneEventKind::kRead && e.epoch == 3;
  });
  history.insert(read, early);
  const Analysis a = analyzeOverwrites(recordOf(results));
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_NE(a.problems[0].text.find("while its pair of epoch 3 there was unread: it relied on rank "
                                    "1's acknowledgement of epoch 4, written before rank 1 had "
                                    "read the pair"),
            std::string::npos)
      << a.problems[0].text;
}

// C7 compares what a reader took with what its source pushed for that step.
TEST(History, APairItsSourcePushedUnderAnotherTagIsFound) {
  auto results = cleanHistory();
  findEvent(results[0], DataplaneEventKind::kPush, 2)->tag ^= 1;
  const Analysis a = analyzeStale(recordOf(results));
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_EQ(a.problems[0].rank, 1);
  EXPECT_NE(a.problems[0].text.find("rank 0 pushed tag("), std::string::npos) << a.problems[0].text;
}

TEST(History, HistoriesOfDifferentDataPlanesAreNotReplayed) {
  auto results = cleanHistory();
  results[1].generation = testing::kCleanGeneration + 1;
  const Analysis a = analyzeOverwrites(recordOf(results));
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes.front().find("history not replayed"), std::string::npos) << a.notes.front();
  EXPECT_EQ(a.eventsReplayed, 0u);
  EXPECT_EQ(a.replayed, 0u);
}

TEST(History, RanksThatDidNotRunTheDataPlaneAreListed) {
  RunRecord record = recordOf(cleanHistory());
  record.ranks[1].dataPlane->outcome = DataplaneOutcome::kSkipped;
  record.ranks[1].dataPlane->detail = "no peer memory";
  const Analysis a = analyzeStale(record);
  EXPECT_TRUE(a.asked);
  EXPECT_TRUE(a.ran);  // rank 0 did
  ASSERT_EQ(a.notRun.size(), 1u);
  EXPECT_EQ(a.notRun[0].rank, 1);
  EXPECT_NE(a.notRun[0].text.find("no peer memory"), std::string::npos) << a.notRun[0].text;

  for (auto& r : record.ranks) r.dataPlane.reset();
  const Analysis none = analyzeStale(record);
  EXPECT_FALSE(none.asked);
  EXPECT_FALSE(none.ran);
}

TEST(History, OnlySkippedAndErrorCountAsNotRun) {
  Result result;
  for (DataplaneOutcome outcome : {DataplaneOutcome::kCompleted, DataplaneOutcome::kStopped,
                                   DataplaneOutcome::kTimeout, DataplaneOutcome::kAborted}) {
    result.outcome = outcome;
    EXPECT_TRUE(ran(result)) << toString(outcome);
  }
  for (DataplaneOutcome outcome : {DataplaneOutcome::kSkipped, DataplaneOutcome::kError}) {
    result.outcome = outcome;
    EXPECT_FALSE(ran(result)) << toString(outcome);
  }
}

}  // namespace
}  // namespace peerconf::harness::dataplane
