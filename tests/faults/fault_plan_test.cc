// Unit tests of FaultPlan and RankFaults: which rank, peer and point each site fires for, counts,
// seeded probabilities, the events recorded, and the order atPoint applies delay, death, hang.
#include "faults/fault_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "faults_test_support.h"

namespace peerconf::faults {
namespace {

using harness::model::EventKind;
using harness::model::FaultSite;
using harness::model::Point;
using testing::Died;
using testing::fault;
using ::testing::HasSubstr;
using ::testing::InSequence;
using testing::MockRankControl;
using ::testing::Optional;
using testing::RankUnderTest;
using testing::scenario;
using ::testing::StrictMock;

TEST(FaultPlanTest, ErrorSitesFireOnlyOnTheirRanks) {
  auto f = fault(FaultSite::kAlloc, {1, 3});
  f.error = 217;
  const FaultPlan plan = faultPlan(scenario(4, {f}));
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    RankUnderTest r(plan, rank);
    if (rank == 1 || rank == 3) {
      EXPECT_THAT(r.faults->failAlloc(), Optional(217));
    } else {
      EXPECT_EQ(r.faults->failAlloc(), std::nullopt);
    }
    EXPECT_EQ(r.faults->failGetHandle(), std::nullopt);
    EXPECT_EQ(r.faults->failFree(), std::nullopt);
    EXPECT_EQ(r.faults->failOpen(0), std::nullopt);
  }
}

TEST(FaultPlanTest, EachErrorSiteAnswersOnlyItsOwnQuery) {
  const FaultSite sites[] = {FaultSite::kAlloc,    FaultSite::kGetHandle, FaultSite::kOpen,
                             FaultSite::kClose,    FaultSite::kFree,      FaultSite::kAllocTable,
                             FaultSite::kCopyTable};
  for (const FaultSite site : sites) {
    SCOPED_TRACE(std::string(siteName(site)));
    const FaultPlan plan = faultPlan(scenario(2, {fault(site, {0})}));
    RankUnderTest r(plan, 0);
    EXPECT_EQ(r.faults->failAlloc().has_value(), site == FaultSite::kAlloc);
    EXPECT_EQ(r.faults->failGetHandle().has_value(), site == FaultSite::kGetHandle);
    EXPECT_EQ(r.faults->failOpen(1).has_value(), site == FaultSite::kOpen);
    EXPECT_EQ(r.faults->failClose(1).has_value(), site == FaultSite::kClose);
    EXPECT_EQ(r.faults->failFree().has_value(), site == FaultSite::kFree);
    EXPECT_EQ(r.faults->failAllocTable().has_value(), site == FaultSite::kAllocTable);
    EXPECT_EQ(r.faults->failCopyTable().has_value(), site == FaultSite::kCopyTable);
    EXPECT_EQ(r.faults->fired(), std::set<FaultSite>{site});
  }
}

TEST(FaultPlanTest, ErrorZeroMeansTheSiteDefault) {
  const FaultPlan plan =
      faultPlan(scenario(2, {fault(FaultSite::kAlloc, {0}), fault(FaultSite::kOpen, {0}),
                             fault(FaultSite::kClose, {0}), fault(FaultSite::kFree, {0}),
                             fault(FaultSite::kGetHandle, {0}), fault(FaultSite::kAllocTable, {0}),
                             fault(FaultSite::kCopyTable, {0})}));
  RankUnderTest r(plan, 0);
  EXPECT_THAT(r.faults->failAllocTable(), Optional(2));
  EXPECT_THAT(r.faults->failCopyTable(), Optional(1));
  EXPECT_THAT(r.faults->failAlloc(), Optional(2));
  EXPECT_THAT(r.faults->failGetHandle(), Optional(1));
  EXPECT_THAT(r.faults->failOpen(1), Optional(1));
  EXPECT_THAT(r.faults->failClose(1), Optional(1));
  EXPECT_THAT(r.faults->failFree(), Optional(1));
}

TEST(FaultPlanTest, APeerFaultFiresOnlyForThatPeerAndAnUnsetPeerForEvery) {
  auto onlyTwo = fault(FaultSite::kOpen, {1});
  onlyTwo.peer = 2;
  onlyTwo.error = 205;
  auto every = fault(FaultSite::kClose, {1});
  every.error = 206;
  const FaultPlan plan = faultPlan(scenario(4, {onlyTwo, every}));
  RankUnderTest r(plan, 1);
  EXPECT_EQ(r.faults->failOpen(0), std::nullopt);
  EXPECT_EQ(r.faults->failOpen(3), std::nullopt);
  EXPECT_THAT(r.faults->failOpen(2), Optional(205));
  EXPECT_THAT(r.faults->failClose(0), Optional(206));
  EXPECT_THAT(r.faults->failClose(2), Optional(206));
  EXPECT_THAT(r.faults->failClose(3), Optional(206));
}

TEST(FaultPlanTest, CountLimitsFiringsPerRank) {
  auto f = fault(FaultSite::kOpen, {0, 1});
  f.count = 2;
  const FaultPlan plan = faultPlan(scenario(3, {f}));
  RankUnderTest r0(plan, 0);
  RankUnderTest r1(plan, 1);
  EXPECT_TRUE(r0.faults->failOpen(1));
  EXPECT_TRUE(r0.faults->failOpen(2));
  EXPECT_FALSE(r0.faults->failOpen(1));
  EXPECT_FALSE(r0.faults->failOpen(2));
  // Rank 1's count is its own.
  EXPECT_TRUE(r1.faults->failOpen(0));
  EXPECT_TRUE(r1.faults->failOpen(2));
  EXPECT_FALSE(r1.faults->failOpen(0));
}

// A fault aimed at one buffer of `buffers:` (`buffer: 1`) fires only while the rank runner says
// that construction's calls are made; its count is drawn there only.
TEST(FaultPlanTest, AFaultAimedAtOneBufferFiresOnlyInThatConstruction) {
  auto f = fault(FaultSite::kOpen, {0});
  f.onBuffer = 1;
  f.count = 1;
  const FaultPlan plan = faultPlan(scenario(3, {f}));
  RankUnderTest r(plan, 0);
  EXPECT_FALSE(r.faults->failOpen(1));  // construction 0 (the default)
  EXPECT_FALSE(r.faults->failOpen(2));
  r.faults->setConstruction(1);
  EXPECT_TRUE(r.faults->failOpen(1));
  EXPECT_FALSE(r.faults->failOpen(2));  // count 1, used up in construction 1
  r.faults->setConstruction(2);
  EXPECT_FALSE(r.faults->failOpen(1));
}

TEST(FaultPlanTest, ProbabilityZeroNeverFiresAndOneAlwaysFires) {
  auto never = fault(FaultSite::kAlloc, {0});
  never.probability = 0.0;
  auto always = fault(FaultSite::kFree, {0});
  always.probability = 1.0;
  const FaultPlan plan = faultPlan(scenario(1, {never, always}));
  RankUnderTest r(plan, 0);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(r.faults->failAlloc());
    ASSERT_TRUE(r.faults->failFree());
  }
}

