// C8 bounded on clean synthetic runs and on planted defects.
#include "checkers/bounded.h"

#include <gtest/gtest.h>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

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

}  // namespace
}  // namespace peerconf::harness::checkers
