// Negative controls: copies of the core with ONE planted defect each (tests/planted/) run on the
// suite's own scenario files through runThreads. The harness must flag each defect with the
// property it breaks, on the ranks where it shows; the production core must pass the same files.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "judged_run.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "model/scenario.h"
#include "planted/accepts_long_exchange.h"
#include "planted/escapes_non_error.h"
#include "planted/leaks_on_failure.h"
#include "planted/leaks_when_table_fails.h"
#include "planted/raises_only_on_failing_rank.h"
#include "planted/skips_agreement.h"
#include "planted/waits_out_deadline.h"
#include "planted/wrapped_defects.h"
#include "scenario/load.h"

namespace peerconf::harness {

using judge::story;
using launch::ClockMode;
using launch::LaunchOptions;
using launch::runThreads;
using model::CoreFactory;
using model::coreFactoryOf;
using model::Fault;
using model::FaultSite;
using model::Finding;
using model::Point;
using model::productionCore;
using model::Property;
using model::RunRecord;
using model::Scenario;
using model::Verdict;
using scenario::expandScenarioPaths;
using scenario::loadScenario;
namespace {

using Checked = testing::JudgedRun;

Checked run(const Scenario& scenario, const CoreFactory& core, ClockMode clock = ClockMode::kReal) {
  LaunchOptions options;
  options.core = core;
  options.clock = clock;
  return testing::runAndJudge(scenario, options);
}

Checked run(const std::string& file, const CoreFactory& core, ClockMode clock = ClockMode::kReal) {
  return run(loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/" + file), core, clock);
}

// open-fails-rank1-to-peer0 with rank 1 late (100 ms) at its first open, so that the other ranks
// have mapped every peer before rank 1 fails. Without an agreement, a failing rank frees its
// buffer at once; a peer still mapping it would then fail too, and which ranks return would
// depend on timing. The lateness is far inside the deadline: the expected outcome is unchanged.
Scenario oneRankFailsLate() {
  Scenario scenario = loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/" +
                                   "open/open-fails-rank1-to-peer0.yaml");
  Fault late;
  late.site = FaultSite::kDelay;
  late.ranks = {1};
  late.at = Point::kOpen;
  late.delay = std::chrono::milliseconds(100);
  scenario.faults.push_back(late);
  scenario.name = "open-fails-rank1-to-peer0-late";
  return scenario;
}

// The ranks a verdict's findings name, among those whose text contains `marker` (empty: any).
std::set<int> ranksNamed(const Verdict& verdict, const std::string& marker = {}) {
  std::set<int> ranks;
  for (const Finding& finding : verdict.findings) {
    if (finding.rank >= 0 && finding.text.find(marker) != std::string::npos) {
      ranks.insert(finding.rank);
    }
  }
  return ranks;
}

// One rank of four fails to map one peer: the case the seed module is written for.
constexpr const char* kOneRankFails = "open/open-fails-rank1-to-peer0.yaml";
// Rank 0 maps peers 1 and 2, then peer 3's stale handle fails: it holds two mappings then.
constexpr const char* kFailsAfterTwoOpens = "handles/handle-stale-one-peer.yaml";
// Ranks 0 and 7 of eight both fail on peer 3, each after mapping the peers before it.
constexpr const char* kTwoRanksFailLate = "open/open-fails-two-ranks.yaml";

// The control of the control: the production core passes every file the planted cores fail.
TEST(NegativeControls, ProductionCorePassesTheSameScenarios) {
  for (const char* file : {kOneRankFails, kFailsAfterTwoOpens, kTwoRanksFailLate}) {
    SCOPED_TRACE(file);
    const Checked checked = run(file, productionCore());
    EXPECT_TRUE(checked.judgement.passed) << checked.story();
  }
  const Checked checked = run(oneRankFailsLate(), productionCore());
  EXPECT_TRUE(checked.judgement.passed) << checked.story();
}

// Defect 1: no agreement. Rank 1 raises "this"; ranks 0, 2 and 3 never learn and return.
TEST(NegativeControls, SkipsAgreementIsMixedOutcomeOnTheRanksThatReturned) {
  const Checked checked = run(oneRankFailsLate(), coreFactoryOf<planted::SkipsAgreement>());
  EXPECT_FALSE(checked.judgement.passed);

  const Verdict& c1 = checked.verdict(Property::kC1Uniform);
  ASSERT_TRUE(c1.failed()) << checked.story();
  EXPECT_NE(c1.summary.find("mixed outcome"), std::string::npos) << c1.summary;
  EXPECT_EQ(ranksNamed(c1, "(expected to raise)"), (std::set<int>{0, 2, 3})) << checked.story();

  // C2: the three that returned never said "another"; rank 1's own "this" is right.
  const Verdict& c2 = checked.verdict(Property::kC2Message);
  ASSERT_TRUE(c2.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c2), (std::set<int>{0, 2, 3})) << checked.story();

