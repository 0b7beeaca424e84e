// C8 bounded on clean synthetic runs and on planted defects.
#include "checkers/bounded.h"

#include <gtest/gtest.h>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::agreementRound;
using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::handshakeCalls;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Verdict;
namespace {

using namespace std::chrono_literals;
using testing::dump;
using testing::hasFinding;

TEST(Bounded, PassesCleanRuns) {
  for (const RunRecord& record :
       {testing::successRun(), testing::openFailureRun(), testing::hangRun()}) {
    const Verdict verdict = checkBounded(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  }
}

TEST(Bounded, FailsPastItsDerivedBound) {
  RunRecord record = testing::hangRun();  // deadline 1 s: bound 4 s
  record.wallNs = 4'500'000'000;
  const Verdict verdict = checkBounded(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, -1, "past its bound")) << dump(verdict);
}

// The bound is milliseconds (model/scenario.h), the run's time nanoseconds: just inside passes.
TEST(Bounded, PassesJustInsideItsDerivedBound) {
  RunRecord record = testing::hangRun();  // deadline 1 s: bound 4 s
  record.wallNs = 3'900'000'000;
  const Verdict verdict = checkBounded(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

TEST(Bounded, FailsPastExpectWithin) {
  RunRecord record = testing::hangRun();
  record.scenario.expect.within = 1000ms;  // the run took 1.2 s
  const Verdict verdict = checkBounded(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, -1, "expect.within")) << dump(verdict);
}

TEST(Bounded, FailsWhenAHungRankIsNotReported) {
  RunRecord missing = testing::hangRun(4, 1);
  missing.ranks[1].status = RankStatus::kMissing;
  Verdict verdict = checkBounded(missing);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "missing")) << dump(verdict);

  RunRecord unreported = testing::hangRun(4, 1);
  unreported.ranks[1].status = RankStatus::kRaised;
  unreported.ranks[1].errorType = "GroupTimeout";
  verdict = checkBounded(unreported);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "expected to die or hang")) << dump(verdict);
}

TEST(Bounded, FailsOnAnUnexpectedDeadRank) {
  RunRecord record = testing::openFailureRun();
  record.ranks[3].status = RankStatus::kDead;
  const Verdict verdict = checkBounded(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "expects no such rank")) << dump(verdict);
}

TEST(Bounded, ListsEveryRanksLastEvent) {
  const Verdict verdict = checkBounded(testing::hangRun(3, 1));
  EXPECT_TRUE(hasFinding(verdict, 1, "hung")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "last event call allReduceMin [in=1]")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "last event outcome raised")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "last event")) << dump(verdict);
}

// openFailureRun on simulated time, its events 200 ns apart (the synthetic 20 us steps / 100):
// the whole run is far inside one agreement round of 4 ranks (240 us).
RunRecord simOpenFailureRun() {
  RunRecord record = testing::openFailureRun();
  record.clock = "sim";
  for (RankResult& rank : record.ranks) {
    for (Event& event : rank.events) event.tNs /= 100;
    rank.endNs /= 100;
  }
  return record;
}

// Rank `rank` raises `late` later: its construct phase ends (and everything after it happens)
// `late` after it did.
void raiseLate(RunRecord& record, int rank, std::chrono::nanoseconds late) {
  RankResult& result = record.ranks[static_cast<std::size_t>(rank)];
  bool after = false;
  for (Event& event : result.events) {
    after = after || (event.kind == EventKind::kPhaseEnd && event.what == "construct");
    if (after) event.tNs += late.count();
  }
  result.endNs += late.count();
}

TEST(BoundedTogether, OneAgreementRoundIsDerivedFromTheHandshakesCalls) {
  EXPECT_EQ(handshakeCalls(1), 9);
  EXPECT_EQ(handshakeCalls(4), 15);
  EXPECT_EQ(agreementRound(4), 240us);  // 4 ranks x 15 calls x 4 points x 1 us
  EXPECT_EQ(agreementRound(16), 16 * 39 * 4us);
}

TEST(BoundedTogether, PassesRanksThatRaiseTogetherOnSimulatedTime) {
  const Verdict verdict = checkBounded(simOpenFailureRun());
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  EXPECT_NE(verdict.summary.find("every rank raised within one agreement round (240 us)"),
            std::string::npos)
      << dump(verdict);
}

// A core that waits out the deadline (300 ms) before raising "another" on rank 2.
TEST(BoundedTogether, FailsARankThatWaitsOutTheDeadlineBeforeItRaises) {
  RunRecord record = simOpenFailureRun();  // rank 2 cannot open peer 0
  raiseLate(record, 3, 300ms);
  const Verdict verdict = checkBounded(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "past one agreement round (240 us)")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "after the last fault that fired (open on rank 2"))
      << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 0, "past one agreement round")) << dump(verdict);
}

// Just past the round fails, just inside passes: the bound is the round itself.
TEST(BoundedTogether, TheRoundIsTheBound) {
  RunRecord record = simOpenFailureRun();
  const Event* fault = nullptr;
  for (const Event& event : record.ranks[2].events) {
    if (event.kind == EventKind::kFault) fault = &event;
  }
  ASSERT_NE(fault, nullptr);
  std::int64_t raised = 0;
  for (const Event& event : record.ranks[3].events) {
    if (event.kind == EventKind::kPhaseEnd && event.what == "construct") raised = event.tNs;
  }
  const std::int64_t slack = 240'000 - (raised - fault->tNs);
  ASSERT_GT(slack, 0);
  RunRecord inside = record;
  raiseLate(inside, 3, std::chrono::nanoseconds(slack));
  EXPECT_EQ(checkBounded(inside).status, Verdict::Status::kPass) << dump(checkBounded(inside));
  raiseLate(record, 3, std::chrono::nanoseconds(slack + 1));
  EXPECT_EQ(checkBounded(record).status, Verdict::Status::kFail) << dump(checkBounded(record));
}

// Real time, a `within:` of the file's own, or a rank that may legitimately wait: no round bound.
TEST(BoundedTogether, AppliesOnlyToRaisingRunsOnSimulatedTimeWithoutAWait) {
  RunRecord real = simOpenFailureRun();
  real.clock = "real";
  raiseLate(real, 2, 300ms);
  EXPECT_EQ(checkBounded(real).status, Verdict::Status::kPass) << dump(checkBounded(real));

  RunRecord within = simOpenFailureRun();
  within.scenario.expect.within = 1s;
  raiseLate(within, 2, 300ms);
  EXPECT_EQ(checkBounded(within).status, Verdict::Status::kPass) << dump(checkBounded(within));

  RunRecord late = simOpenFailureRun();
  Fault delay;
  delay.site = FaultSite::kDelay;
  delay.ranks = {3};
  delay.at = Point::kOpen;
  delay.delay = 100ms;
  late.scenario.faults.push_back(delay);
  raiseLate(late, 2, 300ms);
  EXPECT_EQ(checkBounded(late).status, Verdict::Status::kPass) << dump(checkBounded(late));
  EXPECT_EQ(togetherBound(late.scenario), std::nullopt);
  EXPECT_NE(boundsText(late.scenario).find("no agreement-round bound: fault #1 (delay"),
            std::string::npos)
      << boundsText(late.scenario);
}

}  // namespace
}  // namespace peerconf::harness::checkers
