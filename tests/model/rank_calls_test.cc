// model::rankCalls: one fault a call, the opens in rank order up to the first that fails, the
// closes of the mapped peers only, the handles received whatever comes after; each silence named
// with the fault that causes it.
#include "model/rank_calls.h"

#include <gtest/gtest.h>

#include <string>

#include "scenario/load.h"

namespace peerconf::harness::model {
namespace {

using Why = Silence::Why;

Scenario scenarioOf(const std::string& faults, int ranks = 4) {
  return scenario::parseScenario(
      "ranks: " + std::to_string(ranks) + "\nfaults:\n" + faults + "expect: {outcome: raise}\n",
      "calls.yaml");
}

CallsReached opensAll() {
  CallsReached reached;
  reached.receives = true;
  reached.opens = true;
  reached.releases = true;
  return reached;
}

// The core stops opening at its first failed open: rank 0's open of peer 3 never comes.
TEST(RankCalls, AnOpenAfterTheFirstFailedOpenNeverFires) {
  const Scenario scenario = scenarioOf(
      "  - {site: open, rank: 0, peer: 2}\n"
      "  - {site: open, rank: 0, peer: 3}\n"
      "  - {site: open, rank: 1, peer: 3}\n");
  const RankCalls zero = rankCalls(scenario, 0, opensAll());
  EXPECT_EQ(zero.failedOpen, 2);
  EXPECT_EQ(zero.failedBy, 0u);
  EXPECT_EQ(zero.mapped, std::vector<int>{1});
  ASSERT_NE(zero.silence(1), nullptr);
  EXPECT_EQ(zero.silence(1)->why, Why::kAfterFailed);
  EXPECT_EQ(zero.silence(1)->by, 0u);
  EXPECT_EQ(zero.silence(1)->peer, 2);
  EXPECT_FALSE(zero.silence(1)->maybe);
  EXPECT_EQ(zero.silence(0), nullptr);  // it fires
  // Rank 1's own open of peer 3 is its first failure: it fires.
  const RankCalls one = rankCalls(scenario, 1, opensAll());
  EXPECT_EQ(one.failedOpen, 3);
  EXPECT_TRUE(one.silent.empty());
}

// A damaged handle fails its peer's open too: the handle fault fires as the entries arrive, the
// open fault of a later peer never does, and neither do closes of peers never mapped.
TEST(RankCalls, ADamagedHandleFailsItsOpenAndNoCloseComesAfter) {
  const Scenario scenario = scenarioOf(
      "  - {site: handle-stale, rank: 0, peer: 1}\n"
      "  - {site: open, rank: 0, peer: 2}\n"
      "  - {site: handle-corrupt, rank: 0, peer: 3}\n"
      "  - {site: close, rank: 0, peer: 2}\n"
      "  - {site: close, rank: 0}\n");
  const RankCalls calls = rankCalls(scenario, 0, opensAll());
  EXPECT_EQ(calls.failedOpen, 1);
  EXPECT_EQ(calls.failedBy, 0u);
  EXPECT_TRUE(calls.mapped.empty());
  EXPECT_EQ(calls.silence(0), nullptr);
  EXPECT_EQ(calls.silence(2), nullptr);  // peer 3's handle is damaged as it arrives
  ASSERT_NE(calls.silence(1), nullptr);
  EXPECT_EQ(calls.silence(1)->why, Why::kAfterFailed);
  for (std::size_t close : {3u, 4u}) {
    ASSERT_NE(calls.silence(close), nullptr) << close;
    EXPECT_EQ(calls.silence(close)->why, Why::kUnmapped);
    EXPECT_EQ(calls.silence(close)->peer, 1);
  }
  // A rank that receives the entries but never opens (its exchange ended it): the handle faults
  // still fire, nothing of the opens is said.
  CallsReached received;
  received.receives = true;
  const RankCalls early = rankCalls(scenario, 0, received);
  EXPECT_TRUE(early.silent.empty());
  EXPECT_FALSE(early.failedOpen.has_value());
}

// One fault a call: the first of the file's order takes it; a foreign exception is thrown before
// the open faults are drawn; a chance fault drawn first leaves the next to the seed.
TEST(RankCalls, OneFaultACall) {
  const Scenario scenario = scenarioOf(
      "  - {site: alloc, rank: 0}\n"
      "  - {site: alloc, rank: 0, error: hipErrorInvalidValue}\n"
      "  - {site: open, rank: 1, peer: 0}\n"
      "  - {site: foreign-exception, rank: 1, call: open, peer: 0}\n"
      "  - {site: close, rank: 2, probability: 0.5}\n"
      "  - {site: close, rank: 2, peer: 0}\n");
  const RankCalls zero = rankCalls(scenario, 0, opensAll());
  ASSERT_NE(zero.silence(1), nullptr);
  EXPECT_EQ(zero.silence(1)->why, Why::kTaken);
  EXPECT_EQ(zero.silence(1)->by, 0u);

  const RankCalls one = rankCalls(scenario, 1, opensAll());
  ASSERT_NE(one.silence(2), nullptr);
  EXPECT_EQ(one.silence(2)->by, 3u);  // the foreign exception, though listed after it
  EXPECT_EQ(one.failedBy, 3u);

  const RankCalls two = rankCalls(scenario, 2, opensAll());
  ASSERT_NE(two.silence(5), nullptr);
  EXPECT_TRUE(two.silence(5)->maybe);
  EXPECT_EQ(two.silence(5)->by, 4u);
  EXPECT_EQ(two.silence(4), nullptr);  // a chance fault is never said to be silent by a draw
}

// A handle fault aimed only at a peer whose entry is a failure record has nothing to damage.
TEST(RankCalls, AFailureRecordHasNoHandleToDamage) {
  const Scenario scenario = scenarioOf(
      "  - {site: alloc, rank: 1}\n"
      "  - {site: handle-corrupt, rank: 0, peer: 1}\n"
      "  - {site: handle-stale, rank: 0}\n",
      3);
  CallsReached received;
  received.receives = true;
  received.failureRecords = {1};
  const RankCalls calls = rankCalls(scenario, 0, received);
  ASSERT_NE(calls.silence(1), nullptr);
  EXPECT_EQ(calls.silence(1)->why, Why::kNoHandle);
  EXPECT_EQ(calls.silence(1)->peer, 1);
  EXPECT_EQ(calls.silence(2), nullptr);  // peer 2 sent its handle
}

// Chance failures: the rules count only certain ones as firing; the oracle's draws make the
// ones they hold fire.
TEST(RankCalls, AChanceOpenFailureStopsTheOpensOnlyInADraw) {
  const Scenario scenario = scenarioOf(
      "  - {site: open, rank: 0, peer: 1, probability: 0.5}\n"
      "  - {site: open, rank: 0, peer: 2}\n",
      3);
  EXPECT_TRUE(rankCalls(scenario, 0, opensAll()).silent.empty());
  CallsReached drawn = opensAll();
  drawn.chanceFailuresFire = true;
  const RankCalls calls = rankCalls(scenario, 0, drawn);
  ASSERT_NE(calls.silence(1), nullptr);
  EXPECT_EQ(calls.silence(1)->why, Why::kAfterFailed);
}

}  // namespace
}  // namespace peerconf::harness::model