  // The cleanup and the addresses are not what this defect breaks.
  EXPECT_FALSE(checked.verdict(Property::kC3Cleanup).failed()) << checked.story();
}

// Defect 1 on the suite's file as written: rank 1 may free its buffer while a peer is still
// mapping it, so that peer may fail too ("this" where "another" was due). Whichever way the race
// goes, the harness flags it, and never blames rank 1, whose "this" is right.
TEST(NegativeControls, SkipsAgreementIsFlaggedWhicheverWayTheRaceGoes) {
  const Checked checked = run(kOneRankFails, coreFactoryOf<planted::SkipsAgreement>());
  EXPECT_FALSE(checked.judgement.passed);
  const Verdict& c2 = checked.verdict(Property::kC2Message);
  ASSERT_TRUE(c2.failed()) << checked.story();
  const std::set<int> named = ranksNamed(c2);
  EXPECT_FALSE(named.empty());
  EXPECT_EQ(named.count(1), 0u) << checked.story();
  const Verdict& c1 = checked.verdict(Property::kC1Uniform);
  if (c1.failed()) EXPECT_EQ(ranksNamed(c1, "(expected to raise)").count(1), 0u);
}

// Defect 1, C5: no rank made the agreement call, yet ranks returned from a group of four.
TEST(NegativeControls, SkipsAgreementIsAMissingAgreement) {
  const Checked checked = run(oneRankFailsLate(), coreFactoryOf<planted::SkipsAgreement>());
  const Verdict& c5 = checked.verdict(Property::kC5Agreement);
  ASSERT_TRUE(c5.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c5), (std::set<int>{0, 2, 3})) << checked.story();
}

// Defect 2: the agreement runs and says false everywhere, but only rank 1 raises.
TEST(NegativeControls, RaisesOnlyOnFailingRankIsFlaggedOnTheOtherRanks) {
  const Checked checked = run(kOneRankFails, coreFactoryOf<planted::RaisesOnlyOnFailingRank>());
  EXPECT_FALSE(checked.judgement.passed);

  const Verdict& c1 = checked.verdict(Property::kC1Uniform);
  ASSERT_TRUE(c1.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c1, "(expected to raise)"), (std::set<int>{0, 2, 3})) << checked.story();

  const Verdict& c2 = checked.verdict(Property::kC2Message);
  ASSERT_TRUE(c2.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c2), (std::set<int>{0, 2, 3})) << checked.story();

  // C5 sees it from the agreement itself: they passed in=1, saw out=0, and still returned.
  const Verdict& c5 = checked.verdict(Property::kC5Agreement);
  ASSERT_TRUE(c5.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c5, "without agreeing"), (std::set<int>{0, 2, 3})) << checked.story();
}

// Defect 3: the failing rank forgets the two mappings it opened before its failure.
TEST(NegativeControls, LeaksOnFailureIsFlaggedOnTheFailingRanksMappings) {
  const Checked checked = run(kFailsAfterTwoOpens, coreFactoryOf<planted::LeaksOnFailure>());
  EXPECT_FALSE(checked.judgement.passed);

  const Verdict& c3 = checked.verdict(Property::kC3Cleanup);
  ASSERT_TRUE(c3.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c3, "never closed"), (std::set<int>{0})) << checked.story();
  EXPECT_EQ(ranksNamed(c3, "mapping of peer 1"), (std::set<int>{0})) << checked.story();
  EXPECT_EQ(ranksNamed(c3, "mapping of peer 2"), (std::set<int>{0})) << checked.story();

  // Everything else about the handshake is right: one outcome, the right messages, agreement.
  EXPECT_FALSE(checked.verdict(Property::kC1Uniform).failed()) << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC2Message).failed()) << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC5Agreement).failed()) << checked.story();
}

