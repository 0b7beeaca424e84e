// compare(): a scenario's expect: and certain faults against the oracle's derivation, each item at
// the place the file wrote it (model::ExpectationMarks), whether the scenario came from a file or
// back from a child (the JSON codec), and derivation(): what is not derived.
#include "expectation/compare.h"

#include <gtest/gtest.h>

#include <string>

#include "model/record_json.h"
#include "scenario/load.h"

namespace peerconf::harness::expectation {

using model::Scenario;
using scenario::loadScenario;
using scenario::parseScenario;
namespace {

std::string caseData(const std::string& file) {
  return std::string(PEERCONF_EXPLAIN_DATA_DIR) + "/" + file;
}

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST(Compare, AWrongMessageDiffersAtTheKeyTheFileWrote) {
  const Scenario scenario = loadScenario(caseData("wrong-expect.yaml"));
  const Derivation derived = derivation(scenario);
  ASSERT_TRUE(derived.notDerived.empty()) << derived.notDerived;
  const Comparison comparison = compare(scenario, derived.draws);
  ASSERT_EQ(comparison.differences.size(), 1u);
  EXPECT_EQ(comparison.faultDifferences, 0u);
  // `others: group` (line 14, column 5) covers ranks 1 and 2, which say "another".
  EXPECT_TRUE(startsWith(comparison.differences[0],
                         caseData("wrong-expect.yaml") +
                             ":14:5: ranks 1, 2: group (others): DIFFERS: the file expects group; "
                             "the derivation says another"))
      << comparison.differences[0];
  EXPECT_EQ(comparison.compared, 3);  // the outcome, rank 0's message, the others'

  // The same scenario back from a child process (the JSON codec) compares the same.
  const Scenario back = model::scenarioFromJson(model::toJson(scenario));
  EXPECT_EQ(compare(back, derived.draws).differences, comparison.differences);
}

// `outcome: as-drawn`: the draw a run made is the one whose reachable chance pairs fired.
TEST(Compare, TheDrawOfARunIsTheOneItsChanceFaultsThatFiredMake) {
  const Scenario scenario = parseScenario(
      "ranks: 4\nfaults:\n"
      "  - {site: open, rank: 1, peer: 2, probability: 0.5}\n"
      "  - {site: open, rank: 3, peer: 0, probability: 0.5}\n"
      "  - {site: close, rank: 0, probability: 0.5}\n"
      "expect: {outcome: as-drawn}\n",
      "d.yaml");
  const Derivation derived = derivation(scenario);
  ASSERT_EQ(derived.draws.size(), 4u);
  const Draw* mixed = drawOfRun(derived.draws, {{0, 1}, {2, 0}});  // a close pair is no draw's
  ASSERT_NE(mixed, nullptr);
  EXPECT_EQ(drawText(scenario, *mixed),
            "fault #0 (open) on rank 1 fires; fault #1 (open) on rank 3 does not fire");
  EXPECT_EQ(mixed->expect.outcome, model::Outcome::kRaise);
  const Draw* none = drawOfRun(derived.draws, {});
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->expect.outcome, model::Outcome::kSuccess);
  EXPECT_NE(drawOfRun(derived.draws, {{0, 1}, {1, 3}}), mixed);