std::vector<bool> firings(const FaultPlan& plan, int rank, int draws) {
  RankUnderTest r(plan, rank);
  std::vector<bool> out;
  for (int i = 0; i < draws; ++i) out.push_back(r.faults->failOpen(1).has_value());
  return out;
}

harness::model::Scenario coinFlips(std::uint64_t seed) {
  auto f = fault(FaultSite::kOpen, {0, 1});
  f.probability = 0.5;
  return scenario(2, {f}, seed);
}

TEST(FaultPlanTest, SameSeedGivesTheSameFiringSequence) {
  const auto a = firings(faultPlan(coinFlips(42)), 0, 500);
  const auto b = firings(faultPlan(coinFlips(42)), 0, 500);
  EXPECT_EQ(a, b);
  // And the plan's seed overrides the scenario's.
  EXPECT_EQ(a, firings(faultPlan(coinFlips(7), 42), 0, 500));
}

TEST(FaultPlanTest, ProbabilityIsRoughlyHonouredAndSeedsAndRanksDiffer) {
  const auto a = firings(faultPlan(coinFlips(42)), 0, 2000);
  const auto b = firings(faultPlan(coinFlips(43)), 0, 2000);
  const auto otherRank = firings(faultPlan(coinFlips(42)), 1, 2000);
  const auto fired = std::count(a.begin(), a.end(), true);
  EXPECT_GT(fired, 850);
  EXPECT_LT(fired, 1150);
  EXPECT_NE(a, b);
  EXPECT_NE(a, otherRank);
}

