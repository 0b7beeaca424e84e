// Determinism checks: what is normalized away, what counts as a different result versus a
// different interleaving, and a death in thread mode (the rank pool held to runThreads:
// tests/launch/rank_pool_test.cc).
#include "explore/determinism.h"

#include <gtest/gtest.h>

#include "expectation/derive.h"
#include "explore/case_runner.h"
#include "launch/launcher.h"
#include "model/scenario.h"
#include "quick_scenario.h"

namespace peerconf::harness::explore {

using expectation::deriveExpectation;
using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
namespace {

Event event(EventKind kind, std::string what, int peer = -1, std::string detail = {}) {
  Event e;
  e.kind = kind;
  e.what = std::move(what);
  e.peer = peer;
  e.detail = std::move(detail);
  return e;
}

RunRecord twoRanks() {
  RunRecord record;
  for (int rank = 0; rank < 2; ++rank) {
    RankResult result;
    result.rank = rank;
    result.status = RankStatus::kOk;
    result.events = {event(EventKind::kCall, "allocUncached", -1, "bytes=4096"),
                     event(EventKind::kReturn, "allocUncached", -1, "ptr=0x7f0000001000"),
                     event(EventKind::kCall, "openMemHandle", 1 - rank),
                     event(EventKind::kReturn, "openMemHandle", 1 - rank, "ptr=0x7f0000002000")};
    record.ranks.push_back(result);
  }
  return record;
}

TEST(ExploreDeterminism, PointersAllocationsAndPidsAreNotDifferences) {
  RunRecord a = twoRanks();
  RunRecord b = twoRanks();
  b.ranks[0].events[1].detail = "ptr=0x7fab00003000";
  b.ranks[1].events[0].tNs = 123456;  // timestamps never count
  EXPECT_FALSE(compareRuns(a, b));
  a.ranks[1].status = RankStatus::kRaised;
  a.ranks[1].errorType = "HandshakeError";
  a.ranks[1].message = "open failed: allocation 12 of device 0 (pid 300) was freed";
  b.ranks[1].status = RankStatus::kRaised;
  b.ranks[1].errorType = "HandshakeError";
  b.ranks[1].message = "open failed: allocation 97 of device 0 (pid 301) was freed";
  EXPECT_FALSE(compareRuns(a, b));
  EXPECT_EQ(normalizedEvents(a.ranks[0])[1], "return allocUncached ptr=0x?");
}

// Simulated time: the seed draws pointers, numbers and times too, so a run again must be the same
// byte for byte; what the masked comparison lets pass is then the harness's difference.
TEST(ExploreDeterminism, OnSimulatedTimeAPointerOrATimeIsADifference) {
  const RunRecord a = twoRanks();
  EXPECT_FALSE(compareRuns(a, a, true));
  RunRecord pointer = twoRanks();
  pointer.ranks[0].events[1].detail = "ptr=0x7fab00003000";
  ASSERT_FALSE(compareRuns(a, pointer));
  const auto divergence = compareRuns(a, pointer, true);
  ASSERT_TRUE(divergence);
  EXPECT_EQ(divergence->level, Divergence::Level::kResult);
  EXPECT_NE(divergence->difference.find("not byte-identical: rank 0, event 1"), std::string::npos)
      << divergence->difference;
  EXPECT_NE(divergence->difference.find("0x7fab00003000"), std::string::npos);
  RunRecord time = twoRanks();
  time.ranks[1].events[0].tNs = 123456;
  ASSERT_TRUE(compareRuns(a, time, true));
  EXPECT_EQ(compareRuns(a, time, true)->level, Divergence::Level::kResult);
  RunRecord message = twoRanks();
  message.ranks[1].status = RankStatus::kRaised;
  RunRecord other = message;
  message.ranks[1].message = "allocation 12 of device 0 (this process) was freed";
  other.ranks[1].message = "allocation 13 of device 0 (this process) was freed";
  EXPECT_FALSE(compareRuns(message, other));
  ASSERT_TRUE(compareRuns(message, other, true));
  EXPECT_NE(compareRuns(message, other, true)->difference.find("allocation 13"), std::string::npos);
  // The ledger carries the machine's time: not compared.
  RunRecord ledger = twoRanks();
  ledger.ranks[0].ledger.push_back({});
  EXPECT_FALSE(compareRuns(a, ledger, true));
}

TEST(ExploreDeterminism, ADifferentEventOrderIsAnInterleaving) {
  const RunRecord a = twoRanks();
  RunRecord b = twoRanks();
  b.ranks[1].events[3] = event(EventKind::kThrow, "openMemHandle", 0, "stale handle");
  const auto divergence = compareRuns(a, b);
  ASSERT_TRUE(divergence);
  EXPECT_EQ(divergence->level, Divergence::Level::kInterleaving);
  EXPECT_NE(divergence->difference.find("rank 1, event 3"), std::string::npos)
      << divergence->difference;
}

TEST(ExploreDeterminism, ADifferentOutcomeOrFaultIsAResultDifference) {
  const RunRecord a = twoRanks();
  RunRecord b = twoRanks();
  b.ranks[0].status = RankStatus::kRaised;
  auto divergence = compareRuns(a, b);
  ASSERT_TRUE(divergence);
  EXPECT_EQ(divergence->level, Divergence::Level::kResult);

  b = twoRanks();
  b.ranks[1].events.push_back(event(EventKind::kFault, "close", 0, "closeMemHandle fails"));
  divergence = compareRuns(a, b);
  ASSERT_TRUE(divergence);
  EXPECT_EQ(divergence->level, Divergence::Level::kResult);
}

// testing::quickScenario with its expectation derived.
Scenario quick(int ranks, std::vector<Fault> faults) {
  Scenario scenario = testing::quickScenario(ranks, std::move(faults));
  scenario.expect = deriveExpectation(scenario);
  return scenario;
}

Fault fault(FaultSite site, int rank, std::optional<int> peer = std::nullopt,
            Point at = Point::kBeforeConstruct) {
  return testing::quickFault(site, rank, peer, at);
}

// A death in thread mode stops the rank where it is: nothing of it unwinds through the core
// while the others still run, so the survivors' runs do not depend on when it dies.
TEST(ExploreDeterminism, ADeathAtTheAgreementRunsTheSameEveryTime) {
  const Scenario scenario = quick(4, {fault(FaultSite::kDeath, 0, std::nullopt, Point::kAgree)});
  CaseRunner runner;
  const CaseRun first = runner.run(scenario, scenario.seed);
  ASSERT_TRUE(first.passed()) << first.failureSummary();
  for (int i = 0; i < 5; ++i) {
    const RunRecord again = runner.launch(scenario, scenario.seed);
    const auto divergence = compareRuns(first.record, again);
    EXPECT_FALSE(divergence) << divergence->difference;
  }
}

}  // namespace
}  // namespace peerconf::harness::explore
