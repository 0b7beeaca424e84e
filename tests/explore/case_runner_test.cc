// CaseRunner: one scenario through the thread launcher, the checkers and the judgement, with
// fresh or reused rank threads; and what a CaseRun says about its failures.
#include "explore/case_runner.h"

#include <gtest/gtest.h>

#include "scenario/load.h"

namespace peerconf::harness::explore {

using model::Outcome;
using model::productionCore;
using model::Property;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;
using scenario::parseScenario;
namespace {

const char* kOpenFails =
    "ranks: 2\nfaults: [{site: open, rank: 1, peer: 0}]\nexpect: {outcome: raise}\n";

TEST(CaseRunner, RunsJudgesAndKeepsTheRecord) {
  for (const bool reuse : {true, false}) {
    SCOPED_TRACE(reuse ? "reused threads" : "fresh threads");
    CaseRunner runner(productionCore(), reuse);
    const CaseRun run = runner.run(parseScenario(kOpenFails, "open.yaml"), 5);
    EXPECT_TRUE(run.passed()) << run.failureSummary();
    EXPECT_EQ(run.record.seed, 5u);
    ASSERT_EQ(run.record.ranks.size(), 2u);
    EXPECT_EQ(run.record.ranks[1].status, RankStatus::kRaised);
    EXPECT_FALSE(run.judgement.verdicts.empty());
    EXPECT_TRUE(run.unexpectedFailures().empty());
    EXPECT_EQ(run.failureSummary(), "");
  }
}

// A scenario whose expectation is wrong: the core raises where success was expected.
TEST(CaseRunner, AWrongExpectationFailsTheCase) {
  Scenario scenario = parseScenario(kOpenFails, "open.yaml");
  scenario.expect.outcome = Outcome::kSuccess;
  scenario.expect.messages.clear();
  CaseRunner runner(productionCore(), true);
  const CaseRun run = runner.run(scenario, 1);
  EXPECT_FALSE(run.passed());
  EXPECT_FALSE(run.unexpectedFailures().empty());
  EXPECT_NE(run.failureSummary().find("C1 uniform outcome"), std::string::npos)
      << run.failureSummary();
}

TEST(CaseRunner, LaunchAloneRunsNoChecker) {
  CaseRunner runner(productionCore(), false);
  const RunRecord record = runner.launch(parseScenario(kOpenFails, "open.yaml"), 3);
  EXPECT_EQ(record.launcher, "threads");
  EXPECT_EQ(record.ranks.size(), 2u);
}

TEST(CaseRun, UnexpectedFailuresLeaveOutExpectedOnes) {
  CaseRun run;
  Verdict control;
  control.status = Verdict::Status::kFail;
  control.expectedViolation = true;
  Verdict broken;
  broken.property = Property::kC3Cleanup;
  broken.status = Verdict::Status::kFail;
  Verdict missedControl;
  missedControl.expectedViolation = true;  // passed, but the scenario said it must fail
  run.judgement.verdicts = {control, broken, missedControl};
  const auto failures = run.unexpectedFailures();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0], &run.judgement.verdicts[1]);
  EXPECT_EQ(failures[1], &run.judgement.verdicts[2]);
  run.judgement.failures.push_back({});
  run.judgement.failures.back().title = "C3 cleanup";
  run.judgement.failures.back().summary = "never freed";
  run.judgement.failures.push_back({});
  run.judgement.failures.back().title = "C8 bounded";
  run.judgement.failures.back().summary = "too slow";
  EXPECT_EQ(run.failureSummary(), "C3 cleanup: never freed; C8 bounded: too slow");
}

}  // namespace
}  // namespace peerconf::harness::explore
