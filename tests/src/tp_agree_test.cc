// tpAgree's own contract (DESIGN.md 1, C5): a MIN all-reduce of an int, one call per agreement,
// true iff every rank passed true; no group returns ok without communicating; what the group
// raises reaches the caller unchanged. The group conformance suites exercise it over real groups.
#include "tp_agree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "errors.h"
#include "mock_seams.h"
#include "thread/run_ranks.h"

namespace peerconf {
namespace {

using testing::MockGroup;
using ::testing::Return;
using ::testing::StrictMock;
using ::testing::Throw;

TEST(TpAgreeTest, NoGroupReturnsOk) {
  EXPECT_TRUE(tpAgree(true, nullptr));
  EXPECT_FALSE(tpAgree(false, nullptr));
}

// One allReduceMin of 1 or 0 per call and nothing else (a StrictMock fails any other call); the
// answer is the group's minimum, not this rank's own ok.
TEST(TpAgreeTest, MinAllReduceOfAnInt) {
  StrictMock<MockGroup> group;
  EXPECT_CALL(group, allReduceMin(1)).WillOnce(Return(1)).WillOnce(Return(0));
  EXPECT_CALL(group, allReduceMin(0)).WillOnce(Return(0));
  EXPECT_TRUE(tpAgree(true, &group));
  EXPECT_FALSE(tpAgree(true, &group));
  EXPECT_FALSE(tpAgree(false, &group));
}

TEST(TpAgreeTest, WhatTheGroupRaisesReachesTheCallerUnchanged) {
  StrictMock<MockGroup> group;
  EXPECT_CALL(group, allReduceMin(1))
      .WillOnce(Throw(GroupTimeout(Op::kAllReduce, 2, 1.5)))
      .WillOnce(Throw(GroupError("rank 0 aborted", Op::kAllReduce, 2, 0)));
  try {
    tpAgree(true, &group);
    ADD_FAILURE() << "a timeout of the all-reduce was swallowed";
  } catch (const GroupTimeout& e) {
    EXPECT_EQ(e.op(), Op::kAllReduce);
    EXPECT_EQ(e.rank(), 2);
    EXPECT_EQ(e.deadlineSeconds(), 1.5);
  }
  try {
    tpAgree(true, &group);
    ADD_FAILURE() << "a failed all-reduce was swallowed";
  } catch (const GroupTimeout&) {
    ADD_FAILURE() << "a group error became a timeout";
  } catch (const GroupError& e) {
    EXPECT_STREQ(e.what(), "rank 0 aborted");
    EXPECT_EQ(e.peer(), 0);
  }
}

// Over a real group of 4 ranks as threads: every rank sees the same answer, true iff every rank
// passed true, whichever rank passed false.
TEST(TpAgreeTest, EveryRankAgreesTrueIffEveryRankPassedTrue) {
  constexpr int kRanks = 4;
  for (int falseRank = -1; falseRank < kRanks; ++falseRank) {
    std::vector<int> agreed(kRanks, -1);
    const auto outcomes =
        thread::runRanks(kRanks, std::chrono::seconds(30), [&](int rank, Group& group) {
          agreed[static_cast<std::size_t>(rank)] = tpAgree(rank != falseRank, &group) ? 1 : 0;
        });
    ASSERT_TRUE(thread::allOk(outcomes));
    EXPECT_EQ(agreed, std::vector<int>(kRanks, falseRank < 0 ? 1 : 0)) << "false on " << falseRank;
  }
}

}  // namespace
}  // namespace peerconf
