// The scenario writer: every file of the suite and hand-built corner cases go through
// writeScenario and parseScenario and come back the same.
#include "scenario/writer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness {

using model::Fault;
using model::FaultSite;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Scenario;
using scenario::expandScenarioPaths;
using scenario::loadScenario;
using scenario::parseScenario;
using scenario::sameScenario;
using scenario::WriteOptions;
using scenario::writeScenario;
using scenario::writeScenarioFile;
namespace {

Scenario roundTrip(const Scenario& scenario) {
  return parseScenario(writeScenario(scenario), scenario.name + ".yaml");
}

TEST(ExploreWriter, EverySuiteScenarioRoundTrips) {
  const auto files = expandScenarioPaths({PEERCONF_SCENARIOS_DIR});
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const Scenario original = loadScenario(file);
    const std::string text = writeScenario(original);
    Scenario again;
    ASSERT_NO_THROW(again = parseScenario(text, file)) << text;
    std::string why;
    EXPECT_TRUE(sameScenario(original, again, &why)) << why << "\n" << text;
    // Writing is a fixed point: the second file is the first one, byte for byte.
    EXPECT_EQ(writeScenario(again), text);
  }
}

Scenario twoRanks() {
  Scenario scenario;
  scenario.name = "corner";
  scenario.ranks = 2;
  scenario.deadline = std::chrono::milliseconds(1500);
  scenario.bufferBytes = 1000;
  scenario.seed = 18446744073709551615ULL;
  return scenario;
}

