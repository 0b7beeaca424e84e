// C8 with the data plane (checkBoundedWithDataPlane): a planted stop must be reported by another
// rank's timeout; unplanned timeouts, aborts and errors fail; without a data plane it is C8.
#include "checkers/liveness.h"

#include <gtest/gtest.h>

#include "checkers/bounded.h"
#include "dataplane_test_support.h"

namespace peerconf::harness::dataplane {

using checkers::checkBoundedWithDataPlane;
using model::DataplaneOutcome;
using model::Property;
using model::Result;
using model::RunRecord;
using model::Verdict;
namespace {

using testing::anyFinding;
using testing::describe;
using testing::recordOf;

RunRecord outcomes(std::vector<DataplaneOutcome> list, int waitPeer = -1) {
  std::vector<Result> results(list.size());
  for (std::size_t r = 0; r < list.size(); ++r) {
    results[r].outcome = list[r];
    results[r].waitPeer = waitPeer;
    results[r].detail = "rank " + std::to_string(r) + " " + toString(list[r]);
  }
  RunRecord record = recordOf(results);
  record.scenario.deadline = std::chrono::milliseconds(1000);
  record.wallNs = 1'000'000;
  return record;
}

TEST(Liveness, AStopReportedByATimeoutPasses) {
  const Verdict v = checkBoundedWithDataPlane(outcomes(
      {DataplaneOutcome::kTimeout, DataplaneOutcome::kStopped, DataplaneOutcome::kAborted}, 1));
  EXPECT_EQ(v.status, Verdict::Status::kPass) << describe(v);
  EXPECT_EQ(v.property, Property::kC8Bounded);
  EXPECT_NE(v.summary.find("data-plane stop reported by a timeout"), std::string::npos)
      << describe(v);
}

TEST(Liveness, UnplannedTimeoutsAbortsAndErrorsFail) {
  for (DataplaneOutcome bad :
       {DataplaneOutcome::kTimeout, DataplaneOutcome::kAborted, DataplaneOutcome::kError}) {
    const Verdict v = checkBoundedWithDataPlane(outcomes({DataplaneOutcome::kCompleted, bad}, 0));
    EXPECT_TRUE(v.failed()) << describe(v);
    EXPECT_TRUE(anyFinding(v, toString(bad), 1)) << describe(v);
  }
}

TEST(Liveness, AStopNobodyReportedFails) {
  const Verdict v = checkBoundedWithDataPlane(outcomes(
      {DataplaneOutcome::kAborted, DataplaneOutcome::kStopped, DataplaneOutcome::kTimeout}, 0));
  EXPECT_TRUE(v.failed()) << describe(v);
  EXPECT_TRUE(anyFinding(v, "no other rank's wait timed out on them")) << describe(v);
}

// A `dataplane.stop` whose rank's data plane completed did not happen (a run capped at or below
// the stop's step: the mutant st-stop-needs-its-step-only): it fails, named; the same stop that
// happened passes.
TEST(Liveness, APlannedStopThatDidNotHappenFails) {
  RunRecord record = outcomes({DataplaneOutcome::kCompleted, DataplaneOutcome::kCompleted});
  record.scenario.dataPlane.emplace();
  record.scenario.dataPlane->stop = model::Stop{1, 100};
  for (auto& r : record.ranks) r.dataPlane->stepsDone = r.dataPlane->stepsPlanned = 100;
  const Verdict v = checkBoundedWithDataPlane(record);
  EXPECT_TRUE(v.failed()) << describe(v);
  EXPECT_TRUE(anyFinding(v, "the planned stop did not happen", 1)) << describe(v);
  EXPECT_TRUE(anyFinding(v, "too short to reach the stop", 1)) << describe(v);

  RunRecord stopped = outcomes({DataplaneOutcome::kTimeout, DataplaneOutcome::kStopped}, 1);
  stopped.scenario.dataPlane.emplace();
  stopped.scenario.dataPlane->stop = model::Stop{1, 100};
  const Verdict ok = checkBoundedWithDataPlane(stopped);
  EXPECT_EQ(ok.status, Verdict::Status::kPass) << describe(ok);
}

// A late rank whose delay is 1.5 waits or more (model::certainDataPlaneTimeout) plans the peers'
// timeout: the run passes when a peer's timeout names it; it fails, named, when every data plane
// completed (a driver that skipped the delay) or the timeouts name another rank; the same
// timeouts behind a delay under the wait are unplanned.
RunRecord slowRun(std::vector<DataplaneOutcome> list, int waitPeer,
                  std::chrono::microseconds delay = std::chrono::milliseconds(500)) {
  RunRecord record = outcomes(list, waitPeer);
  record.scenario.ranks = static_cast<int>(list.size());
  model::Spec& spec = record.scenario.dataPlane.emplace();
  spec.steps = 50;
  spec.timeout = std::chrono::milliseconds(200);
  spec.late.push_back({1, model::Role::kWriter, 0, {10}, delay});
  return record;
}

TEST(Liveness, ALateRankReportedByThePeersTimeoutPasses) {
  const Verdict v = checkBoundedWithDataPlane(slowRun(
      {DataplaneOutcome::kTimeout, DataplaneOutcome::kAborted, DataplaneOutcome::kTimeout}, 1));
  EXPECT_EQ(v.status, Verdict::Status::kPass) << describe(v);
  EXPECT_NE(v.summary.find("late rank reported by the peers' timeout"), std::string::npos)
      << describe(v);
}

TEST(Liveness, APlannedTimeoutThatDidNotHappenFails) {
  const Verdict completed = checkBoundedWithDataPlane(slowRun(
      {DataplaneOutcome::kCompleted, DataplaneOutcome::kCompleted, DataplaneOutcome::kCompleted},
      -1));
  EXPECT_TRUE(completed.failed()) << describe(completed);
  EXPECT_TRUE(anyFinding(completed,
                         "the planned timeout did not happen: rank(s) 1 late by 500 ms "
                         "at step 10"))
      << describe(completed);
  EXPECT_TRUE(anyFinding(completed, "every rank's data plane completed")) << describe(completed);

  const Verdict another = checkBoundedWithDataPlane(slowRun(
      {DataplaneOutcome::kAborted, DataplaneOutcome::kAborted, DataplaneOutcome::kTimeout}, 0));
  EXPECT_TRUE(another.failed()) << describe(another);
  EXPECT_TRUE(anyFinding(another, "no other rank's wait timed out on them")) << describe(another);

  const Verdict onTime = checkBoundedWithDataPlane(slowRun(
      {DataplaneOutcome::kTimeout, DataplaneOutcome::kAborted}, 1, std::chrono::milliseconds(90)));
  EXPECT_TRUE(onTime.failed()) << describe(onTime);
  EXPECT_TRUE(anyFinding(onTime, "timed out with no rank planned to stop", 0)) << describe(onTime);
}

// A kernel the host had to abort past the run's bound fails even when a rank stopped.
TEST(Liveness, AHostBoundTimeoutAlwaysFails) {
  RunRecord record = outcomes({DataplaneOutcome::kTimeout, DataplaneOutcome::kStopped}, 1);
  record.ranks[0].dataPlane->waitWhat = "host-bound";
  record.ranks[0].dataPlane->detail = "kernel past the bound";
  const Verdict v = checkBoundedWithDataPlane(record);
  EXPECT_TRUE(v.failed()) << describe(v);
  EXPECT_TRUE(anyFinding(v, "kernel past the bound", 0)) << describe(v);
}

TEST(Liveness, WithoutADataPlaneItIsTheBuiltInC8) {
  RunRecord record = outcomes({DataplaneOutcome::kCompleted, DataplaneOutcome::kCompleted});
  for (auto& r : record.ranks) r.dataPlane.reset();
  const Verdict ours = checkBoundedWithDataPlane(record);
  const Verdict builtin = checkers::checkBounded(record);
  EXPECT_EQ(ours.status, builtin.status);
  EXPECT_EQ(ours.summary, builtin.summary);
  EXPECT_EQ(ours.findings.size(), builtin.findings.size());
}

}  // namespace
}  // namespace peerconf::harness::dataplane
