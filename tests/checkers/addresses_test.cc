// C4 addresses on clean synthetic runs and on planted defects.
#include "checkers/addresses.h"

#include <gtest/gtest.h>

#include <utility>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::RankResult;
using model::RunRecord;
using model::Verdict;
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

// C4 reads the device table: it must equal the host table, slot by slot.
TEST(Addresses, FailsWhenTheDeviceTableDiffersNamingRankAndSlot) {
  RunRecord record = testing::successRun();
  std::swap(record.ranks[1].deviceTable[0], record.ranks[1].deviceTable[2]);
  const Verdict verdict = checkAddresses(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "addressesDevice()[0] is")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "addressesDevice()[2] is")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 1, "addressesDevice()[3]")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 0)) << dump(verdict);
}

TEST(Addresses, FailsWhenTheDeviceTableCouldNotBeReadOrIsShort) {
  RunRecord record = testing::successRun();
  record.ranks[0].deviceTable.clear();
  record.ranks[0].tableError = "addressesDevice() is null";
  record.ranks[2].deviceTable.pop_back();
  const Verdict verdict = checkAddresses(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "addressesDevice() is null")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "read 3 entries of addressesDevice() for 4 ranks"))
      << dump(verdict);
}

// The host and device tables agree but a peer's slot is not what opening that peer returned.
TEST(Addresses, FailsWhenASlotIsNotThePeersMappingFromLedgerOrEvents) {
  RunRecord record = testing::successRun();
  RankResult& rank3 = record.ranks[3];
  std::swap(rank3.hostTable[0], rank3.hostTable[1]);
  rank3.deviceTable = rank3.hostTable;
  for (const RunRecord& r : {record, testing::withoutLedgers(record)}) {
    const Verdict verdict = checkAddresses(r);
    EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 3, "addresses()[0] is")) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 3, "but opening peer 0 returned")) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 3, "but opening peer 1 returned")) << dump(verdict);
  }
}

}  // namespace
}  // namespace peerconf::harness::checkers