TEST(FaultPlanTest, CountIsConsumedOnlyByFiringsAndStaysDeterministic) {
  auto f = fault(FaultSite::kOpen, {0});
  f.probability = 0.5;
  f.count = 3;
  const auto run = [&] {
    const FaultPlan plan = faultPlan(scenario(2, {f}, 9));
    return firings(plan, 0, 200);
  };
  const auto a = run();
  EXPECT_EQ(std::count(a.begin(), a.end(), true), 3);
  EXPECT_EQ(a, run());
}

TEST(FaultPlanTest, AFiringRecordsAFaultEventNamingSitePeerAndError) {
  auto f = fault(FaultSite::kOpen, {1});
  f.peer = 0;
  f.error = 205;
  f.mark.line = 12;
  const FaultPlan plan = faultPlan(scenario(2, {f}));
  RankUnderTest r(plan, 1);
  ASSERT_TRUE(r.faults->failOpen(0));
  const auto events = r.faultEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::kFault);
  EXPECT_EQ(events[0].what, "open");
  EXPECT_EQ(events[0].peer, 0);
  EXPECT_EQ(events[0].rank, 1);
  EXPECT_THAT(events[0].detail, HasSubstr("rank 1"));
  EXPECT_THAT(events[0].detail, HasSubstr("peer 0"));
  EXPECT_THAT(events[0].detail, HasSubstr("hipErrorMapFailed (205)"));
  EXPECT_THAT(events[0].detail, HasSubstr("line 12"));
}

TEST(FaultPlanTest, NothingIsRecordedWhenNothingFires) {
  const FaultPlan plan = faultPlan(scenario(2, {fault(FaultSite::kAlloc, {1})}));
  RankUnderTest r(plan, 0);
  EXPECT_FALSE(r.faults->failAlloc());
  EXPECT_TRUE(r.faultEvents().empty());
  EXPECT_TRUE(r.faults->fired().empty());
}

TEST(FaultPlanTest, GroupFailFiresOnlyAtItsPoint) {
  auto f = fault(FaultSite::kGroupFail, {0});
  f.at = Point::kAgree;
  const FaultPlan plan = faultPlan(scenario(2, {f}));
  RankUnderTest r(plan, 0);
  EXPECT_FALSE(r.faults->failGroup(Point::kExchange));
  EXPECT_TRUE(r.faults->failGroup(Point::kAgree));
  EXPECT_EQ(r.faultEvents().at(0).what, "group-fail");
}

TEST(FaultPlanTest, HandleFaultsNeverTouchTheOwnSlot) {
  const FaultPlan plan = faultPlan(
      scenario(3, {fault(FaultSite::kHandleCorrupt, {1}), fault(FaultSite::kHandleStale, {1})}));
  RankUnderTest r(plan, 1);
  EXPECT_FALSE(r.faults->corruptHandle(1));
  EXPECT_FALSE(r.faults->staleHandle(1));
  EXPECT_TRUE(r.faults->corruptHandle(0));
  EXPECT_TRUE(r.faults->staleHandle(2));
}

TEST(FaultPlanTest, StaleExchangeIsScenarioWide) {
  const FaultPlan stale = faultPlan(scenario(3, {fault(FaultSite::kHandleStale, {2})}));
  const FaultPlan none = faultPlan(scenario(3, {fault(FaultSite::kHandleCorrupt, {2})}));
  EXPECT_TRUE(RankUnderTest(stale, 0).faults->staleExchange());
  EXPECT_TRUE(RankUnderTest(stale, 2).faults->staleExchange());
  EXPECT_FALSE(RankUnderTest(none, 2).faults->staleExchange());
}