// Defect 3 with two failing ranks of eight: both are named, no other rank is.
TEST(NegativeControls, LeaksOnFailureNamesEveryFailingRank) {
  const Checked checked = run(kTwoRanksFailLate, coreFactoryOf<planted::LeaksOnFailure>());
  const Verdict& c3 = checked.verdict(Property::kC3Cleanup);
  ASSERT_TRUE(c3.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c3, "never closed"), (std::set<int>{0, 7})) << checked.story();
}

// Defect 4: a rank whose device address table fails (its allocation or the copy into it) forgets
// its local buffer. Only the table sites show it: every open failure above passes.
constexpr const char* kTableAllocFails = "table/alloc-table-fails-rank1-of-2.yaml";
constexpr const char* kTableCopyFails = "table/copy-table-fails-one-rank.yaml";

TEST(NegativeControls, ProductionCorePassesTheTableScenarios) {
  for (const std::string& file :
       expandScenarioPaths({std::string(PEERCONF_SCENARIOS_DIR) + "/table"})) {
    SCOPED_TRACE(file);
    const Checked checked = run(loadScenario(file), productionCore());
    EXPECT_TRUE(checked.judgement.passed) << checked.story();
  }
}

TEST(NegativeControls, LeaksWhenTableFailsIsFlaggedOnTheRankWhoseTableFailed) {
  for (const auto& [file, failing] :
       {std::pair<const char*, int>{kTableAllocFails, 1}, {kTableCopyFails, 2}}) {
    SCOPED_TRACE(file);
    const Checked checked = run(file, planted::leaksWhenTableFailsCore());
    EXPECT_FALSE(checked.judgement.passed) << checked.story();

    // C3 names the leak: the 64 KiB local buffer of the failing rank, allocated and never freed.
    const Verdict& c3 = checked.verdict(Property::kC3Cleanup);
    ASSERT_TRUE(c3.failed()) << checked.story();
    EXPECT_EQ(ranksNamed(c3), (std::set<int>{failing})) << checked.story();
    EXPECT_EQ(ranksNamed(c3, "buffer"), (std::set<int>{failing})) << checked.story();
    EXPECT_EQ(ranksNamed(c3, "65536 bytes"), (std::set<int>{failing})) << checked.story();
    EXPECT_EQ(ranksNamed(c3, "allocated, never freed"), (std::set<int>{failing}))
        << checked.story();

    // Everything else about the handshake is right: one outcome, the right messages, agreement.
    EXPECT_FALSE(checked.verdict(Property::kC1Uniform).failed()) << checked.story();
    EXPECT_FALSE(checked.verdict(Property::kC2Message).failed()) << checked.story();
    EXPECT_FALSE(checked.verdict(Property::kC5Agreement).failed()) << checked.story();
  }
}

// The same core passes the open failures: before the table sites, nothing could catch it.
TEST(NegativeControls, LeaksWhenTableFailsPassesEveryOpenFailure) {
  for (const char* file : {kOneRankFails, kFailsAfterTwoOpens, kTwoRanksFailLate}) {
    SCOPED_TRACE(file);
    const Checked checked = run(file, planted::leaksWhenTableFailsCore());
    EXPECT_TRUE(checked.judgement.passed) << checked.story();
  }
}

// ---- The blind spots of issue 12 (C2 cause, C3 close() itself, C4 device table, escapes) ----

constexpr const char* kSuccess4 = "handshake/success-4-ranks.yaml";
constexpr const char* kCloseFailsOnePeer = "close-free/close-fails-one-peer.yaml";  // rank 1 -> 2
constexpr const char* kFreeFails = "close-free/free-fails.yaml";                    // rank 3

