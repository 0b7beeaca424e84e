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