TEST(FaultPlanTest, StaleHandleIsTakenOnce) {
  const FaultPlan plan = faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {1})}));
  RankUnderTest r(plan, 0);
  IpcHandle h;
  h.bytes[3] = std::byte{7};
  r.faults->putStaleHandle(h);
  EXPECT_EQ(r.faults->takeStaleHandle(), h);
  EXPECT_EQ(r.faults->takeStaleHandle(), std::nullopt);
}

TEST(FaultPlanTest, NamesSaysWhichSitesThisRankHas) {
  auto f = fault(FaultSite::kOpen, {1});
  f.probability = 0.0;
  const FaultPlan plan = faultPlan(scenario(2, {f}));
  EXPECT_TRUE(RankUnderTest(plan, 1).faults->names(FaultSite::kOpen));
  EXPECT_FALSE(RankUnderTest(plan, 0).faults->names(FaultSite::kOpen));
  EXPECT_FALSE(RankUnderTest(plan, 1).faults->names(FaultSite::kClose));
}

TEST(AtPointTest, DeathCallsDieAtItsPointOnlyAndIsRecordedFirst) {
  auto f = fault(FaultSite::kDeath, {1});
  f.at = Point::kExchange;
  const FaultPlan plan = faultPlan(scenario(2, {f}));
  RankUnderTest r(plan, 1);
  StrictMock<MockRankControl> control;
  r.faults->atPoint(Point::kBeforeConstruct, control);
  r.faults->atPoint(Point::kAgree, control);
  EXPECT_CALL(control, onDie(1, Point::kExchange)).WillOnce([&](int, Point) {
    ASSERT_EQ(r.faultEvents().size(), 1u);
    EXPECT_EQ(r.faultEvents()[0].what, "death");
    EXPECT_THAT(r.faultEvents()[0].detail, HasSubstr("dies at exchange"));
  });
  EXPECT_THROW(r.faults->atPoint(Point::kExchange, control), Died);

  RankUnderTest other(plan, 0);
  other.faults->atPoint(Point::kExchange, control);  // StrictMock: no call
}

TEST(AtPointTest, HangCallsHangAndReturnsWhenTheLauncherLetsItGoOn) {
  auto f = fault(FaultSite::kHang, {0});
  f.at = Point::kClose;
  const FaultPlan plan = faultPlan(scenario(2, {f}));
  RankUnderTest r(plan, 0);
  StrictMock<MockRankControl> control;
  EXPECT_CALL(control, hang(0, Point::kClose));
  r.faults->atPoint(Point::kClose, control);
  r.faults->atPoint(Point::kOpen, control);
  EXPECT_EQ(r.faults->fired(), std::set<FaultSite>{FaultSite::kHang});
}

TEST(AtPointTest, DelaySleepsThenDeathThenHang) {
  auto delay = fault(FaultSite::kDelay, {0});
  delay.at = Point::kAgree;
  delay.delay = std::chrono::milliseconds(60);
  auto hang = fault(FaultSite::kHang, {0});
  hang.at = Point::kAgree;
  auto death = fault(FaultSite::kDeath, {0});
  death.at = Point::kAgree;
  death.count = 1;
  // Scenario order puts the hang first; atPoint still applies the death before the hang.
  const FaultPlan plan = faultPlan(scenario(2, {hang, delay, death}));
  RankUnderTest r(plan, 0);
  StrictMock<MockRankControl> control;
  {
    InSequence seq;
    EXPECT_CALL(control, onDie(0, Point::kAgree));
    EXPECT_CALL(control, hang(0, Point::kAgree));
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(r.faults->atPoint(Point::kAgree, control), Died);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(60));
  auto events = r.faultEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "delay");
  EXPECT_THAT(events[0].detail, HasSubstr("late by 60 ms at agree"));
  EXPECT_EQ(events[1].what, "death");

  // The death's count is used up: the next agree sleeps, then hangs.
  r.faults->atPoint(Point::kAgree, control);
  events = r.faultEvents();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].what, "delay");
  EXPECT_EQ(events[3].what, "hang");
}

