// C2 messages on clean synthetic runs and on planted defects.
#include <gtest/gtest.h>

#include "messages.h"
#include "synthetic_run.h"

namespace peerconf::harness::checkers {
namespace {

using testing::dump;
using testing::hasFinding;

TEST(Messages, PassesCleanFailureRuns) {
  for (const RunRecord& record : {testing::openFailureRun(), testing::hangRun()}) {
    const Verdict verdict = checkMessages(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  }
}

TEST(Messages, NotApplicableOnSuccess) {
  EXPECT_EQ(checkMessages(testing::successRun()).status, Verdict::Status::kNotApplicable);
}

TEST(Messages, FailsOnWrongMessageNamingTheRank) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[1].message = std::string(kThisRankMessage);  // says "this" but it was elsewhere
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "expected message")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 2)) << dump(verdict);
}

TEST(Messages, FailsWhenTheFailingRankLostItsCause) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[2].cause.clear();
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "no cause")) << dump(verdict);
}

TEST(Messages, FailsOnWrongThisRankFlagOrType) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[2].thisRank = false;
  record.ranks[0].errorType = "BackendError";
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "thisRank=true")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "expected HandshakeError")) << dump(verdict);
}

TEST(Messages, FailsWhenAnExpectedRaiseReturned) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[3].status = RankStatus::kOk;
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "got ok")) << dump(verdict);
}

TEST(Messages, GroupExpectationNeedsAGroupError) {
  RunRecord record = testing::hangRun(4, 1);
  record.ranks[3].errorType = "GroupError";  // also acceptable
  EXPECT_EQ(checkMessages(record).status, Verdict::Status::kPass);
  record.ranks[0].errorType = "HandshakeError";
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "GroupTimeout or GroupError")) << dump(verdict);
}

TEST(Messages, TextExpectationMatchesASubstring) {
  RunRecord record = testing::hangRun(4, 1);
  record.scenario.expect.others = MessageExpectation{MessageKind::kText, "deadline"};
  EXPECT_EQ(checkMessages(record).status, Verdict::Status::kPass);
  record.scenario.expect.messages[2] = {MessageKind::kText, "out of memory"};
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "out of memory")) << dump(verdict);
}

}  // namespace
}  // namespace peerconf::harness::checkers
