// A data plane per buffer (scenarios/README.md, "A data plane per buffer"): the suite's files run
// one data plane a buffer and record each (threads, simulated time); the record carries them
// through JSON and the binary codec; C6 names the buffer whose layout is broken and holds the
// other clean; and the planted core that hands a later registration the first one's peer
// pointers fails C8 for buffer 1 only, where the production core passes the same file.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "checkers/history.h"
#include "checkers/liveness.h"
#include "checkers/support.h"
#include "judged_run.h"
#include "launch/launcher.h"
#include "model/record_binary.h"
#include "model/record_json.h"
#include "model/scenario.h"
#include "planted/reuses_first_mapping.h"
#include "scenario/load.h"

namespace peerconf::harness {

using launch::ClockMode;
using launch::LaunchOptions;
using model::DataplaneOutcome;
using model::Property;
using model::RunRecord;
using model::Scenario;
using model::Verdict;
using scenario::loadScenario;

namespace {

testing::JudgedRun runBuffers(const Scenario& scenario,
                              const model::CoreFactory& core = model::productionCore()) {
  LaunchOptions options;
  options.clock = ClockMode::kSim;
  options.core = core;
  return testing::runAndJudge(scenario, options);
}

Scenario loadBuffersFile(const std::string& file) {
  return loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/" + file);
}

// How many of the verdict's findings hold `text`.
std::size_t findingsWith(const Verdict& verdict, const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      verdict.findings.begin(), verdict.findings.end(),
      [&](const model::Finding& f) { return f.text.find(text) != std::string::npos; }));
}

TEST(DataplaneBuffersTest, TwoBuffersAliveTogetherEachRunTheirOwnDataPlane) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-two-buffers-alive-together.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();
  ASSERT_EQ(checked.record.ranks.size(), 4u);
  for (const auto& r : checked.record.ranks) {
    ASSERT_EQ(model::dataPlanesRecorded(r), 2u) << r.rank;
    EXPECT_EQ(r.dataPlane->workload, "exchange");
    EXPECT_EQ(r.laterDataPlanes[0].workload, "allreduce");
    for (std::size_t b = 0; b < 2; ++b) {
      const model::Result* dp = model::dataPlaneOfBuffer(r, b);
      ASSERT_NE(dp, nullptr);
      EXPECT_EQ(dp->outcome, DataplaneOutcome::kCompleted) << dp->detail;
      EXPECT_EQ(dp->stepsDone, 300u);
    }
    // Two registrations, two generations: each data plane ran on its own buffer.
    EXPECT_NE(r.dataPlane->generation, r.laterDataPlanes[0].generation);
  }
  // C8 states each buffer's data plane, named.
  const Verdict& c8 = checked.verdict(Property::kC8Bounded);
  EXPECT_EQ(findingsWith(c8, "buffer 0: data plane completed"), 4u) << checked.story();
  EXPECT_EQ(findingsWith(c8, "buffer 1: data plane completed"), 4u) << checked.story();
}

TEST(DataplaneBuffersTest, OneAtATimeRoundsEachRunADataPlaneBeforeTheirClose) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-one-at-a-time-rounds.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();
  for (const auto& r : checked.record.ranks) {
    ASSERT_EQ(model::dataPlanesRecorded(r), 3u) << r.rank;
    EXPECT_EQ(r.laterDataPlanes[1].layout, "chunk-tagged");
    // Each data plane's phase comes before its buffer's close: the i-th "dataplane" phase ends
    // before the i-th "close" phase begins.
    std::vector<std::size_t> planes;
    std::vector<std::size_t> closes;
    for (std::size_t i = 0; i < r.events.size(); ++i) {
      const auto& e = r.events[i];
      if (e.kind == model::EventKind::kPhaseEnd && e.what == "dataplane") planes.push_back(i);
      if (e.kind == model::EventKind::kPhaseBegin && e.what == "close") closes.push_back(i);
    }
    ASSERT_EQ(planes.size(), 3u);
    ASSERT_EQ(closes.size(), 3u);
    for (std::size_t b = 0; b < 3; ++b) EXPECT_LT(planes[b], closes[b]) << "buffer " << b;
    for (std::size_t b = 1; b < 3; ++b) EXPECT_GT(planes[b], closes[b - 1]) << "buffer " << b;
  }
}

TEST(DataplaneBuffersTest, TheRecordKeepsEveryBuffersDataPlaneThroughJsonAndBinary) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-two-buffers-alive-together.yaml"));
  const RunRecord& record = checked.record;
  const RunRecord json = model::runRecordFromJson(model::toJson(record));
  std::string bytes;
  model::encodeBinary(record, bytes);
  std::string_view in = bytes;
  const RunRecord binary = model::runRecordFromBinary(in);
  for (const RunRecord* back : {&json, &binary}) {
    ASSERT_EQ(back->ranks.size(), record.ranks.size());
    for (std::size_t r = 0; r < record.ranks.size(); ++r) {
      ASSERT_EQ(back->ranks[r].laterDataPlanes.size(), 1u);
      EXPECT_EQ(back->ranks[r].laterDataPlanes[0].workload, "allreduce");
      EXPECT_EQ(back->ranks[r].laterDataPlanes[0].generation,
                record.ranks[r].laterDataPlanes[0].generation);
      EXPECT_EQ(back->ranks[r].laterDataPlanes[0].history.size(),
                record.ranks[r].laterDataPlanes[0].history.size());
    }
    ASSERT_TRUE(back->scenario.buffers[1].dataPlane.has_value());
    EXPECT_EQ(back->scenario.buffers[1].dataPlane->workload, model::Workload::kAllReduce);
  }
}

