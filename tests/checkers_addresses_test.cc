// C4 addresses on clean synthetic runs and on planted defects.
#include <gtest/gtest.h>

#include "addresses.h"
#include "synthetic_run.h"

namespace peerconf::harness::checkers {
namespace {

using testing::dump;
using testing::hasFinding;

TEST(Addresses, PassesCleanSuccess) {
  const Verdict verdict = checkAddresses(testing::successRun());
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

TEST(Addresses, NotApplicableWhenNoBufferIsExpected) {
  EXPECT_EQ(checkAddresses(testing::openFailureRun()).status, Verdict::Status::kNotApplicable);
  EXPECT_EQ(checkAddresses(testing::hangRun()).status, Verdict::Status::kNotApplicable);
}

TEST(Addresses, FailsOnWrongOwnSlot) {
  RunRecord record = testing::successRun();
  record.ranks[3].ownSlotIsLocal = false;
  const Verdict verdict = checkAddresses(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "addresses[3]")) << dump(verdict);
}

TEST(Addresses, FailsOnMisplacedPattern) {
  RunRecord record = testing::successRun();
  record.ranks[0].addressFindings = {
      "rank 2 wrote through addresses[0] but its pattern is not in "
      "rank 0's buffer"};
  const Verdict verdict = checkAddresses(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "rank 2 wrote")) << dump(verdict);
}

}  // namespace
}  // namespace peerconf::harness::checkers
