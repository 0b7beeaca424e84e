// The simulator's self-check (dataplane/engine_check.h): it passes on the simulator as built, on
// both engines, cheaply; and each half can fail (negative controls): a flipped litmus verdict, a
// scheduler that ignores its seed, one that uses only part of it, and one that cannot replay.
// (The litmus table itself, test by test: tests/src/sim_memory_test.cc.)
#include "dataplane/engine_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace peerconf::harness::dataplane {
namespace {

using ::testing::HasSubstr;

TEST(EngineCheck, PassesOnTheSimulatorAsBuiltOnBothEngines) {
  for (const bool fibers : {true, false}) {
    const EngineCheck check = checkEngine(fibers);
    for (const std::string& problem : check.problems) ADD_FAILURE() << problem;
    EXPECT_EQ(check.litmusTests, static_cast<int>(litmusTable().size()));
    EXPECT_GT(check.executions, 1000u);
    // Cheap enough to run before every simulated suite (tens of ms; generous for loaded boxes
    // and sanitizers).
    EXPECT_LT(check.elapsedNs, 5'000'000'000) << (fibers ? "fibers" : "threads");
  }
}

// The two engines run a seed's interleaving alike (sim_clock.h), and the program interleaves at
// all: every participant appears, and not as three runs of one participant each.
TEST(EngineCheck, ASeedInterleavesTheSameOnBothEnginesAndInterleaves) {
  for (const std::uint64_t seed : checkedSeeds()) {
    const std::vector<int> fibers = schedulerTrace(seed, true);
    EXPECT_EQ(fibers, schedulerTrace(seed, false)) << "seed " << seed;
    ASSERT_EQ(fibers.size(), 72u);
    int switches = 0;
    for (std::size_t i = 1; i < fibers.size(); ++i) switches += fibers[i] != fibers[i - 1] ? 1 : 0;
    EXPECT_GT(switches, 2) << "seed " << seed;
  }
}

TEST(EngineCheck, ASchedulerThatIgnoresItsSeedIsCaught) {
  const std::vector<std::string> problems =
      seedProblems([](std::uint64_t) { return schedulerTrace(7, true); });
  ASSERT_FALSE(problems.empty());
  EXPECT_THAT(problems.front(), HasSubstr("interleaved the participants alike"));
}

TEST(EngineCheck, ASchedulerThatKeepsOnlyTheLowWordOfItsSeedIsCaught) {
  const std::vector<std::string> problems =
      seedProblems([](std::uint64_t seed) { return schedulerTrace(seed & 0xffffffffu, true); });
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems.front(),
              HasSubstr("seeds 1 and 4294967297 interleaved the participants alike"));
}

TEST(EngineCheck, ASchedulerThatCannotReplayASeedIsCaught) {
  std::uint64_t calls = 0;
  const std::vector<std::string> problems =
      seedProblems([&calls](std::uint64_t seed) { return schedulerTrace(seed + ++calls, true); });
  ASSERT_FALSE(problems.empty());
  EXPECT_THAT(problems.front(), HasSubstr("differently on its second run"));
}

TEST(EngineCheck, AWrongModelIsCaughtAndNamed) {
  // As a simulator that lost release/acquire would be seen: the table's MP+rel+acq verdict flipped.
  for (Litmus test : litmusTable()) {
    if (test.name != "MP+rel+acq") continue;
    test.model = LitmusVerdict::kAllowed;
    const std::vector<std::string> problems = litmusProblems(test);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_THAT(problems.front(), HasSubstr("MP+rel+acq: the simulator never produced (1,0)"));
  }
}

}  // namespace
}  // namespace peerconf::harness::dataplane