// Only `property` fails, and its findings name exactly `ranks` with `marker`.
void expectCaughtBy(const Checked& checked, Property property, const std::set<int>& ranks,
                    const std::string& marker) {
  EXPECT_FALSE(checked.judgement.passed) << checked.story();
  const Verdict& verdict = checked.verdict(property);
  ASSERT_TRUE(verdict.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(verdict, marker), ranks) << checked.story();
}

TEST(NegativeControls, ProductionCorePassesTheBlindSpotScenarios) {
  for (const char* file : {kSuccess4, kCloseFailsOnePeer, kFreeFails, kOneRankFails,
                           kFailsAfterTwoOpens, "handles/handle-corrupt-one-peer.yaml"}) {
    SCOPED_TRACE(file);
    const Checked checked = run(file, productionCore());
    EXPECT_TRUE(checked.judgement.passed) << checked.story();
  }
}

// (a) close() releases nothing; the destructor frees. C3 judges close() before the destructor.
TEST(NegativeControls, ClosesInDestructorIsCaughtByC3OnEveryRank) {
  const Checked checked = run(kSuccess4, planted::closesInDestructorCore());
  expectCaughtBy(checked, Property::kC3Cleanup, {0, 1, 2, 3}, "the destructor closed it");
  EXPECT_EQ(ranksNamed(checked.verdict(Property::kC3Cleanup), "the destructor freed it"),
            (std::set<int>{0, 1, 2, 3}))
      << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC4Addresses).failed()) << checked.story();
}

// (b) the device table the kernels read is not the host table: C4 reads it back.
TEST(NegativeControls, PermutedDeviceTableIsCaughtByC4NamingEverySlot) {
  const Checked checked = run(kSuccess4, planted::permutedDeviceTableCore());
  expectCaughtBy(checked, Property::kC4Addresses, {0, 1, 2, 3}, "addressesDevice()[");
  const Verdict& c4 = checked.verdict(Property::kC4Addresses);
  for (int rank = 0; rank < 4; ++rank) {
    for (int slot = 0; slot < 4; ++slot) {
      EXPECT_FALSE(
          ranksNamed(c4, "addressesDevice()[" + std::to_string(slot) + "] is").count(rank) == 0)
          << "rank " << rank << " slot " << slot << "\n"
          << checked.story();
    }
  }
  EXPECT_FALSE(checked.verdict(Property::kC3Cleanup).failed()) << checked.story();
}

TEST(NegativeControls, UnwrittenDeviceTableIsCaughtByC4) {
  const Checked checked = run(kSuccess4, planted::unwrittenDeviceTableCore());
  expectCaughtBy(checked, Property::kC4Addresses, {0, 1, 2, 3}, "but addresses()[");
  EXPECT_FALSE(checked.verdict(Property::kC3Cleanup).failed()) << checked.story();
}

// Only the last slot is wrong: C4 must compare every slot, the last one too, on every rank.
TEST(NegativeControls, ShortDeviceTableIsCaughtByC4OnTheLastSlot) {
  const Checked checked = run(kSuccess4, planted::shortDeviceTableCore());
  expectCaughtBy(checked, Property::kC4Addresses, {0, 1, 2, 3}, "addressesDevice()[3] is");
  const Verdict& c4 = checked.verdict(Property::kC4Addresses);
  for (int slot = 0; slot < 3; ++slot) {
    EXPECT_TRUE(ranksNamed(c4, "addressesDevice()[" + std::to_string(slot) + "] is").empty())
        << "slot " << slot << "\n"
        << checked.story();
  }
  EXPECT_FALSE(checked.verdict(Property::kC3Cleanup).failed()) << checked.story();
}

// (c) the failing rank chains another error than the one that failed.
TEST(NegativeControls, ChainsWrongCauseIsCaughtByC2OnTheFailingRank) {
  const Checked checked = run(kOneRankFails, planted::chainsWrongCauseCore());
  expectCaughtBy(checked, Property::kC2Message, {1}, "not the planted failure: the open fault");
  EXPECT_EQ(ranksNamed(checked.verdict(Property::kC2Message)), (std::set<int>{1}))
      << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC1Uniform).failed()) << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC3Cleanup).failed()) << checked.story();
}

