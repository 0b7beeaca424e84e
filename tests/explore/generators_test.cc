// Properties over generated scenarios (rapidcheck): they validate and round-trip, their derived
// expectation is decidable, and the production core meets it in thread mode on C1–C5 and C8;
// where chance decides the outcome, the properties that do not depend on it still hold; what the
// generators draw (every site, the table's and not-ready included).
#include "explore/generators.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "checkers/checkers.h"
#include "expectation/derive.h"
#include "explore/case_runner.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness::explore {

using expectation::undecidableReason;
using model::FaultSite;
using model::kNotReadyThisRankMessage;
using model::MessageKind;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::Scenario;
using model::toString;
using model::Verdict;
using scenario::parseScenario;
using scenario::sameScenario;
using scenario::writeScenario;
namespace {

CaseRunner& runner() {
  // One rank pool for every case of the binary, on simulated time: a generated deadline can be
  // 47 ms, and on real time a loaded box (CI's ctest beside its builds) made a rank miss it and
  // failed the property for the box, not the core. The real clock runs the suite (suite/threads).
  static CaseRunner shared(model::productionCore(), true, false, launch::ClockMode::kSim);
  return shared;
}

GeneratorOptions smallGroups() {
  GeneratorOptions options;
  options.maxRanks = 16;
  return options;
}

RC_GTEST_PROP(ExploreProperty, GeneratedScenariosAreValidAndRoundTrip, ()) {
  const Scenario scenario = *genScenario(smallGroups());
  RC_ASSERT(!undecidableReason(scenario));
  const std::string text = writeScenario(scenario);
  Scenario parsed;
  try {
    parsed = parseScenario(text, "generated.yaml");
  } catch (const std::exception& e) {
    RC_FAIL(std::string("does not validate: ") + e.what() + "\n" + text);
  }
  std::string why;
  RC_ASSERT(sameScenario(scenario, parsed, &why));
  RC_ASSERT(writeScenario(parsed) == text);
  RC_TAG(toString(scenario.expect.outcome));
}

RC_GTEST_PROP(ExploreProperty, ProductionCoreMeetsTheDerivedExpectation, ()) {
  const Scenario generated = *genScenario(smallGroups());
  const Scenario scenario = parseScenario(writeScenario(generated), "generated.yaml");
  const CaseRun run = runner().run(scenario, scenario.seed);
  if (!run.passed()) RC_FAIL(run.failureSummary() + "\n" + writeScenario(scenario));
  RC_TAG(toString(scenario.expect.outcome));
}

// Mapping faults that fire by chance: whether the handshake fails depends on the seed's draw, so
// the outcome is not judged against an expectation — only that it is one outcome for every
// surviving rank (C1's uniformity), and C3, C4, C5, C8.
RC_GTEST_PROP(ExploreProperty, ChanceFaultsKeepTheOutcomeUniform, ()) {
  GeneratorOptions options = smallGroups();
  options.chanceMappingFaults = true;
  const Scenario generated = *genScenario(options);
  const Scenario scenario = parseScenario(writeScenario(generated), "generated.yaml");
  const CaseRun run = runner().run(scenario, scenario.seed);

  int ok = 0, raised = 0;
  for (const RankResult& rank : run.record.ranks) {
    const bool reported =
        std::find(scenario.expect.reported.begin(), scenario.expect.reported.end(), rank.rank) !=
        scenario.expect.reported.end();
    if (reported) continue;
    ok += rank.status == RankStatus::kOk ? 1 : 0;
    raised += rank.status == RankStatus::kRaised ? 1 : 0;
    RC_ASSERT(rank.status == RankStatus::kOk || rank.status == RankStatus::kRaised);
  }
  if (ok > 0 && raised > 0) {
    RC_FAIL("mixed outcome: " + std::to_string(ok) + " ok, " + std::to_string(raised) +
            " raised\n" + writeScenario(scenario));
  }
  for (const Verdict& verdict : run.judgement.verdicts) {
    const bool judged =
        verdict.property == Property::kC3Cleanup || verdict.property == Property::kC4Addresses ||
        verdict.property == Property::kC5Agreement || verdict.property == Property::kC8Bounded;
    if (judged && verdict.failed()) {
      RC_FAIL(toString(verdict.property) + ": " + verdict.summary + "\n" + writeScenario(scenario));
    }
  }
  RC_ASSERT(run.record.harnessErrors.empty());
  RC_TAG(ok > 0 ? "returned" : "raised");
}

// The generators draw from every site, the table's two included, and keep such faults: a
// scenario drawn with only the table sites holds one, with the derived "this" on its rank.
TEST(ExploreGenerators, DrawTheTableSites) {
  const std::vector<FaultSite> sites = allSites();
  for (FaultSite site : {FaultSite::kAllocTable, FaultSite::kCopyTable}) {
    SCOPED_TRACE(toString(site));
    EXPECT_NE(std::find(sites.begin(), sites.end(), site), sites.end());
    GeneratorOptions options;
    options.sites = {site};
    ScenarioSpec spec;
    spec.size = 40;  // three ranks
    FaultSpec fault;
    fault.rank = 4;  // rank 1
    fault.error = 1;
    spec.faults = {fault};
    const Scenario scenario = buildScenario(spec, options);
    ASSERT_EQ(scenario.ranks, 3);
    ASSERT_EQ(scenario.faults.size(), 1u);
    EXPECT_EQ(scenario.faults[0].site, site);
    EXPECT_EQ(scenario.faults[0].ranks, std::vector<int>{1});
    EXPECT_EQ(scenario.faults[0].error, 205);
    EXPECT_FALSE(scenario.faults[0].peer.has_value());
    EXPECT_EQ(scenario.expect.messages.at(1).kind, MessageKind::kThis);
    EXPECT_EQ(scenario.expect.messages.at(0).kind, MessageKind::kAnother);
    // And with one rank (the table is built without a group).
    spec.size = 0;
    const Scenario one = buildScenario(spec, options);
    ASSERT_EQ(one.faults.size(), 1u);
    EXPECT_EQ(one.expect.messages.at(0).kind, MessageKind::kText);
  }
}

// The generators draw not-ready too, with and without the runner's agreement.
TEST(ExploreGenerators, DrawNotReady) {
  const std::vector<FaultSite> sites = allSites();
  EXPECT_NE(std::find(sites.begin(), sites.end(), FaultSite::kNotReady), sites.end());
  GeneratorOptions options;
  options.sites = {FaultSite::kNotReady};
  ScenarioSpec spec;
  spec.size = 40;  // three ranks
  FaultSpec fault;
  fault.rank = 4;   // rank 1
  fault.count = 2;  // not-ready takes no count
  spec.faults = {fault};
  for (bool agreeFirst : {true, false}) {
    SCOPED_TRACE(agreeFirst ? "agree first" : "without the agreement");
    spec.agreeFirst = agreeFirst;
    const Scenario scenario = buildScenario(spec, options);
    EXPECT_EQ(scenario.runner.agreeFirst, agreeFirst);
    ASSERT_EQ(scenario.faults.size(), 1u);
    EXPECT_EQ(scenario.faults[0].site, FaultSite::kNotReady);
    EXPECT_EQ(scenario.faults[0].count, 0);
    EXPECT_EQ(scenario.expect.messages.at(1).text, kNotReadyThisRankMessage);
    EXPECT_EQ(scenario.expect.messages.at(0).kind,
              agreeFirst ? MessageKind::kText : MessageKind::kGroup);
  }
}

}  // namespace
}  // namespace peerconf::harness::explore
