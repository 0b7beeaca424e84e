// Exhaustive exploration: every subset of open failures of 4 ranks passes on the production
// core within the time budget; smaller enumerations catch every planted defect where it shows.
#include "explore/exhaustive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "model/scenario.h"
#include "planted/leaks_on_failure.h"
#include "planted/leaks_when_table_fails.h"
#include "planted/skips_agreement.h"
#include "scenario/load.h"

namespace peerconf::harness::explore {

using model::coreFactoryOf;
using model::Fault;
using model::FaultSite;
using model::Scenario;
using model::toString;
using scenario::loadScenario;
namespace {

class ExploreExhaustive : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = std::filesystem::temp_directory_path() /
           ("peerconf-exhaustive-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(out_);
  }
  void TearDown() override { std::filesystem::remove_all(out_); }

  ExhaustiveResult enumerate(ExhaustiveOptions options) {
    options.outDir = out_.string();
    options.quiet = true;
    std::ostringstream log;
    ExhaustiveResult result = exhaustive(options, log);
    std::ostringstream summary;
    printSummary(result, options, summary);
    summary_ = summary.str();
    return result;
  }

  std::filesystem::path out_;
  std::string summary_;
};

TEST_F(ExploreExhaustive, EverySubsetOfOpenFailuresOfFourRanksPasses) {
  ExhaustiveOptions options;
  options.ranks = 4;
  const ExhaustiveResult result = enumerate(options);
  EXPECT_EQ(result.cases, 4096) << summary_;
  EXPECT_EQ(result.passed, 4096) << summary_;
  EXPECT_EQ(result.perOutcome.at("success").cases, 1);
  EXPECT_EQ(result.perOutcome.at("raise").cases, 4095);
  EXPECT_TRUE(result.files.empty());
  // The target is 10 s on a 2-core box; allow a loaded CI machine three times that.
  EXPECT_LT(result.seconds, 30.0) << summary_;
  std::cout << summary_;
}

TEST_F(ExploreExhaustive, ALateRankAtEachPointChangesNoOutcome) {
  ExhaustiveOptions options;
  options.ranks = 3;
  options.withLate = true;
  const ExhaustiveResult result = enumerate(options);
  EXPECT_EQ(result.cases, 64 * (1 + 3 * 5)) << summary_;
  EXPECT_TRUE(result.ok()) << summary_;
}

// Without the agreement a rank learns of a failure only from its own opens. When no rank fails,
// C5 still sees every rank return without agreeing; when every rank fails on its own (all say
// "this", as they should) the defect is invisible; every other subset leaves some rank that
// should say "another" and does not: it returns (C1, C2), or it meets the failing rank's already
// freed buffer and says "this" (C2).
TEST_F(ExploreExhaustive, SkipsAgreementFailsWhereSomeRankMapsEveryPeer) {
  ExhaustiveOptions options;
  options.ranks = 3;
  options.core = coreFactoryOf<planted::SkipsAgreement>();
  options.coreName = "SkipsAgreement";
  options.maxFailureFiles = 5;
  const ExhaustiveResult result = enumerate(options);
  int expected = 0;
  for (std::uint64_t mask = 1; mask < 64; ++mask) {
    bool someRankClean = false;
    for (int rank = 0; rank < 3; ++rank) someRankClean |= (mask >> (2 * rank) & 3U) == 0;
    expected += someRankClean ? 1 : 0;
  }
  EXPECT_EQ(expected, 36);
  EXPECT_EQ(result.cases, 64);
  // Every subset where some rank maps every peer fails (+ the empty subset, through C5). Others
  // may fail too, on C2 alone: a rank that raises without agreeing frees its buffer while a peer
  // may still be opening it, and that peer's open then fails with an error no fault planted
  // (C2: "no fault fired on this rank ... to explain it"), depending on the interleaving.
  EXPECT_GE(result.failed, expected + 1) << summary_;
  EXPECT_GE(result.perProperty.at("C2"), expected) << summary_;
  ASSERT_EQ(result.files.size(), 5u);
  for (const std::string& file : result.files) EXPECT_NO_THROW(loadScenario(file)) << file;
}

TEST_F(ExploreExhaustive, LeaksOnFailureFailsExactlyWhereAFailingRankHadOpenedAPeer) {
  ExhaustiveOptions options;
  options.ranks = 3;
  options.core = coreFactoryOf<planted::LeaksOnFailure>();
  options.coreName = "LeaksOnFailure";
  const ExhaustiveResult result = enumerate(options);
  // With 3 ranks a rank opens two peers; it leaks when its first peer succeeds and its second
  // fails: pair (r, first) clear and (r, second) set. Count the subsets where some rank does.
  int expected = 0;
  for (std::uint64_t mask = 0; mask < 64; ++mask) {
    bool leaks = false;
    for (int rank = 0; rank < 3; ++rank) {
      const int first = 2 * rank, second = 2 * rank + 1;  // bits of (rank, peer) in peer order
      leaks = leaks || ((mask >> first & 1U) == 0 && (mask >> second & 1U) == 1);
    }
    expected += leaks ? 1 : 0;
  }
  EXPECT_EQ(result.failed, expected) << summary_;
  EXPECT_EQ(result.perProperty.at("C3"), expected) << summary_;
  EXPECT_EQ(result.perProperty.size(), 1u) << summary_;
}

// The table failures --with-table adds for a subset: each site on each rank whose opens all
// succeed ("clean"), and on every clean rank when there are at least two.
int tableCases(int ranks, std::uint64_t mask) {
  int clean = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const std::uint64_t bits = (std::uint64_t{1} << (ranks - 1)) - 1;  // (rank, peer) pairs
    clean += (mask >> (rank * (ranks - 1)) & bits) == 0 ? 1 : 0;
  }
  return 2 * (clean + (clean >= 2 ? 1 : 0));
}

