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
