// packRounds (harness/mpirun/rounds.h): the MPI session's plan of which job runs on which ranks of
// which node, round by round.
#include "mpirun/rounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace peerconf::harness {

using mpirun::packRounds;
using mpirun::RoundPlan;
using mpirun::RoundSlot;

// gtest prints a slot by its fields (found by argument-dependent lookup, so not in the anonymous
// namespace).
void PrintTo(const RoundSlot& slot, std::ostream* out) {
  *out << "{job " << slot.job << ", node " << slot.node << ", offset " << slot.offset << "}";
}

namespace {

using Rounds = std::vector<std::vector<RoundSlot>>;

// Every job is placed once or left unplaced; in a round, no two jobs share a rank of a node and
// none runs past its node's end.
void expectSound(const std::vector<int>& ranks, const std::vector<int>& nodes,
                 const RoundPlan& plan) {
  std::multiset<std::size_t> seen(plan.unplaced.begin(), plan.unplaced.end());
  for (const auto& round : plan.rounds) {
    EXPECT_FALSE(round.empty());
    std::vector<std::vector<bool>> used;
    for (int size : nodes) used.emplace_back(static_cast<std::size_t>(size), false);
    for (const auto& slot : round) {
      seen.insert(slot.job);
      ASSERT_LT(slot.node, static_cast<int>(nodes.size()));
      ASSERT_GE(slot.offset, 0);
      ASSERT_LE(slot.offset + ranks[slot.job], nodes[static_cast<std::size_t>(slot.node)]);
      for (int r = slot.offset; r < slot.offset + ranks[slot.job]; ++r) {
        auto&& cell = used[static_cast<std::size_t>(slot.node)][static_cast<std::size_t>(r)];
        EXPECT_FALSE(cell) << "job " << slot.job << " shares rank " << r;
        cell = true;
      }
    }
  }
  for (std::size_t job = 0; job < ranks.size(); ++job) EXPECT_EQ(seen.count(job), 1u) << job;
  EXPECT_EQ(seen.size(), ranks.size());
}

TEST(LaunchRounds, JobsThatFillTheNodeShareARound) {
  const std::vector<int> ranks{4, 4, 2, 2, 8};
  const RoundPlan plan = packRounds(ranks, {8});
  EXPECT_EQ(plan.rounds, (Rounds{{{0, 0, 0}, {1, 0, 4}}, {{2, 0, 0}, {3, 0, 2}}, {{4, 0, 0}}}));
  EXPECT_TRUE(plan.unplaced.empty());
  expectSound(ranks, {8}, plan);
}

// Ranks sharing GPUs (--runtime gpu, local rank r on GPU r mod G): a round never puts two jobs on
// one GPU of a node, so a device-memory check reads one group's memory only.
TEST(LaunchRounds, JobsSharingGpusNeverShareOneInARound) {
  const std::vector<int> ranks{2, 2, 2, 2, 4, 8};
  // One GPU, 8 ranks: one job a round.
  const RoundPlan one = packRounds(ranks, {8}, {1});
  EXPECT_EQ(one.rounds,
            (Rounds{{{0, 0, 0}}, {{1, 0, 0}}, {{2, 0, 0}}, {{3, 0, 0}}, {{4, 0, 0}}, {{5, 0, 0}}}));
  expectSound(ranks, {8}, one);
  // Two GPUs, 8 ranks: a 2-rank job at ranks 0-1 takes both GPUs.
  const RoundPlan two = packRounds(ranks, {8}, {2});
  EXPECT_EQ(two.rounds.size(), 6u);
  expectSound(ranks, {8}, two);
  // Four GPUs: two 2-rank jobs (ranks 0-1 on GPUs 0-1, ranks 2-3 on GPUs 2-3), never a third.
  const RoundPlan four = packRounds(ranks, {8}, {4});
  EXPECT_EQ(four.rounds,
            (Rounds{{{0, 0, 0}, {1, 0, 2}}, {{2, 0, 0}, {3, 0, 2}}, {{4, 0, 0}}, {{5, 0, 0}}}));
  expectSound(ranks, {8}, four);
  // A GPU a rank (0: no limit) packs as before.
  EXPECT_EQ(packRounds(ranks, {8}, {0}).rounds, packRounds(ranks, {8}).rounds);
}

TEST(LaunchRounds, RankCountsThatDoNotDivideTheJobLeaveRanksIdle) {
  const std::vector<int> ranks{3, 3, 3};
  const RoundPlan plan = packRounds(ranks, {8});
  EXPECT_EQ(plan.rounds, (Rounds{{{0, 0, 0}, {1, 0, 3}}, {{2, 0, 0}}}));
  expectSound(ranks, {8}, plan);
}

TEST(LaunchRounds, FirstFitReachesPastAJobThatDoesNotFit) {
  const std::vector<int> ranks{5, 4, 3};
  const RoundPlan plan = packRounds(ranks, {8});
  EXPECT_EQ(plan.rounds, (Rounds{{{0, 0, 0}, {2, 0, 5}}, {{1, 0, 0}}}));
  expectSound(ranks, {8}, plan);
}

TEST(LaunchRounds, AJobLargerThanEveryNodeIsNeverPlaced) {
  const std::vector<int> ranks{2, 8, 4};
  const RoundPlan plan = packRounds(ranks, {4, 4});
  EXPECT_EQ(plan.rounds, (Rounds{{{0, 0, 0}, {2, 1, 0}}}));
  EXPECT_EQ(plan.unplaced, (std::vector<std::size_t>{1}));
  expectSound(ranks, {4, 4}, plan);
}

TEST(LaunchRounds, AJobNeedingMoreRanksThanTheWholeJobIsNeverPlaced) {
  const RoundPlan plan = packRounds({16, 16}, {8});
  EXPECT_TRUE(plan.rounds.empty());
  EXPECT_EQ(plan.unplaced, (std::vector<std::size_t>{0, 1}));
}

TEST(LaunchRounds, GroupsNeverCrossANodeAndEachNodeIsFilledInListOrder) {
  const std::vector<int> ranks{4, 3, 2, 1};
  const std::vector<int> nodes{3, 5};
  const RoundPlan plan = packRounds(ranks, nodes);
  // Node 0 (3 ranks) takes the first job that fits it (3); node 1 the 4 and then the 1.
  EXPECT_EQ(plan.rounds, (Rounds{{{1, 0, 0}, {0, 1, 0}, {3, 1, 4}}, {{2, 0, 0}}}));
  expectSound(ranks, nodes, plan);
}

TEST(LaunchRounds, NoNodesPlaceNothingAndNoJobsMakeNoRounds) {
  const RoundPlan none = packRounds({2, 1}, {});
  EXPECT_TRUE(none.rounds.empty());
  EXPECT_EQ(none.unplaced, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(packRounds({}, {8}).rounds.empty());
}

TEST(LaunchRounds, ManyShapesStaySound) {
  for (int node = 1; node <= 8; ++node) {
    for (int second = 0; second <= 3; ++second) {
      std::vector<int> nodes{node};
      if (second > 0) nodes.push_back(second);
      const std::vector<int> ranks{1, 2, 3, 4, 5, 6, 7, 8, 2, 1, 3};
      SCOPED_TRACE("nodes " + std::to_string(node) + "," + std::to_string(second));
      expectSound(ranks, nodes, packRounds(ranks, nodes));
    }
  }
}

}  // namespace
}  // namespace peerconf::harness