// A handle fault: the cause must be the open of the named peer, whatever the runtime answered.
TEST(NegativeControls, ChainsWrongCauseIsCaughtOnAHandleFault) {
  const Checked checked =
      run("handles/handle-corrupt-one-peer.yaml", planted::chainsWrongCauseCore());
  const Verdict& c2 = checked.verdict(Property::kC2Message);
  ASSERT_TRUE(c2.failed()) << checked.story();
  EXPECT_FALSE(ranksNamed(c2, "the cause must be the open of that peer").empty())
      << checked.story();
}

// (d) close() swallows a single failed release: C3 wants the CloseError where the fault fired.
TEST(NegativeControls, SwallowsOneReleaseFailureIsCaughtByC3WhereTheFaultFired) {
  for (const char* file : {kCloseFailsOnePeer, kFreeFails}) {
    SCOPED_TRACE(file);
    const Checked checked = run(file, planted::swallowsOneReleaseFailureCore());
    const int rank = std::string(file) == kFreeFails ? 3 : 1;
    expectCaughtBy(checked, Property::kC3Cleanup, {rank}, "but close() returned without raising");
    EXPECT_EQ(ranksNamed(checked.verdict(Property::kC3Cleanup)), (std::set<int>{rank}))
        << checked.story();
  }
}

// (e) a non-Error exception escapes the open phase without agreeing or releasing.
TEST(NegativeControls, EscapesNonErrorIsCaught) {
  const Checked checked = run(kOneRankFails, planted::escapesNonErrorCore());
  EXPECT_FALSE(checked.judgement.passed) << checked.story();
  // The failing rank raised a plain std::exception, the others timed out at the agreement.
  const Verdict& c2 = checked.verdict(Property::kC2Message);
  ASSERT_TRUE(c2.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c2, "expected HandshakeError"), (std::set<int>{0, 1, 2, 3}))
      << checked.story();
  // It kept its buffer and the mapping it opened before the failure.
  const Verdict& c3 = checked.verdict(Property::kC3Cleanup);
  ASSERT_TRUE(c3.failed()) << checked.story();
  EXPECT_EQ(ranksNamed(c3, "never freed"), (std::set<int>{1})) << checked.story();
}

// (f) the ranks raise the right messages, but only after waiting out the deadline: on simulated
// time only C8's together bound can tell (scenarios/README.md, "Raising together").
TEST(NegativeControls, WaitsOutDeadlineIsCaughtByC8OnSimulatedTime) {
  const Checked checked =
      run(kOneRankFails, coreFactoryOf<planted::WaitsOutDeadline>(), ClockMode::kSim);
  expectCaughtBy(checked, Property::kC8Bounded, {0, 2, 3}, "past one agreement round");
  EXPECT_EQ(ranksNamed(checked.verdict(Property::kC8Bounded), "past one agreement round"),
            (std::set<int>{0, 2, 3}))
      << checked.story();
  for (Property property :
       {Property::kC1Uniform, Property::kC2Message, Property::kC3Cleanup, Property::kC5Agreement}) {
    EXPECT_FALSE(checked.verdict(property).failed()) << checked.story();
  }
  // The production core raises together on the same file and clock.
  const Checked production = run(kOneRankFails, productionCore(), ClockMode::kSim);
  EXPECT_TRUE(production.judgement.passed) << production.story();
}

// (g) the own slot holds rank 0's mapping on every rank but 0: C4 must check the own slot on
// every rank, not on rank 0 only.
TEST(NegativeControls, OwnSlotHoldsRank0IsCaughtByC4OnEveryRankButZero) {
  const Checked checked = run(kSuccess4, planted::ownSlotHoldsRank0Core());
  expectCaughtBy(checked, Property::kC4Addresses, {1, 2, 3}, "is not this rank's local pointer");
}

// (h) close() unmaps every peer twice. Where no close fault is planted the runtime refuses the
// second close; where one is (rank 1, peer 2) both closes fail; on every rank only C3's memory of
// what it saw released names the second.
TEST(NegativeControls, ClosesMappingsTwiceIsCaughtByC3) {
  const Checked checked = run(kSuccess4, planted::closesMappingsTwiceCore());
  expectCaughtBy(checked, Property::kC3Cleanup, {0, 1, 2, 3}, "closed twice (the second release");
  const Checked withFault = run(kCloseFailsOnePeer, planted::closesMappingsTwiceCore());
  expectCaughtBy(withFault, Property::kC3Cleanup, {0, 1, 2, 3},
                 "closed twice (the second release failed");
}

