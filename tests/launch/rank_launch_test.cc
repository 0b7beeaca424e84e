// One rank's launch (rank_launch.h): the body on a one-rank thread world over the mocked runtime
// (its result, ledger, events and fired sites), a setup failure that makes the rank missing, the
// new record and the missing rank, and the wire format of a rank's outcome between processes.
#include "launch/rank_launch.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "mock_hip/control.h"
#include "scenario/load.h"
#include "thread/thread_group.h"

namespace peerconf::harness {

using launch::LaunchOptions;
using launch::launchRank;
using launch::missingRank;
using launch::newRecord;
using launch::RankGroups;
using launch::RankLaunch;
using launch::RankOutcome;
using launch::rankPayload;
using launch::readRankPayload;
using launch::Runtime;
using model::EventLog;
using model::faultPlan;
using model::FaultSite;
using model::LedgerRecord;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using scenario::parseScenario;
namespace {

// No planted death or hang here: a control that is called is a failure.
class NoStops : public faults::RankControl {
 public:
  [[noreturn]] void die(int /*rank*/, Point /*at*/) override { throw std::logic_error("die"); }
  void hang(int /*rank*/, Point /*at*/) override { throw std::logic_error("hang"); }
};

// Rank 0 of a one-rank `scenario` through launchRank, on thread groups.
RankOutcome launchOne(const Scenario& scenario) {
  mock_hip::resetAll();
  const faults::FaultPlan plan = faultPlan(scenario, scenario.seed);
  const LaunchOptions options;
  NoStops control;
  auto world = std::make_shared<thread::ThreadWorld>(1);
  auto harnessWorld = std::make_shared<thread::ThreadWorld>(1);
  std::optional<thread::ThreadGroup> core;
  std::optional<thread::ThreadGroup> harness;
  RankLaunch launch;
  launch.scenario = &scenario;
  launch.plan = &plan;
  launch.options = &options;
  launch.control = &control;
  launch.groups = [&] {
    core.emplace(world, 0);
    harness.emplace(harnessWorld, 0);
    return RankGroups{&*core, &*harness};
  };
  EventLog log(0, EventLog::Clock::now());
  RankOutcome outcome = launchRank(launch, log);
  mock_hip::resetAll();
  return outcome;
}

bool hasOp(const RankResult& result, const std::string& op) {
  for (const LedgerRecord& r : result.ledger) {
    if (r.op == op) return true;
  }
  return false;
}

TEST(LaunchRank, ARankRunsThroughTheStackAndKeepsItsLedgerAndEvents) {
  const RankOutcome outcome =
      launchOne(parseScenario("ranks: 1\nexpect: {outcome: success}\n", "one.yaml"));
  EXPECT_EQ(outcome.result.status, RankStatus::kOk) << outcome.result.message;
  EXPECT_TRUE(outcome.result.ledgerAvailable);
  EXPECT_TRUE(hasOp(outcome.result, "alloc"));
  EXPECT_TRUE(hasOp(outcome.result, "free"));
  EXPECT_FALSE(outcome.result.events.empty());
  EXPECT_TRUE(outcome.fired.empty());
}

TEST(LaunchRank, APlannedFaultFiresThroughTheDecoratedBackend) {
  const RankOutcome outcome =
      launchOne(parseScenario("ranks: 1\nfaults: [{site: alloc, rank: 0}]\n"
                              "expect: {outcome: raise, messages: {0: {text: alloc}}}\n",
                              "alloc.yaml"));
  EXPECT_EQ(outcome.result.status, RankStatus::kRaised);
  EXPECT_EQ(outcome.fired, (std::set<FaultSite>{FaultSite::kAlloc}));
}

TEST(LaunchRank, ASetupFailureMakesTheRankMissingWithTheReason) {
  const Scenario scenario = parseScenario("ranks: 1\nexpect: {outcome: success}\n", "one.yaml");
  const faults::FaultPlan plan = faultPlan(scenario, scenario.seed);
  const LaunchOptions options;
  NoStops control;
  RankLaunch launch;
  launch.scenario = &scenario;
  launch.plan = &plan;
  launch.options = &options;
  launch.control = &control;
  launch.groups = []() -> RankGroups { throw std::runtime_error("no communicator"); };
  EventLog log(0, EventLog::Clock::now());
  const RankOutcome outcome = launchRank(launch, log);
  EXPECT_EQ(outcome.result.status, RankStatus::kMissing);
  EXPECT_EQ(outcome.result.message, "harness could not run this rank: no communicator");
  EXPECT_TRUE(outcome.result.ledgerAvailable);
  EXPECT_TRUE(outcome.result.ledger.empty());
}

TEST(RankLaunchRecords, ANewRecordAndAMissingRank) {
  const Scenario scenario = parseScenario("ranks: 2\nexpect: {outcome: success}\n", "two.yaml");
  const RunRecord record = newRecord(scenario, 42, "mpi", Runtime::kGpu);
  EXPECT_EQ(record.scenario.ranks, 2);
  EXPECT_EQ(record.seed, 42u);
  EXPECT_EQ(record.launcher, "mpi");
  EXPECT_EQ(record.runtime, "gpu");
  EXPECT_TRUE(record.ranks.empty());
  const RankResult missing = missingRank(3);
  EXPECT_EQ(missing.rank, 3);
  EXPECT_EQ(missing.status, RankStatus::kMissing);
}

TEST(RankPayload, AnOutcomeReadsBackWithItsFiredSites) {
  RankOutcome outcome;
  outcome.result.rank = 2;
  outcome.result.status = RankStatus::kRaised;
  outcome.result.message = "open failed";
  outcome.fired = {FaultSite::kOpen, FaultSite::kClose};
  std::set<std::string> fired{"delay"};
  const RankResult back = readRankPayload(rankPayload(outcome).dump(), fired);
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.status, RankStatus::kRaised);
  EXPECT_EQ(back.message, "open failed");
  EXPECT_EQ(fired, (std::set<std::string>{"close", "delay", "open"}));
  std::set<std::string> none;
  EXPECT_ANY_THROW(readRankPayload("{\"rank\": 1}", none));
  EXPECT_ANY_THROW(readRankPayload("not json", none));
}

}  // namespace
}  // namespace peerconf::harness