  // A chance alloc that fires ends the rank at the exchange: its chance open cannot fire too.
  const Scenario stops = parseScenario(
      "ranks: 2\nfaults:\n"
      "  - {site: alloc, rank: 0, probability: 0.5}\n"
      "  - {site: open, rank: 0, probability: 0.5}\n"
      "expect: {outcome: as-drawn}\n",
      "s.yaml");
  const Derivation both = derivation(stops);
  ASSERT_TRUE(both.notDerived.empty()) << both.notDerived;
  EXPECT_NE(drawOfRun(both.draws, {{0, 0}}), nullptr);
  EXPECT_EQ(drawOfRun(both.draws, {{0, 0}, {1, 0}}), nullptr);
}

TEST(Compare, AnOutcomeTheDrawDecidesMustBeWrittenAsDrawn) {
  const std::string faults =
      "ranks: 2\nfaults:\n  - {site: open, rank: 1, peer: 0, probability: 0.5}\n";
  const Scenario raise = parseScenario(faults + "expect: {outcome: raise}\n", "r.yaml");
  EXPECT_EQ(outcomeDependsOnDraw(raise, derivation(raise).draws),
            "the outcome depends on the draw of the faults left to chance: raise when fault #0 "
            "(open) on rank 1 fires, success when fault #0 (open) on rank 1 does not fire; write "
            "'outcome: as-drawn' (each run is held to the draw it made), or make the faults that "
            "decide it certain");
  const Scenario drawn = parseScenario(faults + "expect: {outcome: as-drawn}\n", "d.yaml");
  EXPECT_EQ(outcomeDependsOnDraw(drawn, derivation(drawn).draws), "");
  const Comparison comparison = compare(drawn, derivation(drawn).draws);
  EXPECT_TRUE(comparison.differences.empty());
  ASSERT_FALSE(comparison.lines.empty());
  EXPECT_EQ(comparison.lines[0],
            "d.yaml:4:19: outcome as-drawn (raise in 1, success in 1 of 2 draws): agrees");
  // A message that follows the draw, the outcome not: no refusal (the message is the file's).
  const Scenario both = parseScenario(
      "ranks: 3\nfaults:\n  - {site: open, rank: 0, peer: 1}\n"
      "  - {site: open, rank: 2, probability: 0.5}\n"
      "expect: {outcome: raise, messages: {0: this, 2: {text: \"handshake failed on\"}, "
      "others: another}}\n",
      "b.yaml");
  EXPECT_EQ(outcomeDependsOnDraw(both, derivation(both).draws), "");
}

TEST(Compare, ACertainFaultThatNeverFiresIsAFaultDifference) {
  const std::string text =
      "ranks: 2\n"
      "deadline: 100ms\n"
      "faults:\n"
      "  - {site: alloc, rank: 0}\n"
      "  - {site: open, rank: 0}\n"  // the rank ends at the exchange: it never opens
      "expect: {outcome: raise, messages: {0: this, 1: another}}\n";
  const Scenario scenario = parseScenario(text, "f.yaml");
  const Comparison comparison = compare(scenario, derivation(scenario).draws);
  ASSERT_EQ(comparison.differences.size(), 1u);
  EXPECT_EQ(comparison.faultDifferences, 1u);
  EXPECT_TRUE(startsWith(comparison.differences[0],
                         "f.yaml:5:5: fault #1 (open, probability 1) on rank 0: DIFFERS: the file "
                         "declares it certain, but it never fires there"))
      << comparison.differences[0];
}

TEST(Compare, ALateRankUnderMpiOnlyIsNotDerived) {
  const Derivation derived = derivation(loadScenario(caseData("mpi-late-agree.yaml")));
  EXPECT_TRUE(derived.draws.empty());
  EXPECT_NE(derived.notDerived.find("launcher other than threads"), std::string::npos)
      << derived.notDerived;
  // Timing the oracle cannot decide.
  EXPECT_FALSE(derivation(loadScenario(caseData("near-deadline.yaml"))).notDerived.empty());
}

TEST(Compare, AScenarioBuiltInCodeIsNamedByItsFileAlone) {
  Scenario scenario = parseScenario(
      "ranks: 2\nfaults: [{site: open, rank: 1}]\nexpect: {outcome: raise}\n", "g.yaml");
  scenario.expect.marks = {};  // as the generators build one
  scenario.expect.outcome = model::Outcome::kSuccess;
  const Comparison comparison = compare(scenario, derivation(scenario).draws);
  ASSERT_FALSE(comparison.differences.empty());
  EXPECT_TRUE(startsWith(comparison.differences[0], "g.yaml: outcome success: DIFFERS"))
      << comparison.differences[0];
}

}  // namespace
}  // namespace peerconf::harness::expectation