// (i) every rank agreed (out=1), but the core reads it inverted and raises "another".
TEST(NegativeControls, ReadsAgreementInvertedIsCaughtByC5OnEveryRank) {
  const Checked checked = run(kSuccess4, planted::readsAgreementInvertedCore());
  expectCaughtBy(checked, Property::kC5Agreement, {0, 1, 2, 3}, "saw out=1");
  EXPECT_TRUE(checked.verdict(Property::kC1Uniform).failed()) << checked.story();
}

// (j) the failing rank exits instead of raising, with no exit fault planted: C1 must not count
// it as raised, C8 must report a stopped rank the scenario does not expect.
TEST(NegativeControls, ExitsOnOwnFailureIsCaughtByC1AndC8) {
  const Checked checked = run(kOneRankFails, planted::exitsOnOwnFailureCore(), ClockMode::kSim);
  expectCaughtBy(checked, Property::kC8Bounded, {1}, "but the scenario expects no such rank");
  const Verdict& c1 = checked.verdict(Property::kC1Uniform);
  EXPECT_TRUE(c1.failed()) << checked.story();
  EXPECT_NE(c1.summary.find("not every rank came back"), std::string::npos) << checked.story();
}

// ---- The blind spots of issue 42 ----

// (k) the right error (open, its code) chained from the wrong peer's open: only the peer differs.
TEST(NegativeControls, ChainsWrongPeerIsCaughtByC2OnTheFailingRankOnly) {
  // The control's own file as a plain scenario: without its `core:` (the core is handed to the
  // launcher here) and its violations (C2 must fail, not pass as an expected violation).
  Scenario scenario =
      loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/controls/c2-chains-wrong-peer.yaml");
  scenario.core.clear();
  scenario.expect.violations.clear();
  scenario.expect.findings.clear();
  const Checked checked = run(scenario, planted::chainsWrongPeerCore());
  expectCaughtBy(checked, Property::kC2Message, {0},
                 "the chained cause is open (peer 1) with hipErrorMapFailed (205), not the "
                 "planted failure: the open fault fired for peer 2");
  EXPECT_FALSE(checked.verdict(Property::kC1Uniform).failed()) << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC3Cleanup).failed()) << checked.story();
}

// (l) close() releases everything but the object still names it: C3 on every rank, each view.
TEST(NegativeControls, KeepsTablesAfterCloseIsCaughtByC3OnEveryRank) {
  const Checked checked = run(kSuccess4, planted::keepsTablesAfterCloseCore());
  expectCaughtBy(checked, Property::kC3Cleanup, {0, 1, 2, 3},
                 "after close() returned, addresses() still holds 4 address(es)");
  EXPECT_EQ(ranksNamed(checked.verdict(Property::kC3Cleanup), "addressesDevice() is still"),
            (std::set<int>{0, 1, 2, 3}))
      << checked.story();
  EXPECT_EQ(ranksNamed(checked.verdict(Property::kC3Cleanup), "bytes() still views 65536 bytes"),
            (std::set<int>{0, 1, 2, 3}))
      << checked.story();
  EXPECT_FALSE(checked.verdict(Property::kC4Addresses).failed()) << checked.story();
}

// (m) a longer exchange than the group, read as if it had the group's length.
TEST(NegativeControls, AcceptsLongExchangeIsCaughtByC1AndC2) {
  EXPECT_TRUE(run("group/exchange-long.yaml", productionCore()).judgement.passed);
  const Checked checked = run("group/exchange-long.yaml", planted::acceptsLongExchangeCore());
  EXPECT_TRUE(checked.verdict(Property::kC1Uniform).failed()) << checked.story();
  EXPECT_FALSE(ranksNamed(checked.verdict(Property::kC2Message), "expected HandshakeError").empty())
      << checked.story();
}

}  // namespace
}  // namespace peerconf::harness
