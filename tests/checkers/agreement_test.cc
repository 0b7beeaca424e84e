// C5 agreement on clean synthetic runs and on planted defects.
#include "checkers/agreement.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::RunRecord;
using model::Verdict;
namespace {

using testing::dump;
using testing::hasFinding;

Event& agreementEvent(RunRecord& record, int rank, EventKind kind) {
  auto& events = record.ranks[rank].events;
  auto it = std::find_if(events.begin(), events.end(), [&](const Event& e) {
    return e.what == "allReduceMin" && e.kind == kind;
  });
  EXPECT_NE(it, events.end());
  return *it;
}

TEST(Agreement, PassesCleanRuns) {
  for (const RunRecord& record :
       {testing::successRun(), testing::openFailureRun(), testing::hangRun()}) {
    const Verdict verdict = checkAgreement(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  }
}

TEST(Agreement, NotApplicableWhenNoRankReachedIt) {
  EXPECT_EQ(checkAgreement(testing::successRun(1)).status, Verdict::Status::kNotApplicable);
}

TEST(Agreement, FailsRanksThatReturnedWhenNoRankAgreed) {
  RunRecord record = testing::successRun(3);
  for (auto& rank : record.ranks) {
    std::erase_if(rank.events, [](const Event& e) { return e.what == "allReduceMin"; });
  }
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(hasFinding(verdict, rank, "no rank ever called the agreement")) << dump(verdict);
  }
}

TEST(Agreement, FailsOnWrongResult) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  agreementEvent(record, 1, EventKind::kReturn).detail = "out=1";  // min of inputs is 0
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "minimum of the inputs is 0")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "must have passed in=1 and seen out=0")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 0)) << dump(verdict);
}

TEST(Agreement, FailsWhenSuccessWasAgreedOnAFalseInput) {
  RunRecord record = testing::successRun();
  agreementEvent(record, 2, EventKind::kCall).detail = "in=0";
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "minimum of the inputs is 0")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "passed in=0")) << dump(verdict);
}

TEST(Agreement, AnotherRankMustHavePassedTrue) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  agreementEvent(record, 3, EventKind::kCall).detail = "in=0";
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "raised \"another\"")) << dump(verdict);
}

TEST(Agreement, ThisRankMustHavePassedFalse) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  agreementEvent(record, 2, EventKind::kCall).detail = "in=1";
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "raised \"this\"")) << dump(verdict);
}

TEST(Agreement, ResultWithoutEveryRankCallingIsWrong) {
  RunRecord record = testing::successRun(3);
  auto& events = record.ranks[2].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const Event& e) { return e.what == "allReduceMin"; }),
               events.end());
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "rank 2 never made that call")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "never reached the agreement")) << dump(verdict);
}

TEST(Agreement, UnreadableDetailsFail) {
  RunRecord record = testing::successRun(2);
  agreementEvent(record, 1, EventKind::kReturn).detail = "result one";
  const Verdict verdict = checkAgreement(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "without a readable result")) << dump(verdict);
}

}  // namespace
}  // namespace peerconf::harness::checkers
