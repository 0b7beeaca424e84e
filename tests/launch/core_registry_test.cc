// The cores a scenario can name (core_registry.h): the registry's names, listing, lookup and
// replacement, the check of a scenario's `core:` at its value, the factory a launcher builds a
// scenario's ranks with (coreFor), and a launcher without the name.
#include "launch/core_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "planted/registry.h"
#include "scenario/load.h"

namespace peerconf::harness {

using launch::coreFor;
using launch::CoreRegistry;
using launch::LaunchOptions;
using launch::runnerFor;
using launch::runThreads;
using model::CoreBuffer;
using model::CoreFactory;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::ScenarioError;
using scenario::parseScenario;
namespace {

using ::testing::HasSubstr;

using planted::plantedRegistry;

// A factory that says which it is (CoreFactory's target), never called.
struct Tagged {
  int tag;
  std::unique_ptr<CoreBuffer> operator()(std::size_t /*nbytes*/, IpcBackend& /*backend*/,
                                         Group* /*group*/, std::string_view /*label*/) const {
    return nullptr;
  }
};

int tagOf(const CoreFactory& factory) {
  const Tagged* tagged = factory.target<Tagged>();
  return tagged != nullptr ? tagged->tag : -1;
}

Scenario naming(const std::string& core) {
  Scenario scenario = parseScenario("ranks: 2\nexpect: {outcome: success}\n", "code.yaml");
  scenario.core = core;
  return scenario;
}

TEST(CoreRegistry, AFreshRegistryKnowsOnlyProduction) {
  const CoreRegistry registry;
  EXPECT_EQ(registry.names(), std::vector<std::string>{"production"});
  EXPECT_NE(registry.find("production"), nullptr);
  EXPECT_EQ(registry.find("skips-agreement"), nullptr);
  EXPECT_EQ(registry.listing(), "production: the production PeerBuffer (src/peer_buffer.h)\n");
}

TEST(CoreRegistry, AddingANameTwiceReplacesTheCore) {
  CoreRegistry registry;
  registry.add("zeta", "first", Tagged{1});
  registry.add("alpha", "a core", Tagged{2});
  registry.add("zeta", "second", Tagged{3});
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"alpha", "production", "zeta"}));
  ASSERT_NE(registry.find("zeta"), nullptr);
  EXPECT_EQ(tagOf(*registry.find("zeta")), 3);
  EXPECT_THAT(registry.listing(), HasSubstr("zeta: second\n"));
  EXPECT_THAT(registry.listing(), ::testing::Not(HasSubstr("first")));
}

TEST(CoreRegistry, KnowsProductionAndEveryPlantedCore) {
  const CoreRegistry registry = plantedRegistry();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"accepts-long-exchange",
                                                        "chains-wrong-cause",
                                                        "chains-wrong-peer",
                                                        "claims-every-failure",
                                                        "closes-in-destructor",
                                                        "closes-mappings-twice",
                                                        "constructs-after-no",
                                                        "crashes-on-open",
                                                        "escapes-non-error",
                                                        "exits-on-own-failure",
                                                        "keeps-tables-after-close",
                                                        "leaks-on-exchange-timeout",
                                                        "leaks-on-failure",
                                                        "leaks-when-table-fails",
                                                        "names-missing-on-rank0",
                                                        "own-slot-holds-rank0",
                                                        "permuted-device-table",
                                                        "production",
                                                        "raises-only-on-failing-rank",
                                                        "reads-agreement-inverted",
                                                        "returns-alone-on-timeout",
                                                        "reuses-first-mapping",
                                                        "runtime-opens-refused-handles",
                                                        "runtime-refuses-reused-handles",
                                                        "seed-exchange",
                                                        "short-device-table",
                                                        "skips-agreement",
                                                        "skips-buffer-match",
                                                        "swallows-one-release-failure",
                                                        "swaps-peer-addresses",
                                                        "table-one-entry-long",
                                                        "trusts-own-vote",
                                                        "unwritten-device-table",
                                                        "waits-out-deadline"}));
  EXPECT_THAT(registry.listing(), HasSubstr("swaps-peer-addresses: "));
}

