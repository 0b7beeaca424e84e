// Scenario (model/scenario.h): the names of its values, the error a file that does not validate
// raises (with and without a place), its fault plan drawn from a seed, and the run's bound.
#include "model/scenario.h"

#include <gtest/gtest.h>

namespace peerconf::harness {

using model::Fault;
using model::faultPlan;
using model::FaultSite;
using model::hipErrorName;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::plannedBound;
using model::Point;
using model::Scenario;
using model::ScenarioError;
using model::toString;
namespace {

using namespace std::chrono_literals;

TEST(ScenarioNames, ToString) {
  EXPECT_EQ(toString(FaultSite::kGetHandle), "get-handle");
  EXPECT_EQ(toString(FaultSite::kHandleCorrupt), "handle-corrupt");
  EXPECT_EQ(toString(FaultSite::kAllocTable), "alloc-table");
  EXPECT_EQ(toString(FaultSite::kNotReady), "not-ready");
  EXPECT_EQ(toString(FaultSite::kCopyTable), "copy-table");
  EXPECT_EQ(toString(Point::kBeforeConstruct), "before-construct");
  EXPECT_EQ(toString(Outcome::kReported), "reported");
  EXPECT_EQ(toString(MessageKind::kAnother), "another");
  EXPECT_EQ(toString(MessageExpectation{MessageKind::kText, "oom"}), "text \"oom\"");
  EXPECT_EQ(toString(MessageExpectation{MessageKind::kGroup, "ignored"}), "group");
  EXPECT_EQ(hipErrorName(205), "hipErrorMapFailed");
  EXPECT_EQ(hipErrorName(42), "hipError(42)");
}

TEST(ScenarioErrorFormat, WithAndWithoutMark) {
  EXPECT_STREQ(ScenarioError("f.yaml", {3, 7}, "bad").what(), "f.yaml:3:7: bad");
  EXPECT_STREQ(ScenarioError("f.yaml", {}, "gone").what(), "f.yaml: gone");
  EXPECT_EQ(ScenarioError("f.yaml", {3, 7}, "bad").message(), "bad");
  const ScenarioError e("f.yaml", {3, 7}, "bad");
  EXPECT_EQ(e.file(), "f.yaml");
  EXPECT_EQ(e.mark().line, 3);
  EXPECT_EQ(e.mark().column, 7);
}

// The decorators' plan holds the scenario's faults and draws from its seed, or the one given.
TEST(ScenarioFaultPlan, TakesTheScenariosFaultsAndSeedOrTheGivenOne) {
  Scenario s;
  Fault chance;
  chance.site = FaultSite::kClose;
  chance.ranks = {0};
  chance.probability = 0.5;
  s.faults = {chance};
  s.seed = 11;
  const faults::FaultPlan plan = faultPlan(s);
  EXPECT_EQ(plan.seed(), 11u);
  ASSERT_EQ(plan.faults().size(), 1u);
  EXPECT_EQ(plan.faults()[0].site, FaultSite::kClose);
  EXPECT_EQ(plan.faults()[0].probability, 0.5);
  EXPECT_EQ(faultPlan(s, 12).seed(), 12u);
}

// A late delay against the peers' wait: at most half the wait is on time, 1.5 waits or more a
// certain timeout, between the machine decides (its edges on their side).
TEST(SlowRank, TheDelayAgainstTheWaitDecidesTheTimeout) {
  using model::judgeLateDelay;
  using model::LateDelay;
  EXPECT_EQ(judgeLateDelay(100ms, 200ms), LateDelay::kOnTime);
  EXPECT_EQ(judgeLateDelay(101ms, 200ms), LateDelay::kUndecidable);
  EXPECT_EQ(judgeLateDelay(200ms, 200ms), LateDelay::kUndecidable);
  EXPECT_EQ(judgeLateDelay(299ms, 200ms), LateDelay::kUndecidable);
  EXPECT_EQ(judgeLateDelay(300ms, 200ms), LateDelay::kTimesOut);
}

// The planned timeout is the first step a certain delay fires at, with every rank late past the
// wait there; a delay on time, a step the run never reaches and a later step do not count; the
// wait is dataplane.timeout, else the deadline.
TEST(SlowRank, TheFirstCertainDelayPlansTheTimeout) {
  Scenario scenario;
  scenario.ranks = 4;
  scenario.deadline = 2000ms;
  EXPECT_FALSE(model::certainDataPlaneTimeout(scenario).has_value());
  model::Spec& spec = scenario.dataPlane.emplace();
  spec.steps = 50;
  spec.timeout = 200ms;
  spec.late.push_back({0, model::Role::kWriter, 0, {5}, 100ms});       // on time
  spec.late.push_back({1, model::Role::kWriter, 0, {30, 12}, 500ms});  // first at 12
  spec.late.push_back({2, model::Role::kReader, 12, {}, 1s});          // every 12th
  spec.late.push_back({3, model::Role::kWriter, 0, {40}, 500ms});      // later
  auto slow = model::certainDataPlaneTimeout(scenario);
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->step, 12u);
  EXPECT_EQ(slow->ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(slow->lates, (std::vector<std::size_t>{1, 2}));
  EXPECT_NE(model::slowStepText(scenario, *slow).find("rank(s) 1, 2 late by 1000 ms at step 12"),
            std::string::npos);
  // Without dataplane.timeout the wait is the 2 s deadline: no delay reaches 3 s.
  spec.timeout.reset();
  EXPECT_FALSE(model::certainDataPlaneTimeout(scenario).has_value());
}

TEST(PlannedBound, DerivedIsTwoDeadlinesPlusDelaysPlusSlack) {
  Scenario scenario;
  scenario.deadline = 1500ms;
  EXPECT_EQ(plannedBound(scenario), 5000ms);
  Fault delay;
  delay.site = FaultSite::kDelay;
  delay.ranks = {0, 1};
  delay.delay = 300ms;
  scenario.faults = {delay, delay};
  EXPECT_EQ(plannedBound(scenario), 5600ms);
  scenario.expect.within = 750ms;
  EXPECT_EQ(plannedBound(scenario), 750ms);
}

}  // namespace
}  // namespace peerconf::harness