TEST(ExploreWriter, KeepsProbabilitiesErrorsAndLists) {
  Scenario scenario = twoRanks();
  scenario.ranks = 4;
  Fault close;
  close.site = FaultSite::kClose;
  close.ranks = {0, 2, 3};
  close.peer = 1;
  close.error = 4242;  // no name: written as a number
  close.probability = 0.3;
  close.count = 2;
  Fault delay;
  delay.site = FaultSite::kDelay;
  delay.ranks = {1};
  delay.at = Point::kAgree;
  delay.delay = std::chrono::milliseconds(7);
  delay.probability = 0.25;
  scenario.faults = {close, delay};
  const std::string text = writeScenario(scenario);
  EXPECT_NE(text.find("probability: 0.3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("error: 4242"), std::string::npos) << text;
  EXPECT_NE(text.find("ranks: [0, 2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("deadline: 1500ms"), std::string::npos) << text;
  EXPECT_NE(text.find("buffer: 1000B"), std::string::npos) << text;
  std::string why;
  EXPECT_TRUE(sameScenario(scenario, roundTrip(scenario), &why)) << why << "\n" << text;
}

TEST(ExploreWriter, KeepsTextMessagesWithAwkwardCharacters) {
  Scenario scenario = twoRanks();
  Fault alloc;
  alloc.site = FaultSite::kAlloc;
  alloc.ranks = {1};
  alloc.error = 2;
  scenario.faults = {alloc};
  scenario.description = "quotes \" and: colons # and hashes";
  scenario.expect.outcome = Outcome::kRaise;
  scenario.expect.messages[0] = {MessageKind::kGroup, {}};
  scenario.expect.messages[1] = {MessageKind::kText, "alloc failed on rank 1: \"oom\" #2"};
  std::string why;
  const Scenario again = roundTrip(scenario);
  EXPECT_TRUE(sameScenario(scenario, again, &why)) << why << "\n" << writeScenario(scenario);
}

// `runner:` is written only where it differs from the default, and not-ready takes no count.
TEST(ExploreWriter, WritesTheRunnerOnlyWithoutItsAgreement) {
  Scenario scenario = twoRanks();
  Fault notReady;
  notReady.site = FaultSite::kNotReady;
  notReady.ranks = {1};
  notReady.count = 3;  // meaningless for not-ready: dropped
  scenario.faults = {notReady};
  scenario.expect.outcome = Outcome::kRaise;
  scenario.expect.messages[1] = {MessageKind::kText, std::string(kNotReadyThisRankMessage)};
  scenario.expect.messages[0] = {MessageKind::kText, std::string(kNotReadyAnotherRankMessage)};
  const std::string agreeing = writeScenario(scenario);
  EXPECT_EQ(agreeing.find("runner"), std::string::npos) << agreeing;
  EXPECT_EQ(agreeing.find("count"), std::string::npos) << agreeing;
  std::string why;
  EXPECT_TRUE(sameScenario(scenario, roundTrip(scenario), &why)) << why << "\n" << agreeing;

  scenario.runner.agreeFirst = false;
  scenario.expect.messages[0] = {MessageKind::kGroup, {}};
  const std::string alone = writeScenario(scenario);
  EXPECT_NE(alone.find("runner: {agree_first: false}"), std::string::npos) << alone;
  const Scenario again = roundTrip(scenario);
  EXPECT_FALSE(again.runner.agreeFirst);
  EXPECT_TRUE(sameScenario(scenario, again, &why)) << why << "\n" << alone;
  Scenario other = again;
  other.runner.agreeFirst = true;
  EXPECT_FALSE(sameScenario(again, other, &why));
  EXPECT_EQ(why, "runner.agree_first");
}

TEST(ExploreWriter, WritesHeaderAndSchemaAsComments) {
  WriteOptions options;
  options.schema = "../schema.json";
  options.header = {"first line", "", "third line"};
  const std::string text = writeScenario(twoRanks(), options);
  EXPECT_EQ(text.rfind("# yaml-language-server: $schema=../schema.json\n# first line\n#\n# third "
                       "line\n",
                       0),
            0u)
      << text;
  EXPECT_NO_THROW(parseScenario(text, "corner.yaml"));
}

TEST(ExploreWriter, RefusesANameNoFileCanCarry) {
  Scenario scenario = twoRanks();
  scenario.name = "two words";
  EXPECT_THROW(writeScenario(scenario), std::invalid_argument);
}

TEST(ExploreWriter, SameScenarioNamesTheFirstDifference) {
  const Scenario a = twoRanks();
  Scenario b = a;
  b.deadline = std::chrono::milliseconds(10);
  std::string why;
  EXPECT_FALSE(sameScenario(a, b, &why));
  EXPECT_EQ(why, "deadline");
  b = a;
  b.file = "elsewhere.yaml";
  b.mark = {3, 4};
  EXPECT_TRUE(sameScenario(a, b));
}

TEST(ExploreWriter, WritesFilesIntoNewDirectories) {
  const auto dir = std::filesystem::temp_directory_path() / "peerconf-writer-test" / "nested";
  std::filesystem::remove_all(dir.parent_path());
  const std::string path = (dir / "corner.yaml").string();
  writeScenarioFile(twoRanks(), path);
  std::string why;
  EXPECT_TRUE(sameScenario(loadScenario(path), twoRanks(), &why)) << why;
  std::filesystem::remove_all(dir.parent_path());
}

// One round trip, as explore and exhaustive take it: "" and what reads back for a valid scenario;
// why, for one the validator refuses.
TEST(ScenarioWriter, ARoundTripSaysWhyAScenarioIsNotWhatItsFileSays) {
  Scenario scenario;
  scenario.name = "round-trip";
  scenario.ranks = 2;
  std::string text;
  Scenario back;
  EXPECT_EQ(scenario::roundTripProblem(scenario, "rt.yaml", text, back), "");
  EXPECT_NE(text.find("round-trip"), std::string::npos);
  EXPECT_TRUE(sameScenario(scenario, back));
  scenario.ranks = 0;  // refused by the validator
  const std::string why = scenario::roundTripProblem(scenario, "rt.yaml", text, back);
  EXPECT_EQ(why.rfind("does not validate: ", 0), 0u) << why;
  EXPECT_NE(why.find("rt.yaml"), std::string::npos) << why;
}
}  // namespace
}  // namespace peerconf::harness