TEST(DataplaneBuffersTest, ABrokenLayoutOnBufferOneIsNamedForBufferOneOnly) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("controls/c6-broken-layout-second-buffer-only.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();  // a control: C6 failed as it names
  const Verdict& c6 = checked.verdict(Property::kC6NoOverwrite);
  EXPECT_EQ(c6.status, Verdict::Status::kFail);
  EXPECT_GT(findingsWith(c6, "buffer 1: "), 0u);
  EXPECT_EQ(findingsWith(c6, "buffer 0: "), 0u) << checked.story();
  // Buffer 0's data plane alone, the reference under the same late reader: clean.
  const checkers::Analysis first =
      checkers::analyzeOverwrites(checkers::dataPlaneView(checked.record, 0));
  EXPECT_TRUE(first.ran);
  EXPECT_TRUE(first.problems.empty());
  // The broken layout moved to buffer 0: C6 names buffer 0 instead.
  Scenario moved = checked.record.scenario;
  moved.buffers[0].dataPlane = moved.buffers[1].dataPlane;
  moved.buffers[1].dataPlane.reset();
  const testing::JudgedRun swapped = runBuffers(moved);
  const Verdict& c6Swapped = swapped.verdict(Property::kC6NoOverwrite);
  EXPECT_EQ(c6Swapped.status, Verdict::Status::kFail);
  EXPECT_GT(findingsWith(c6Swapped, "buffer 0: "), 0u);
  EXPECT_EQ(findingsWith(c6Swapped, "buffer 1: "), 0u) << swapped.story();
  EXPECT_FALSE(swapped.passed());  // the file still names buffer 1
}

TEST(DataplaneBuffersTest, ALaterRegistrationOnTheFirstOnesPeerPointersTimesOutBufferOne) {
  // The core by its factory (the file names it by `core:`, which the tests' launcher does not
  // look up).
  Scenario planted = loadBuffersFile("controls/c4-c8-reuses-first-mapping.yaml");
  planted.core.clear();
  const testing::JudgedRun checked =
      runBuffers(planted, model::coreFactoryOf<planted::ReusesFirstMapping>());
  EXPECT_TRUE(checked.passed()) << checked.story();
  for (const auto& r : checked.record.ranks) {
    ASSERT_EQ(model::dataPlanesRecorded(r), 2u) << r.rank;
    EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kCompleted) << r.dataPlane->detail;
    EXPECT_NE(r.laterDataPlanes[0].outcome, DataplaneOutcome::kCompleted);
  }
  const Verdict& c8 = checked.verdict(Property::kC8Bounded);
  EXPECT_GT(findingsWith(c8, "buffer 1: a data-plane wait timed out"), 0u);
  EXPECT_EQ(findingsWith(c8, "buffer 0: a data-plane"), 0u) << checked.story();
  // The production core passes the same file without its violations.
  Scenario production = planted;
  production.core.clear();
  production.expect.violations.clear();
  production.expect.findings.clear();
  const testing::JudgedRun clean = runBuffers(production);
  EXPECT_TRUE(clean.passed()) << clean.story();
}

// An `at: dataplane` death aimed at the last buffer stops its rank in that buffer's data plane
// only: the earlier buffer's completed on every rank, the survivors' last one ends on the dead
// rank, and the fault fired in construction 1.
TEST(DataplaneBuffersTest, ADeathAimedAtTheLastBufferStopsItsRankInThatDataPlaneOnly) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-death-in-last-buffer-alive.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();
  for (const auto& r : checked.record.ranks) {
    ASSERT_EQ(model::dataPlanesRecorded(r), 2u) << r.rank;
    EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kCompleted) << r.dataPlane->detail;
    const model::Result& last = r.laterDataPlanes[0];
    if (r.rank == 1) {
      EXPECT_EQ(r.status, model::RankStatus::kDead);
      EXPECT_EQ(last.outcome, DataplaneOutcome::kStopped);
      EXPECT_EQ(last.stepsDone, 200u);
      const bool firedInBufferOne =
          std::any_of(r.events.begin(), r.events.end(), [](const model::Event& e) {
            return e.kind == model::EventKind::kFault && e.what == "death" && e.buffer == 1;
          });
      EXPECT_TRUE(firedInBufferOne) << checked.story();
    } else {
      EXPECT_TRUE(last.outcome == DataplaneOutcome::kTimeout ||
                  last.outcome == DataplaneOutcome::kAborted)
          << last.detail;
    }
  }
}

