// Deaths, hangs and exits `at: dataplane` (scenarios/README.md "Data plane"): the suite's files
// pass on threads (the stopped rank reported as its site says, the survivors' data plane naming
// it), and the checks fail for the right reason where the stopped rank is not reported or the
// survivors' report does not name it (negative controls on real runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "judged_run.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness {

using launch::ClockMode;
using launch::LaunchOptions;
using launch::runThreads;
using model::DataplaneOutcome;
using model::MessageExpectation;
using model::MessageKind;
using model::Property;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;
using scenario::loadScenario;

namespace {

using StopChecked = testing::JudgedRun;

StopChecked run(const Scenario& scenario) {
  LaunchOptions options;
  options.clock = ClockMode::kSim;
  return testing::runAndJudge(scenario, options);
}

Scenario load(const std::string& file) {
  return loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/" + file);
}

bool anyFinding(const Verdict& verdict, const std::string& text) {
  if (verdict.summary.find(text) != std::string::npos) return true;
  return std::any_of(
      verdict.findings.begin(), verdict.findings.end(),
      [&](const model::Finding& f) { return f.text.find(text) != std::string::npos; });
}

TEST(DataplaneFaultsTest, AHangAtAStepIsReportedHungAndTheSurvivorsNameIt) {
  const StopChecked checked = run(load("dataplane/hang-at-step.yaml"));
  EXPECT_TRUE(checked.judgement.passed) << checked.story();
  for (const auto& r : checked.record.ranks) {
    if (r.rank == 2) {
      EXPECT_EQ(r.status, RankStatus::kHung) << checked.story();
      ASSERT_TRUE(r.dataPlane.has_value());
      EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kStopped);
      EXPECT_EQ(r.dataPlane->stepsDone, 100u);
      continue;
    }
    EXPECT_EQ(r.status, RankStatus::kOk) << checked.story();
    ASSERT_TRUE(r.dataPlane.has_value());
    EXPECT_TRUE(r.dataPlane->outcome == DataplaneOutcome::kTimeout ||
                r.dataPlane->outcome == DataplaneOutcome::kAborted)
        << r.dataPlane->detail;
    EXPECT_NE(r.dataPlane->detail.find("waiting for rank 2's pair"), std::string::npos)
        << r.dataPlane->detail;
  }
}

TEST(DataplaneFaultsTest, AnExitAtAStepIsReportedExitedWithItsCode) {
  const StopChecked checked = run(load("dataplane/exit-at-step.yaml"));
  EXPECT_TRUE(checked.judgement.passed) << checked.story();
  ASSERT_EQ(checked.record.ranks.size(), 2u);
  EXPECT_EQ(checked.record.ranks[0].status, RankStatus::kExited);
  EXPECT_NE(checked.record.ranks[0].message.find("exited with code 3 at dataplane"),
            std::string::npos)
      << checked.record.ranks[0].message;
}

// Negative control: the same file with the rank stopped by `dataplane.stop` instead (it ends
// normally, nobody reports it) fails C8 on the rank the file expects reported.
TEST(DataplaneFaultsTest, AStoppedRankNotReportedFailsC8) {
  Scenario scenario = load("dataplane/hang-at-step.yaml");
  scenario.faults.clear();
  scenario.dataPlane->stop = model::Stop{2, 100};
  const StopChecked checked = run(scenario);
  EXPECT_FALSE(checked.judgement.passed) << checked.story();
  const Verdict& c8 = checked.verdict(Property::kC8Bounded);
  EXPECT_EQ(c8.status, Verdict::Status::kFail) << checked.story();
  EXPECT_TRUE(anyFinding(c8, "expected to die or hang and be reported")) << checked.story();
}

// Negative control: survivors expected to name another rank than the one that stopped fail C2,
// with what their data plane reported.
TEST(DataplaneFaultsTest, ASurvivorReportNamingTheWrongRankFailsC2) {
  Scenario scenario = load("dataplane/hang-at-step.yaml");
  for (auto& [rank, message] : scenario.expect.messages) {
    message = MessageExpectation{MessageKind::kText, "waiting for rank 3's pair"};
  }
  const StopChecked checked = run(scenario);
  EXPECT_FALSE(checked.judgement.passed) << checked.story();
  const Verdict& c2 = checked.verdict(Property::kC2Message);
  EXPECT_EQ(c2.status, Verdict::Status::kFail) << checked.story();
  EXPECT_TRUE(anyFinding(c2, "expected its data plane's report to contain")) << checked.story();
  EXPECT_EQ(checked.verdict(Property::kC8Bounded).status, Verdict::Status::kPass)
      << checked.story();
}

}  // namespace
}  // namespace peerconf::harness
