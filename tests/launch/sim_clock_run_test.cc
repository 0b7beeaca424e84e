// Thread runs on simulated time (--clock sim): the same scenario and seed give the same event log,
// times included; deadlines and delays take their exact simulated time and no real time; the
// record says its times are simulated and its reproduce line brings the clock back.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "explore/determinism.h"
#include "launch/launcher.h"
#include "model/run_record.h"
#include "scenario/load.h"

namespace peerconf::harness {
namespace {

const std::string kScenarios = PEERCONF_SOURCE_DIR "/scenarios/";

RunRecord runSim(const std::string& file, std::uint64_t seed) {
  LaunchOptions options;
  options.clock = ClockMode::kSim;
  return runThreads(loadScenario(kScenarios + file), seed, options);
}

// Every rank's events as text with their simulated times: the log byte for byte, except for the
// mocked runtime's device pointers and allocation numbers (explore/determinism.h masks them).
std::vector<std::string> timedLog(const RunRecord& record) {
  std::vector<std::string> out;
  for (const RankResult& rank : record.ranks) {
    const auto lines = explore::normalizedEvents(rank);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      out.push_back(std::to_string(rank.rank) + " @" + std::to_string(rank.events[i].tNs) + " " +
                    lines[i]);
    }
    out.push_back(std::to_string(rank.rank) + " " + toString(rank.status) + " " + rank.message);
  }
  return out;
}

class SimReplay : public ::testing::TestWithParam<const char*> {};

TEST_P(SimReplay, TheSameSeedGivesTheSameLogTimesIncluded) {
  for (std::uint64_t seed : {1u, 2u, 77u}) {
    const RunRecord a = runSim(GetParam(), seed);
    const RunRecord b = runSim(GetParam(), seed);
    EXPECT_EQ(a.clock, "sim");
    EXPECT_TRUE(a.harnessErrors.empty());
    EXPECT_EQ(timedLog(a), timedLog(b)) << GetParam() << " seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, SimReplay,
    ::testing::Values("timing/several-late-ranks.yaml", "lifecycle/death-and-hang-at-agree.yaml",
                      "lifecycle/hang-beside-open-failure.yaml",
                      "timing/late-past-deadline-exchange.yaml", "dataplane/reference-4-ranks.yaml",
                      "dataplane/late-readers.yaml", "probability/open-fails-by-chance.yaml"));

TEST(SimClockRun, AHangIsReportedAtTheDeadlineInSimulatedTimeAndAtOnceInRealTime) {
  // c8-bound-too-tight: rank 1 hangs in the exchange; rank 0 gives up after the 300 ms deadline.
  const auto wallStart = std::chrono::steady_clock::now();
  const RunRecord record = runSim("controls/c8-bound-too-tight.yaml", 1);
  EXPECT_LT(std::chrono::steady_clock::now() - wallStart, std::chrono::milliseconds(250));
  ASSERT_EQ(record.ranks.size(), 2u);
  EXPECT_EQ(record.ranks[1].status, RankStatus::kHung);
  EXPECT_EQ(record.ranks[0].errorType, "GroupTimeout");
  // The timeout's throw event, exactly one deadline after the call that waited.
  const auto& events = record.ranks[0].events;
  std::int64_t call = -1;
  std::int64_t thrown = -1;
  for (const Event& e : events) {
    if (e.kind == EventKind::kCall && e.what == "allGather") call = e.tNs;
    if (e.kind == EventKind::kThrow && e.what == "allGather") thrown = e.tNs;
  }
  ASSERT_GE(call, 0);
  ASSERT_GE(thrown, 0);
  EXPECT_EQ(thrown - call, 300'000'000);
  EXPECT_NE(reproduceCommand(record).find("--clock sim"), std::string::npos);
}

TEST(SimClockRun, ADelayTakesItsSimulatedTime) {
  const RunRecord record = runSim("timing/late-at-open.yaml", 1);
  ASSERT_FALSE(record.ranks.empty());
  std::int64_t end = 0;
  for (const RankResult& rank : record.ranks) end = std::max(end, rank.endNs);
  // The planted delay of 200 ms at open, in simulated time (a run whose delays took no simulated
  // time would end at 0).
  EXPECT_GE(end, 200'000'000);
}

}  // namespace
}  // namespace peerconf::harness
