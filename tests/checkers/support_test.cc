// The helpers every checker shares (support.h): verdicts started from a record, rank lookups,
// what survivors must end as, planted and fired faults, pointers and codes in findings.
#include "checkers/support.h"

#include <gtest/gtest.h>

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::hexPtr;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::reproduceCommand;
using model::RunRecord;
using model::Scenario;
using model::Verdict;
namespace {

Fault fault(FaultSite site, std::vector<int> ranks, std::optional<int> peer = std::nullopt) {
  Fault f;
  f.site = site;
  f.ranks = std::move(ranks);
  f.peer = peer;
  return f;
}

TEST(Support, StartVerdictFillsReproduceAndExpectation) {
  RunRecord record;
  record.scenario.file = "s.yaml";
  record.seed = 3;
  record.launcher = "threads";
  record.runtime = "mock";
  record.scenario.expect.violations = {"c3"};
  const Verdict c3 = startVerdict(Property::kC3Cleanup, record);
  EXPECT_EQ(c3.property, Property::kC3Cleanup);
  EXPECT_EQ(c3.status, Verdict::Status::kPass);
  EXPECT_EQ(c3.reproduce, reproduceCommand(record));
  EXPECT_TRUE(c3.expectedViolation);
  EXPECT_FALSE(startVerdict(Property::kC1Uniform, record).expectedViolation);
}

TEST(Support, ExpectsViolationByIdOrTitleButNotAnotherNumber) {
  Scenario s;
  s.expect.violations = {"C6 no unread data overwritten", "C1"};
  EXPECT_TRUE(expectsViolation(s, Property::kC6NoOverwrite));
  EXPECT_TRUE(expectsViolation(s, Property::kC1Uniform));
  EXPECT_FALSE(expectsViolation(s, Property::kC7NoStale));
  s.expect.violations = {"C10"};
  EXPECT_FALSE(expectsViolation(s, Property::kC1Uniform));
}

TEST(Support, RanksAreFoundByTheirNumberNotTheirPosition) {
  RunRecord record;
  record.scenario.ranks = 2;
  EXPECT_EQ(rankCount(record), 2);
  EXPECT_EQ(findRank(record, 0), nullptr);
  RankResult five;
  five.rank = 5;
  RankResult zero;
  zero.rank = 0;
  record.ranks = {five, zero};      // out of order
  EXPECT_EQ(rankCount(record), 6);  // more came back than the scenario has
  ASSERT_NE(findRank(record, 0), nullptr);
  EXPECT_EQ(findRank(record, 0)->rank, 0);
  ASSERT_NE(findRank(record, 5), nullptr);
  EXPECT_EQ(findRank(record, 5)->rank, 5);
  EXPECT_EQ(findRank(record, 1), nullptr);
  EXPECT_EQ(findRank(record, -1), nullptr);
}

TEST(Support, ExpectedSurvivorStatus) {
  Scenario s;
  s.expect.outcome = Outcome::kSuccess;
  EXPECT_EQ(expectedSurvivorStatus(s), RankStatus::kOk);
  s.expect.outcome = Outcome::kRaise;
  EXPECT_EQ(expectedSurvivorStatus(s), RankStatus::kRaised);
  // Reported with a death at close: the others returned already.
  s.expect.outcome = Outcome::kReported;
  s.expect.reported = {1};
  Fault death = fault(FaultSite::kDeath, {1});
  death.at = Point::kClose;
  s.faults = {death};
  EXPECT_TRUE(expectedReported(s, 1));
  EXPECT_FALSE(expectedReported(s, 0));
  EXPECT_EQ(expectedSurvivorStatus(s), RankStatus::kOk);
  // ... unless a survivor is expected to say something.
  s.expect.messages[0] = MessageExpectation{MessageKind::kGroup, ""};
  EXPECT_EQ(expectedSurvivorStatus(s), RankStatus::kRaised);
  s.expect.messages.clear();
  // A death before close leaves the others raising.
  s.faults[0].at = Point::kAgree;
  EXPECT_EQ(expectedSurvivorStatus(s), RankStatus::kRaised);
}

TEST(Support, FaultPlantedMatchesSiteRankAndPeer) {
  Scenario s;
  s.faults = {fault(FaultSite::kOpen, {1}, 2), fault(FaultSite::kClose, {0, 3})};
  EXPECT_TRUE(faultPlanted(s, FaultSite::kOpen, 1));
  EXPECT_TRUE(faultPlanted(s, FaultSite::kOpen, 1, 2));
  EXPECT_FALSE(faultPlanted(s, FaultSite::kOpen, 1, 0));  // names another peer
  EXPECT_FALSE(faultPlanted(s, FaultSite::kOpen, 0));
  EXPECT_TRUE(faultPlanted(s, FaultSite::kClose, 3, 7));  // no peer: every peer
  EXPECT_FALSE(faultPlanted(s, FaultSite::kFree, 0));
}

TEST(Support, DescribeResult) {
  RankResult r;
  r.status = RankStatus::kOk;
  EXPECT_EQ(describeResult(r), "ok");
  r.status = RankStatus::kRaised;
  EXPECT_EQ(describeResult(r), "raised (unknown error type)");
  r.errorType = "HandshakeError";
  r.message = "peer memory handshake failed on this TP rank";
  EXPECT_EQ(describeResult(r),
            "raised HandshakeError: peer memory handshake failed on this TP rank");
  r.status = RankStatus::kHung;
  EXPECT_EQ(describeResult(r), "hung");
}

TEST(Support, PointersInDetails) {
  EXPECT_EQ(hexPtr(0x7f00), "0x7f00");
  EXPECT_EQ(hexPtr(0), "0x0");
  EXPECT_EQ(parsePtr("open peer=1 ptr=0x7F00 size=64"), 0x7f00u);
  EXPECT_EQ(parsePtr("ptr=4096"), 4096u);
  EXPECT_EQ(parsePtr("ptr=18446744073709551615"), ~std::uint64_t{0});
  EXPECT_FALSE(parsePtr("no pointer here").has_value());
  EXPECT_FALSE(parsePtr("ptr=").has_value());
  EXPECT_FALSE(parsePtr("ptr=0xzz").has_value());
  EXPECT_FALSE(parsePtr("ptr=99999999999999999999").has_value());  // past 64 bits
}

TEST(Support, FaultOpsAndCodes) {
  EXPECT_EQ(faultOp("alloc"), "alloc");
  EXPECT_EQ(faultOp("alloc-table"), "alloc");
  EXPECT_EQ(faultOp("close"), "close-handle");
  EXPECT_EQ(faultOp("copy-table"), "copy");
  for (const char* site : {"handle-corrupt", "handle-stale", "group-fail", "delay", "death", "hang",
                           "not-ready", "nonsense"}) {
    EXPECT_EQ(faultOp(site), "") << site;
  }
  EXPECT_EQ(codeText(1), "hipErrorInvalidValue (1)");
  EXPECT_EQ(codeText(42), "hipError(42) (42)");
}

TEST(Support, FiredFaultsTakeTheirPhaseAndTheirFaultsError) {
  Scenario s;
  Fault open = fault(FaultSite::kOpen, {1}, 0);
  open.error = 205;
  s.faults = {fault(FaultSite::kAlloc, {1}), open, fault(FaultSite::kOpen, {1})};
  RankResult r;
  r.rank = 1;
  r.events = {
      {0, 1, EventKind::kPhaseBegin, "construct", -1, "", -1},
      {1, 1, EventKind::kFault, "alloc", -1, "hipMalloc fails", -1},
      {2, 1, EventKind::kPhaseBegin, "open", -1, "", -1},  // the core's, nested: not a phase
      {3, 1, EventKind::kFault, "open", 0, "openMemHandle fails [fault #2]", 2},
      {4, 1, EventKind::kPhaseEnd, "construct", -1, "", -1},
      {5, 1, EventKind::kFault, "open", 0, "no index", -1},
      {6, 1, EventKind::kFault, "delay", -1, "late", -1},
  };
  const std::vector<FiredFault> fired = firedFaults(s, r);
  ASSERT_EQ(fired.size(), 4u);
  EXPECT_EQ(fired[0].site, "alloc");
  EXPECT_EQ(fired[0].error, 2);  // error 0 defaults as the parser does: alloc 2
  EXPECT_EQ(fired[0].phase, "construct");
  EXPECT_EQ(fired[0].event, 1u);
  EXPECT_EQ(fired[1].error, 1);  // "[fault #2]": the third fault, error 0, defaults to 1
  EXPECT_EQ(fired[1].phase, "construct");
  EXPECT_EQ(fired[1].peer, 0);
  EXPECT_EQ(fired[2].error, 205);  // no index: the first open fault naming rank 1 and peer 0
  EXPECT_EQ(fired[2].phase, "");
  EXPECT_EQ(fired[3].error, 0);  // delay fails no runtime call
}

TEST(Support, PhaseBeginFindsThePhaseOrTheEnd) {
  const std::vector<Event> events = {
      {0, 0, EventKind::kPhaseBegin, "construct", -1, "", -1},
      {1, 0, EventKind::kPhaseEnd, "construct", -1, "", -1},
      {2, 0, EventKind::kPhaseBegin, "close", -1, "", -1},
  };
  EXPECT_EQ(phaseBegin(events, "construct"), 0u);
  EXPECT_EQ(phaseBegin(events, "close"), 2u);
  EXPECT_EQ(phaseBegin(events, "destroy"), 3u);
}

}  // namespace
}  // namespace peerconf::harness::checkers
