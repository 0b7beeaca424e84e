// The steps a data plane names and the cap that never goes below them (model/step_cap.h): each kind
// of named step (a stop, late steps and `every`, a stop at `at: dataplane`, the epoch wrap) with
// the steps it needs; a plain cap raised to them or a skip that names the step; the time-sliced
// cap sized from the rate, its scaling by the ranks sharing a GPU, the bound's room and the target.
#include "model/step_cap.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "scenario/load.h"

namespace peerconf::harness::model {
namespace {

using scenario::parseScenario;
using ::testing::HasSubstr;
using Result = StepCap::Result;

// A scenario of `ranks` ranks and deadline `deadline` whose data plane has `dataplane` (the keys
// inside `dataplane:`, flow style) and `faults` (a YAML list, or empty).
Scenario plane(int ranks, const std::string& deadline, const std::string& dataplane,
               const std::string& faults = "", const std::string& expect = "{outcome: success}") {
  std::string yaml = "ranks: " + std::to_string(ranks) + "\nbuffer: 64KiB\ndeadline: " + deadline +
                     "\ndataplane: {layout: reference, workload: exchange, " + dataplane + "}\n";
  if (!faults.empty()) yaml += "faults: " + faults + "\n";
  yaml += "expect: " + expect + "\n";
  return parseScenario(yaml, "inline.yaml");
}

StepCapOptions stepCap(std::uint64_t steps) {
  StepCapOptions options;
  options.maxSteps = steps;
  return options;
}

StepCapOptions sliced(double rate, int gpus = 1, int targetMs = 0) {
  StepCapOptions options;
  options.slicedRate = rate;
  options.slicedGpus = gpus;
  options.slicedTarget = std::chrono::milliseconds(targetMs);
  return options;
}

TEST(NamedSteps, EachKindWithWhatItNeeds) {
  const Scenario s = plane(3, "2s",
                           "steps: 2000, depth: 4, start_epoch: 4294966996, timeout: 500ms, "
                           "stop: {rank: 2, step: 700}, late: [{rank: 1, role: writer, steps: "
                           "[299, 301], delay: 1ms}, {rank: 0, role: reader, every: 50, delay: "
                           "1ms}]");
  const std::vector<NamedStep> named = namedDataPlaneSteps(s);
  ASSERT_EQ(named.size(), 5u);
  EXPECT_EQ(named[0].step, 700u);  // a stop: the step itself
  EXPECT_EQ(named[0].needs, 701u);
  EXPECT_THAT(named[0].what, HasSubstr("rank 2's stop at step 700"));
  EXPECT_EQ(named[1].needs, 299u + 4 + 1);  // a late step: and a turn of the slots after it
  EXPECT_THAT(named[1].what, HasSubstr("rank 1's late writer at step 299"));
  EXPECT_EQ(named[2].needs, 301u + 4 + 1);
  EXPECT_EQ(named[3].step, 50u);  // every 50: first late at step 50
  EXPECT_THAT(named[3].what, HasSubstr("every 50 steps"));
  EXPECT_EQ(named[4].step, 300u);  // 2^32 - 4294966996
  EXPECT_EQ(named[4].needs, 305u);
  EXPECT_THAT(named[4].what, HasSubstr("the epoch wrap at step 300"));
  EXPECT_EQ(stepsNeeded(s), 701u);
}

TEST(NamedSteps, AStopAtTheDataPlaneAndAWrapPastTheRun) {
  const Scenario s = plane(3, "2s", "steps: 1000, start_epoch: 4294960000, timeout: 500ms",
                           "[{site: death, rank: 1, at: dataplane, step: 300}]",
                           "{outcome: reported, reported: [1]}");
  const std::vector<NamedStep> named = namedDataPlaneSteps(s);
  ASSERT_EQ(named.size(), 1u) << "a wrap after the last step is not named";
  EXPECT_EQ(named[0].needs, 301u);
  EXPECT_THAT(named[0].what, HasSubstr("death at data-plane step 300"));
}

TEST(NamedSteps, NoneNeedsOneTurnOfTheSlotsWithinTheFile) {
  EXPECT_EQ(stepsNeeded(plane(2, "1s", "steps: 1000, depth: 8")), 9u);
  EXPECT_EQ(stepsNeeded(plane(2, "1s", "steps: 5, depth: 8")), 5u);
  EXPECT_EQ(stepsNeeded(parseScenario("ranks: 2\nexpect: {outcome: success}\n", "x.yaml")), 0u);
}

TEST(StepCapFor, APlainCapLowersLongRunsOnly) {
  const Scenario s = plane(2, "1s", "steps: 1000");
  const StepCap capped = stepCapFor(s, stepCap(100));
  EXPECT_EQ(capped.result, Result::kCapped);
  EXPECT_EQ(capped.steps, 100u);
  EXPECT_EQ(capped.fileSteps, 1000u);
  EXPECT_THAT(capped.why, HasSubstr("1000 -> 100"));
  EXPECT_EQ(stepCapFor(s, stepCap(5000)).result, Result::kUnchanged);
  EXPECT_EQ(stepCapFor(s, StepCapOptions{}).result, Result::kUnchanged);
  EXPECT_EQ(
      stepCapFor(parseScenario("ranks: 2\nexpect: {outcome: success}\n", "x.yaml"), stepCap(10))
          .result,
      Result::kUnchanged);
}

// Issue 39: a 50-step cap passed `dataplane/stop-mid-run.yaml` (stop at step 100) silently.
TEST(StepCapFor, NeverBelowANamedStepSkipsInstead) {
  const Scenario s = plane(4, "2s", "steps: 2000, timeout: 500ms, stop: {rank: 2, step: 100}");
  const StepCap skipped = stepCapFor(s, stepCap(50));
  EXPECT_EQ(skipped.result, Result::kSkipped);
  EXPECT_THAT(skipped.why, HasSubstr("rank 2's stop at step 100"));
  EXPECT_THAT(skipped.why, HasSubstr("needs 101 data-plane steps, above the step cap of 50"));
  EXPECT_EQ(stepCapFor(s, stepCap(100)).result, Result::kSkipped) << "step 100 is the 101st";
  const StepCap exact = stepCapFor(s, stepCap(101));
  EXPECT_EQ(exact.result, Result::kCapped);
  EXPECT_EQ(exact.steps, 101u);
}

TEST(StepCapFor, ALateStepAndTheWrapNeedATurnOfTheSlotsAfterThem) {
  const Scenario late = plane(
      2, "2s", "steps: 1000, depth: 4, late: [{rank: 1, role: reader, steps: [299], delay: 1ms}]");
  EXPECT_EQ(stepCapFor(late, stepCap(303)).result, Result::kSkipped);
  EXPECT_EQ(stepCapFor(late, stepCap(304)).steps, 304u);
  const Scenario wrap = plane(2, "2s", "steps: 1000, depth: 2, start_epoch: 4294967196");
  const StepCap cap = stepCapFor(wrap, stepCap(102));
  EXPECT_EQ(cap.result, Result::kSkipped);
  EXPECT_THAT(cap.why, HasSubstr("the epoch wrap at step 100"));
  EXPECT_EQ(stepCapFor(wrap, stepCap(103)).steps, 103u);
}

TEST(SlicedStepRate, ScalesWithTheSquareOfTheRanksSharingAGpu) {
  EXPECT_DOUBLE_EQ(slicedStepRate(2, sliced(445)), 445.0);
  EXPECT_DOUBLE_EQ(slicedStepRate(4, sliced(445)), 445.0 / 4);
  EXPECT_DOUBLE_EQ(slicedStepRate(8, sliced(445)), 445.0 / 16);
  EXPECT_DOUBLE_EQ(slicedStepRate(4, sliced(445, 2)), 445.0) << "2 ranks a GPU";
  EXPECT_DOUBLE_EQ(slicedStepRate(2, sliced(445, 2)), 0.0) << "a GPU a rank: not time-sliced";
  EXPECT_DOUBLE_EQ(slicedStepRate(2, StepCapOptions{}), 0.0);
}

TEST(StepCapFor, TimeSlicedFitsThreeQuartersOfTheBound) {
  // deadline 5 s: bound 12 s, room 0.75 x (12 - 2) = 7.5 s at 445 a second.
  const Scenario s = plane(2, "5s", "steps: 100000, timeout: 2s");
  const StepCap cap = stepCapFor(s, sliced(445));
  EXPECT_EQ(cap.result, Result::kCapped);
  EXPECT_EQ(cap.steps, 3337u);
  EXPECT_THAT(cap.why, HasSubstr("2 ranks time-sliced on 1 GPU at about 445 steps a second"));
  // Aiming at 2 s: 890 steps.
  EXPECT_EQ(stepCapFor(s, sliced(445, 1, 2000)).steps, 890u);
  // Its own GPU a rank: the rate does not apply.
  EXPECT_EQ(stepCapFor(s, sliced(445, 2, 2000)).result, Result::kUnchanged);
}

TEST(StepCapFor, TimeSlicedRaisesTheTargetToTheNamedStepWhileTheBoundHoldsIt) {
  // gpu/dataplane/stop-mid-run: stop at 1000, timeout 500 ms, deadline 5 s; room (7.5 - 0.5) s.
  const Scenario s = plane(2, "5s", "steps: 100000, timeout: 500ms, stop: {rank: 1, step: 1000}");
  const StepCap cap = stepCapFor(s, sliced(445, 1, 2000));
  EXPECT_EQ(cap.result, Result::kCapped);
  EXPECT_EQ(cap.steps, 1001u);
  EXPECT_THAT(cap.why, HasSubstr("raised to the 1001 that rank 1's stop at step 1000"));
}

TEST(StepCapFor, TimeSlicedSkipsWhatItsBoundCannotHold) {
  // 3 ranks on one GPU: 445 x (2/3)^2 = 198 a second; deadline 2 s: room 0.75 x 4 - 0.5 = 2.5 s,
  // 494 steps: a death at step 1000 cannot be reached.
  const Scenario far = plane(3, "2s", "steps: 2000, timeout: 500ms",
                             "[{site: death, rank: 1, at: dataplane, step: 1000}]",
                             "{outcome: reported, reported: [1]}");
  const StepCap cap = stepCapFor(far, sliced(445, 1, 2000));
  EXPECT_EQ(cap.result, Result::kSkipped);
  EXPECT_THAT(cap.why, HasSubstr("death at data-plane step 1000"));
  EXPECT_THAT(cap.why, HasSubstr("3 ranks time-sliced on 1 GPU (about 198 steps a second)"));
  // dataplane/death-at-step (step 300) fits.
  const Scenario near = plane(3, "2s", "steps: 1000, timeout: 500ms",
                              "[{site: death, rank: 1, at: dataplane, step: 300}]",
                              "{outcome: reported, reported: [1]}");
  const StepCap fits = stepCapFor(near, sliced(445, 1, 1000));
  EXPECT_EQ(fits.result, Result::kCapped);
  EXPECT_EQ(fits.steps, 301u) << "the 1 s target (198 steps) raised to the death's step";
}

TEST(StepCapFor, TimeSlicedCountsTwoCollectivesAStepUnderTwoInFlight) {
  // As TimeSlicedFitsThreeQuartersOfTheBound, each step two all-reduces: half the steps fit.
  const Scenario s = parseScenario(
      "ranks: 2\nbuffer: 64KiB\ndeadline: 5s\ndataplane: {layout: reference, workload: "
      "two-in-flight, steps: 100000, timeout: 2s}\nexpect: {outcome: success}\n",
      "inline.yaml");
  const StepCap cap = stepCapFor(s, sliced(445));
  EXPECT_EQ(cap.result, Result::kCapped);
  EXPECT_EQ(cap.steps, 1668u);
  EXPECT_THAT(cap.why, HasSubstr("(two collectives a step)"));
}

TEST(StepCapFor, LateDelaysComeOffTheRoom) {
  // Every 10 steps 10 ms late: each step costs 1/445 s + 1 ms.
  const Scenario s =
      plane(2, "5s", "steps: 100000, late: [{rank: 1, role: reader, every: 10, delay: 10ms}]");
  const StepCap cap = stepCapFor(s, sliced(445));
  EXPECT_EQ(cap.result, Result::kCapped);
  EXPECT_EQ(cap.steps, static_cast<std::uint64_t>(7.5 / (1.0 / 445 + 0.001)));
}

TEST(StepCapFor, BothCapsTheLesserHolds) {
  const Scenario s = plane(2, "5s", "steps: 100000, timeout: 2s");
  StepCapOptions both = sliced(445);
  both.maxSteps = 500;
  EXPECT_EQ(stepCapFor(s, both).steps, 500u);
  both.maxSteps = 50000;
  EXPECT_EQ(stepCapFor(s, both).steps, 3337u);
}

}  // namespace
}  // namespace peerconf::harness::model
