// The rank pool (rank_pool.h): the thread launcher with its threads kept between runs. It runs
// exactly what runThreads runs (the same results, faults and harness errors), and grows to the
// largest rank count it has seen.
#include "launch/rank_pool.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "explore/determinism.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "quick_scenario.h"

namespace peerconf::harness::explore {

using launch::ClockMode;
using launch::LaunchOptions;
using launch::RankPool;
using launch::runThreads;
using model::Fault;
using model::FaultSite;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
namespace {

Scenario quick(int ranks, std::vector<Fault> faults) {
  return testing::quickScenario(ranks, std::move(faults));
}

Fault fault(FaultSite site, int rank, std::optional<int> peer = std::nullopt,
            Point at = Point::kBeforeConstruct) {
  return testing::quickFault(site, rank, peer, at);
}

// The pool runs exactly what runThreads runs: the same results, faults and verdicts. On simulated
// time, so that a 200 ms deadline cannot expire on a loaded box in one run and not the other.
TEST(RankPool, MatchesRunThreads) {
  const std::vector<Scenario> scenarios = {
      quick(4, {}),
      quick(4, {fault(FaultSite::kOpen, 1, 0)}),
      quick(3, {fault(FaultSite::kHandleStale, 0, 2), fault(FaultSite::kClose, 1)}),
      quick(2, {fault(FaultSite::kFree, 1)}),
      quick(3, {fault(FaultSite::kCopyTable, 2)}),
      quick(3, {fault(FaultSite::kHang, 2, std::nullopt, Point::kClose)}),
      quick(4, {fault(FaultSite::kDeath, 3, std::nullopt, Point::kAgree)}),
      quick(1, {fault(FaultSite::kAlloc, 0)}),
  };
  LaunchOptions options;
  options.clock = ClockMode::kSim;
  RankPool pool;
  for (const Scenario& scenario : scenarios) {
    SCOPED_TRACE(std::to_string(scenario.ranks) + " ranks, " +
                 std::to_string(scenario.faults.size()) + " fault(s)");
    const RunRecord threads = runThreads(scenario, scenario.seed, options);
    const RunRecord pooled = pool.run(scenario, scenario.seed, options);
    EXPECT_EQ(normalizedResults(threads), normalizedResults(pooled));
    EXPECT_EQ(threads.firedSites, pooled.firedSites);
    EXPECT_EQ(threads.harnessErrors, pooled.harnessErrors);
    for (std::size_t rank = 0; rank < threads.ranks.size(); ++rank) {
      EXPECT_EQ(threads.ranks[rank].ledger.size(), pooled.ranks[rank].ledger.size()) << rank;
    }
  }
  EXPECT_EQ(pool.threads(), 4);
}

TEST(RankPool, GrowsToTheLargestRunAndKeepsItsThreads) {
  RankPool pool;
  EXPECT_EQ(pool.threads(), 0);
  EXPECT_EQ(pool.run(quick(2, {}), 1, LaunchOptions{}).ranks.size(), 2u);
  EXPECT_EQ(pool.threads(), 2);
  const RunRecord three = pool.run(quick(3, {}), 1, LaunchOptions{});
  EXPECT_EQ(pool.threads(), 3);
  ASSERT_EQ(three.ranks.size(), 3u);
  for (const RankResult& rank : three.ranks) EXPECT_EQ(rank.status, RankStatus::kOk);
  EXPECT_EQ(pool.run(quick(1, {}), 1, LaunchOptions{}).ranks.size(), 1u);
  EXPECT_EQ(pool.threads(), 3);  // a smaller run uses the kept threads, none is dropped
}

}  // namespace
}  // namespace peerconf::harness::explore