TEST_F(ExploreExhaustive, WithTableEnumeratesBothTableSitesOnEveryReachableRank) {
  ExhaustiveOptions options;
  options.ranks = 3;
  options.withTable = true;
  std::set<std::string> sites;
  int expected = 0;
  for (std::uint64_t mask = 0; mask < 64; ++mask) {
    expected += 1 + tableCases(3, mask);
    for (const TableFailure& table : tableVariants(3)) {
      if (tableRanks(3, mask, table).empty()) continue;
      const Scenario scenario = exhaustiveCase(options, mask, std::nullopt, table);
      for (const Fault& fault : scenario.faults) sites.insert(toString(fault.site));
    }
  }
  EXPECT_EQ(sites, (std::set<std::string>{"open", "alloc-table", "copy-table"}));
  // 3 ranks: each site on ranks 0, 1, 2 and on every rank.
  EXPECT_EQ(tableVariants(3).size(), 8u);
  EXPECT_EQ(tableVariants(1).size(), 2u);

  const ExhaustiveResult result = enumerate(options);
  EXPECT_EQ(result.cases, expected) << summary_;
  EXPECT_EQ(result.passed, expected) << summary_;
  EXPECT_EQ(result.perOutcome.at("success").cases, 1) << summary_;
  EXPECT_NE(summary_.find("alloc-table or copy-table"), std::string::npos) << summary_;

  // A rank whose open fails never reaches its table: no table fault is planted there.
  const Scenario blocked =
      exhaustiveCase(options, 0b11, std::nullopt, TableFailure{FaultSite::kCopyTable, 0});
  for (const Fault& fault : blocked.faults) EXPECT_EQ(fault.site, FaultSite::kOpen);
  EXPECT_EQ(tableRanks(3, 0b11, {FaultSite::kAllocTable, TableFailure::kEveryRank}),
            (std::vector<int>{1, 2}));
}

// A core that leaks its buffer when its table fails passes every subset of open failures, and
// fails (C3, alone) every case --with-table adds.
TEST_F(ExploreExhaustive, LeaksWhenTableFailsShowsOnlyWithTheTableSites) {
  ExhaustiveOptions options;
  options.ranks = 3;
  options.core = planted::leaksWhenTableFailsCore();
  options.coreName = std::string(planted::kLeaksWhenTableFailsName);
  options.maxFailureFiles = 3;
  EXPECT_TRUE(enumerate(options).ok()) << summary_;

  options.withTable = true;
  const ExhaustiveResult result = enumerate(options);
  int tables = 0;
  for (std::uint64_t mask = 0; mask < 64; ++mask) tables += tableCases(3, mask);
  EXPECT_EQ(result.failed, tables) << summary_;
  EXPECT_EQ(result.perProperty.at("C3"), tables) << summary_;
  EXPECT_EQ(result.perProperty.size(), 1u) << summary_;
  ASSERT_EQ(result.files.size(), 3u);
  for (const std::string& file : result.files) EXPECT_NO_THROW(loadScenario(file)) << file;
}

}  // namespace
}  // namespace peerconf::harness::explore