TEST(CoreRegistry, AnUnknownNameIsAnErrorAtItsValueListingEveryName) {
  const CoreRegistry registry = plantedRegistry();
  const Scenario scenario =
      parseScenario("ranks: 2\ncore: skips-agreemnt\nexpect: {outcome: success}\n", "typo.yaml");
  try {
    registry.check(scenario);
    FAIL() << "an unknown core passed";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.mark().line, 2);
    EXPECT_EQ(e.mark().column, 7);
    EXPECT_THAT(
        std::string(e.what()),
        HasSubstr(
            "typo.yaml:2:7: unknown core 'skips-agreemnt'; the cores are: "
            "accepts-long-exchange, chains-wrong-cause, "
            "chains-wrong-peer, "
            "claims-every-failure, closes-in-destructor, closes-mappings-twice, "
            "constructs-after-no, crashes-on-open, escapes-non-error, exits-on-own-failure, "
            "keeps-tables-after-close, leaks-on-exchange-timeout, leaks-on-failure, "
            "leaks-when-table-fails, "
            "names-missing-on-rank0, own-slot-holds-rank0, "
            "permuted-device-table, production, raises-only-on-failing-rank, "
            "reads-agreement-inverted, returns-alone-on-timeout, reuses-first-mapping, "
            "runtime-opens-refused-handles, "
            "runtime-refuses-reused-handles, seed-exchange, short-device-table, skips-agreement, "
            "skips-buffer-match, swallows-one-release-failure, "
            "swaps-peer-addresses, table-one-entry-long, trusts-own-vote, unwritten-device-table"));
  }
  // A scenario without `core:`, or with a known one, passes.
  EXPECT_NO_THROW(registry.check(naming("")));
  EXPECT_NO_THROW(registry.check(naming("skips-agreement")));
}

// A planted runner travels with its core's name; every other name, and no name, has none.
TEST(CoreRegistry, APlantedRunnerIsFoundByItsCoresName) {
  const CoreRegistry registry = plantedRegistry();
  const model::RunnerDecision runner = runnerFor(naming("constructs-after-no"), &registry);
  ASSERT_TRUE(runner);
  EXPECT_TRUE(runner(true, false));  // constructs on its own readiness, the agreement's no aside
  EXPECT_FALSE(runner(false, false));
  EXPECT_FALSE(runnerFor(naming("skips-agreement"), &registry));
  EXPECT_FALSE(runnerFor(naming(""), &registry));
  EXPECT_FALSE(runnerFor(naming("constructs-after-no"), nullptr));
}

TEST(CoreFor, AScenarioWithoutCoreGetsTheFallbackAndANamedOneTheRegistrys) {
  CoreRegistry registry;
  registry.add("planted", "a planted core", Tagged{7});
  EXPECT_EQ(tagOf(coreFor(naming(""), &registry, Tagged{1})), 1);
  EXPECT_EQ(tagOf(coreFor(naming(""), nullptr, Tagged{1})), 1);
  EXPECT_EQ(tagOf(coreFor(naming("planted"), &registry, Tagged{1})), 7);
}

TEST(CoreFor, ANameTheRegistryLacksOrNoRegistryIsAnError) {
  const CoreRegistry registry;
  try {
    (void)coreFor(naming("absent"), &registry, Tagged{1});
    FAIL() << "an unknown core was given a factory";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("names core 'absent'"));
  }
  EXPECT_THROW((void)coreFor(naming("production"), nullptr, Tagged{1}), std::invalid_argument);
}

TEST(CoreFor, ALauncherWithoutTheNameHasEveryRankMissingWithTheReason) {
  const Scenario scenario = parseScenario(
      "ranks: 2\ncore: skips-agreement\nexpect: {outcome: success}\n", "no-registry.yaml");
  const RunRecord record = runThreads(scenario, 1, LaunchOptions{});  // no registry
  ASSERT_EQ(record.ranks.size(), 2u);
  for (const RankResult& rank : record.ranks) {
    EXPECT_EQ(rank.status, RankStatus::kMissing);
    EXPECT_THAT(rank.message, HasSubstr("names core 'skips-agreement'"));
  }
}

}  // namespace
}  // namespace peerconf::harness
