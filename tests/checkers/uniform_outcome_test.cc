// C1 uniform outcome on clean synthetic runs and on planted defects.
#include "checkers/uniform_outcome.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::Fault;
using model::FaultSite;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::reproduceCommand;
using model::RunRecord;
using model::Verdict;
namespace {

using testing::dump;
using testing::hasFinding;

TEST(UniformOutcome, PassesCleanRuns) {
  for (const RunRecord& record :
       {testing::successRun(), testing::openFailureRun(), testing::hangRun()}) {
    const Verdict verdict = checkUniformOutcome(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
    EXPECT_EQ(verdict.property, Property::kC1Uniform);
    EXPECT_EQ(verdict.reproduce, reproduceCommand(record));
    EXPECT_FALSE(verdict.expectedViolation);
  }
}

TEST(UniformOutcome, FindingsNameEveryRanksStatus) {
  const Verdict verdict = checkUniformOutcome(testing::hangRun(4, 1));
  EXPECT_TRUE(hasFinding(verdict, 0, "raised GroupTimeout")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "hung")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "not counted")) << dump(verdict);
}

TEST(UniformOutcome, FailsOnMixedOutcomeNamingTheOddRank) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[3].status = RankStatus::kOk;  // rank 3 returned a buffer while the rest raised
  const Verdict verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_NE(verdict.summary.find("mixed"), std::string::npos) << verdict.summary;
  EXPECT_TRUE(hasFinding(verdict, 3, "ok (expected to raise)")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 0, "expected")) << dump(verdict);
}

TEST(UniformOutcome, FailsWhenEveryRankRaisedButSuccessWasExpected) {
  RunRecord record = testing::successRun(2);
  for (RankResult& rank : record.ranks) {
    rank.status = RankStatus::kRaised;
    rank.errorType = "BackendError";
  }
  const Verdict verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "(expected ok)")) << dump(verdict);
}

TEST(UniformOutcome, ARankThatRaisedUnexpectedlyShowsItsCause) {
  // "failed on this TP rank" says nothing of why: the finding carries the chained cause.
  RunRecord record = testing::successRun(2);
  record.ranks[1].status = RankStatus::kRaised;
  record.ranks[1].errorType = "HandshakeError";
  record.ranks[1].message = "peer memory handshake failed on this TP rank";
  record.ranks[1].cause = "open failed on rank 1 (peer 0): already mapped";
  const Verdict verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(
      verdict, 1, "(expected ok); its cause: open failed on rank 1 (peer 0): already mapped"))
      << dump(verdict);
}

TEST(UniformOutcome, FailsOnMissingOrUnexpectedlyStoppedRank) {
  RunRecord missing = testing::successRun(3);
  missing.ranks.pop_back();  // rank 2 never came back
  Verdict verdict = checkUniformOutcome(missing);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "missing")) << dump(verdict);

  RunRecord dead = testing::openFailureRun();
  dead.ranks[0].status = RankStatus::kDead;
  verdict = checkUniformOutcome(dead);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "dead")) << dump(verdict);
}

TEST(UniformOutcome, ReportedRunNeedsEverySurvivorRaised) {
  RunRecord record = testing::hangRun(4, 1);
  record.ranks[2].status = RankStatus::kOk;
  const Verdict verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "expected to raise")) << dump(verdict);
}

TEST(UniformOutcome, StopAtCloseLeavesSurvivorsOk) {
  // A rank that dies entering close() does so after every constructor returned.
  RunRecord record = testing::successRun(4);
  Fault death;
  death.site = FaultSite::kDeath;
  death.ranks = {1};
  death.at = Point::kClose;
  record.scenario.faults = {death};
  record.scenario.expect.outcome = Outcome::kReported;
  record.scenario.expect.reported = {1};
  record.ranks[1].status = RankStatus::kDead;
  Verdict verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);

  record.ranks[3].status = RankStatus::kRaised;
  verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "(expected ok)")) << dump(verdict);

  // Once the scenario names a message for the survivors, they must raise.
  record.scenario.expect.others = MessageExpectation{MessageKind::kGroup, {}};
  verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "(expected to raise)")) << dump(verdict);
}

TEST(UniformOutcome, NotApplicableWhenEveryRankIsReported) {
  RunRecord record = testing::hangRun(1, 0);
  EXPECT_EQ(checkUniformOutcome(record).status, Verdict::Status::kNotApplicable);
}

// `ok` under raise (a buffer-count fault's returning rank): it must return, and must not have
// entered the construction the others raised in.
TEST(UniformOutcome, AnOkRankReturnsWithoutEnteringTheConstructionTheOthersRaisedIn) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.scenario.expect.messages[1] = {MessageKind::kOk, {}};
  record.ranks[1].status = RankStatus::kOk;
  // As recorded, rank 1 began the one construction every other rank raised in.
  Verdict verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "the one the others raised in")) << dump(verdict);
  // A rank that never began it (it registered no buffer) passes; one that raised fails.
  auto& events = record.ranks[1].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const model::Event& e) { return e.what == "construct"; }),
               events.end());
  verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "returned every buffer it constructed")) << dump(verdict);
  record.ranks[1].status = RankStatus::kRaised;
  verdict = checkUniformOutcome(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "(expected ok: it returns every buffer it constructed)"))
      << dump(verdict);
}

TEST(UniformOutcome, MarksExpectedViolation) {
  RunRecord record = testing::openFailureRun();
  record.scenario.expect.violations = {"c1"};
  record.ranks[0].status = RankStatus::kOk;
  const Verdict verdict = checkUniformOutcome(record);
  EXPECT_TRUE(verdict.expectedViolation);
  EXPECT_TRUE(verdict.acceptable());
}

}  // namespace
}  // namespace peerconf::harness::checkers