// The negative control of C8's unplanned stop: the same run's record with rank 1's stop moved
// into buffer 0's data plane (a driver that stopped it in the wrong one) fails C8 for buffer 0,
// naming rank 1; the record as run has no such finding.
TEST(DataplaneBuffersTest, AStopInABufferWhoseDataPlaneNobodyStoppedFailsC8) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-death-in-last-buffer-alive.yaml"));
  ASSERT_TRUE(checked.passed()) << checked.story();
  const std::string unplanned = "no stop was planned for it there";
  EXPECT_EQ(findingsWith(checkers::checkBoundedWithDataPlane(checked.record), unplanned), 0u);
  RunRecord moved = checked.record;
  for (auto& r : moved.ranks) {
    if (r.rank == 1) r.dataPlane->outcome = DataplaneOutcome::kStopped;
  }
  const Verdict c8 = checkers::checkBoundedWithDataPlane(moved);
  EXPECT_EQ(c8.status, Verdict::Status::kFail);
  EXPECT_EQ(findingsWith(c8, "buffer 0: rank 1's data plane stopped after"), 1u);
  EXPECT_EQ(findingsWith(c8, "buffer 1: rank 1's data plane stopped"), 0u);
}

// A stop in the first round's own data plane ends that data plane only: its peers time out on
// the stopped rank there, and the second round's data plane completes on every rank.
TEST(DataplaneBuffersTest, AStopInTheFirstRoundEndsThatDataPlaneOnly) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-stop-in-first-round.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();
  for (const auto& r : checked.record.ranks) {
    ASSERT_EQ(model::dataPlanesRecorded(r), 2u) << r.rank;
    if (r.rank == 1) {
      EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kStopped) << r.dataPlane->detail;
      EXPECT_EQ(r.dataPlane->stepsDone, 80u);
    } else {
      // A timeout naming rank 1, or the abort of a peer that timed out first.
      EXPECT_TRUE(r.dataPlane->outcome == DataplaneOutcome::kTimeout ||
                  r.dataPlane->outcome == DataplaneOutcome::kAborted)
          << r.dataPlane->detail;
    }
    EXPECT_EQ(r.laterDataPlanes[0].outcome, DataplaneOutcome::kCompleted)
        << r.laterDataPlanes[0].detail;
  }
}

// One at a time, a later round that fails: the rounds before it ran their data planes (judged,
// named), the failing round's is not asked for, and every rank raised there together.
TEST(DataplaneBuffersTest, TheRoundsBeforeAFailingOneAreJudgedAndItsDataPlaneIsNotAskedFor) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-rounds-then-open-fails-third.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();
  for (const auto& r : checked.record.ranks) {
    EXPECT_EQ(r.status, model::RankStatus::kRaised) << r.rank;
    ASSERT_EQ(model::dataPlanesRecorded(r), 2u) << r.rank;
    for (std::size_t b = 0; b < 2; ++b) {
      EXPECT_EQ(model::dataPlaneOfBuffer(r, b)->outcome, DataplaneOutcome::kCompleted);
    }
  }
  EXPECT_EQ(checkers::dataPlaneBuffers(checked.record.scenario), 2u);
  const Verdict& c6 = checked.verdict(Property::kC6NoOverwrite);
  EXPECT_EQ(c6.status, Verdict::Status::kPass) << checked.story();
  const Verdict& c8 = checked.verdict(Property::kC8Bounded);
  EXPECT_EQ(findingsWith(c8, "buffer 0: data plane completed"), 3u) << checked.story();
  EXPECT_EQ(findingsWith(c8, "buffer 1: data plane completed"), 3u) << checked.story();
  EXPECT_EQ(findingsWith(c8, "buffer 2:"), 0u) << checked.story();
}

// A rank that registers fewer buffers, one round at a time: the first round's data plane ran on
// every rank and is judged; the second round's, which that rank never made, is not asked for.
TEST(DataplaneBuffersTest, ARankRegisteringFewerLeavesTheFirstRoundsDataPlaneJudged) {
  const testing::JudgedRun checked =
      runBuffers(loadBuffersFile("buffers/dataplane-count-fewer-one-at-a-time.yaml"));
  EXPECT_TRUE(checked.passed()) << checked.story();
  for (const auto& r : checked.record.ranks) {
    ASSERT_EQ(model::dataPlanesRecorded(r), 1u) << r.rank;
    EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kCompleted) << r.dataPlane->detail;
  }
  EXPECT_EQ(checkers::dataPlaneBuffers(checked.record.scenario), 1u);
  const Verdict& c8 = checked.verdict(Property::kC8Bounded);
  EXPECT_EQ(findingsWith(c8, "buffer 0: data plane completed"), 3u) << checked.story();
  EXPECT_EQ(findingsWith(c8, "buffer 1:"), 0u) << checked.story();
}

}  // namespace
}  // namespace peerconf::harness