// A delay and a death aimed at buffer 1 (`buffer: 1`) act at their point in that construction
// only: the same point of construction 0 or 2 neither sleeps, records nor stops the rank.
TEST(AtPointTest, ADelayAndADeathAimedAtOneBufferActInThatConstructionOnly) {
  auto delay = fault(FaultSite::kDelay, {0});
  delay.at = Point::kOpen;
  delay.delay = std::chrono::milliseconds(1);
  delay.onBuffer = 1;
  auto death = fault(FaultSite::kDeath, {0});
  death.at = Point::kOpen;
  death.onBuffer = 1;
  const FaultPlan plan = faultPlan(scenario(2, {delay, death}));
  RankUnderTest r(plan, 0);
  StrictMock<MockRankControl> control;
  r.faults->atPoint(Point::kOpen, control);  // construction 0 (the default): StrictMock, no call
  EXPECT_TRUE(r.faultEvents().empty());
  r.faults->setConstruction(2);
  r.faults->atPoint(Point::kOpen, control);
  EXPECT_TRUE(r.faultEvents().empty());
  r.faults->setConstruction(1);
  EXPECT_CALL(control, onDie(0, Point::kOpen));
  EXPECT_THROW(r.faults->atPoint(Point::kOpen, control), Died);
  const auto events = r.faultEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "delay");
  EXPECT_EQ(events[1].what, "death");
}

TEST(AtPointTest, EveryFiringDelayAddsUp) {
  auto a = fault(FaultSite::kDelay, {0});
  a.at = Point::kBeforeConstruct;
  a.delay = std::chrono::milliseconds(30);
  auto b = a;
  b.delay = std::chrono::milliseconds(40);
  const FaultPlan plan = faultPlan(scenario(1, {a, b}));
  RankUnderTest r(plan, 0);
  StrictMock<MockRankControl> control;
  const auto start = std::chrono::steady_clock::now();
  r.faults->atPoint(Point::kBeforeConstruct, control);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(70));
  EXPECT_EQ(r.faultEvents().size(), 2u);
}

// not-ready: asked by the rank runner once a run; fires on the ranks it names, recorded as a
// fault event, and answers no other query (it is no runtime call).
TEST(FaultPlanTest, NotReadyFiresOnlyOnItsRanks) {
  const FaultPlan plan = faultPlan(scenario(3, {fault(FaultSite::kNotReady, {1})}));
  for (int rank = 0; rank < 3; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    RankUnderTest r(plan, rank);
    EXPECT_EQ(r.faults->notReady(), rank == 1);
    EXPECT_EQ(r.faults->failAlloc(), std::nullopt);
    EXPECT_FALSE(r.faults->failGroup(Point::kExchange));
    if (rank == 1) {
      ASSERT_EQ(r.faultEvents().size(), 1u);
      EXPECT_EQ(r.faultEvents()[0].what, "not-ready");
      EXPECT_THAT(r.faultEvents()[0].detail, HasSubstr("not ready"));
      EXPECT_EQ(r.faults->fired(), std::set<FaultSite>{FaultSite::kNotReady});
    } else {
      EXPECT_TRUE(r.faultEvents().empty());
    }
  }
  EXPECT_EQ(siteName(FaultSite::kNotReady), "not-ready");
  EXPECT_EQ(defaultError(FaultSite::kNotReady), 0);
}

TEST(NamesTest, SiteAndPointNamesAreTheScenarioFileSpellings) {
  EXPECT_EQ(siteName(FaultSite::kGetHandle), "get-handle");
  EXPECT_EQ(siteName(FaultSite::kHandleCorrupt), "handle-corrupt");
  EXPECT_EQ(siteName(FaultSite::kHandleStale), "handle-stale");
  EXPECT_EQ(siteName(FaultSite::kGroupFail), "group-fail");
  EXPECT_EQ(siteName(FaultSite::kAllocTable), "alloc-table");
  EXPECT_EQ(siteName(FaultSite::kCopyTable), "copy-table");
  EXPECT_EQ(defaultError(FaultSite::kAllocTable), 2);
  EXPECT_EQ(defaultError(FaultSite::kCopyTable), 1);
  EXPECT_EQ(pointName(Point::kBeforeConstruct), "before-construct");
  EXPECT_EQ(hipErrorName(205), "hipErrorMapFailed");
  EXPECT_EQ(hipErrorName(4242), "hipError(4242)");
}

}  // namespace
}  // namespace peerconf::faults
