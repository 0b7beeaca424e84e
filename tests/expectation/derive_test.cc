// deriveExpectation: held against every hand-written expectation of the suite, then corner cases
// of timing and of deaths that the suite does not spell out.
#include "expectation/derive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness::expectation {

using model::Expectation;
using model::Fault;
using model::FaultSite;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Scenario;
using model::toString;
using scenario::expandScenarioPaths;
using scenario::loadScenario;
namespace {

using std::chrono::milliseconds;

bool hasFault(const Scenario& scenario, FaultSite site, int rank) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& f) {
    return f.site == site && std::find(f.ranks.begin(), f.ranks.end(), rank) != f.ranks.end();
  });
}

// Whether the derived message says what the file's author wrote. The author may be less precise
// ("get-handle failed" where the derivation says "get-handle failed on rank 0") or name a group
// failure by its text ("all-gather failed on rank 1", "(rank 3 did not arrive)") where the
// derivation says group: the text the derivation knows that rank's group error holds
// (RankTimeline::messageText, as explain compares it).
bool compatible(const Scenario& scenario, int rank, const MessageExpectation& written,
                const MessageExpectation& derived) {
  if (written.kind == derived.kind) {
    return written.kind != MessageKind::kText ||
           derived.text.find(written.text) != std::string::npos ||
           written.text.find(derived.text) != std::string::npos;
  }
  if (written.kind != MessageKind::kText || derived.kind != MessageKind::kGroup) return false;
  if (hasFault(scenario, FaultSite::kGroupFail, rank) ||
      hasFault(scenario, FaultSite::kCollectiveOrder, rank)) {
    return true;
  }
  const std::vector<Draw> draws = deriveDraws(scenario);
  return std::all_of(draws.begin(), draws.end(), [&](const Draw& draw) {
    const std::string& text = draw.timelines[static_cast<std::size_t>(rank)].messageText;
    return !text.empty() && text.find(written.text) != std::string::npos;
  });
}

TEST(Expectation, AgreesWithEveryDecidableSuiteScenario) {
  int compared = 0;
  for (const std::string& file : expandScenarioPaths({PEERCONF_SCENARIOS_DIR})) {
    const Scenario scenario = loadScenario(file);
    if (!scenario.expect.violations.empty()) continue;  // negative controls of the checkers
    if (undecidableReason(scenario)) continue;
    SCOPED_TRACE(file);
    ++compared;
    const Expectation derived = deriveExpectation(scenario);
    EXPECT_EQ(toString(derived.outcome), toString(scenario.expect.outcome));
    std::vector<int> reported = scenario.expect.reported;
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(derived.reported, reported);
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      auto written = scenario.expect.messages.find(rank);
      auto mine = derived.messages.find(rank);
      ASSERT_EQ(written != scenario.expect.messages.end(), mine != derived.messages.end())
          << "rank " << rank;
      if (mine == derived.messages.end()) continue;
      EXPECT_TRUE(compatible(scenario, rank, written->second, mine->second))
          << "rank " << rank << ": the file says " << toString(written->second)
          << ", the derivation " << toString(mine->second);
    }
  }
  EXPECT_GE(compared, 50);  // nearly the whole suite is decidable
}

Scenario ranks(int n, milliseconds deadline = milliseconds(100)) {
  Scenario scenario;
  scenario.name = "derived";
  scenario.ranks = n;
  scenario.deadline = deadline;
  return scenario;
}

Fault at(FaultSite site, int rank, Point point, milliseconds delay = milliseconds(0)) {
  Fault fault;
  fault.site = site;
  fault.ranks = {rank};
  fault.at = point;
  fault.delay = delay;
  return fault;
}

Fault mapping(FaultSite site, int rank, std::optional<int> peer = std::nullopt) {
  Fault fault;
  fault.site = site;
  fault.ranks = {rank};
  fault.peer = peer;
  return fault;
}

// A fault aimed at one buffer of `buffers:`: the run's outcome is that construction's, derived as a
// scenario of that one buffer (model::aimedConstruction); the buffers before it succeed.
TEST(Expectation, AFaultAimedAtOneBufferIsThatConstructionsOutcome) {
  const Scenario aimed = scenario::parseScenario(
      "ranks: 3\n"
      "buffers: [{size: 4KiB}, {size: 8KiB}, {size: 16KiB}]\n"
      "faults: [{site: open, rank: 2, peer: 0, buffer: 2}]\n"
      "expect: {outcome: raise}\n",
      "a.yaml");
  const Expectation derived = deriveExpectation(aimed);
  EXPECT_EQ(derived.outcome, Outcome::kRaise);
  ASSERT_EQ(derived.messages.size(), 3u);
  EXPECT_EQ(derived.messages.at(2).kind, MessageKind::kThis);
  EXPECT_EQ(derived.messages.at(0).kind, MessageKind::kAnother);
  // The same as that buffer alone with the same fault.
  const Scenario alone = scenario::parseScenario(
      "ranks: 3\nbuffer: 16KiB\nfaults: [{site: open, rank: 2, peer: 0}]\n"
      "expect: {outcome: raise}\n",
      "b.yaml");
  const Expectation single = deriveExpectation(alone);
  EXPECT_EQ(single.outcome, derived.outcome);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(single.messages.at(rank).kind, derived.messages.at(rank).kind) << rank;
  }
  // A close fault aimed at the first buffer fails nothing: success.
  const Scenario closing = scenario::parseScenario(
      "ranks: 2\nbuffers: [{size: 4KiB}, {size: 4KiB}]\n"
      "faults: [{site: close, rank: 0, buffer: 0}]\nexpect: {outcome: success}\n",
      "c.yaml");
  EXPECT_EQ(deriveExpectation(closing).outcome, Outcome::kSuccess);
}

TEST(Expectation, ChanceOnAFailingSiteIsUndecidable) {
  Scenario scenario = ranks(3);
  Fault open = mapping(FaultSite::kOpen, 1, 2);
  open.probability = 0.5;
  scenario.faults = {open};
  EXPECT_TRUE(undecidableReason(scenario));
  EXPECT_THROW(deriveExpectation(scenario), std::invalid_argument);
  // ... unless the caller accepts to judge only what does not depend on the draw.
  const Expectation assumed = deriveExpectationIfChanceFaultsFire(scenario);
  EXPECT_EQ(assumed.outcome, Outcome::kRaise);
  EXPECT_EQ(assumed.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(assumed.messages.at(0).kind, MessageKind::kAnother);
}

TEST(Expectation, LatenessNearTheDeadlineIsUndecidable) {
  Scenario scenario = ranks(2);
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kExchange, milliseconds(100))};
  EXPECT_TRUE(undecidableReason(scenario));
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kExchange, milliseconds(50))};
  EXPECT_FALSE(undecidableReason(scenario));
  EXPECT_EQ(deriveExpectation(scenario).outcome, Outcome::kSuccess);
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kExchange, milliseconds(150))};
  EXPECT_EQ(deriveExpectation(scenario).outcome, Outcome::kRaise);
}

TEST(Expectation, RanksLateTogetherMeetInTime) {
  // Lateness is relative: two ranks equally late at one group call never wait for each other.
  // Without the runner's agreement, lateness before the constructor and at the exchange meet in
  // the exchange.
  Scenario scenario = ranks(2);
  scenario.runner.agreeFirst = false;
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kBeforeConstruct, milliseconds(300)),
                     at(FaultSite::kDelay, 1, Point::kExchange, milliseconds(300))};
  EXPECT_EQ(deriveExpectation(scenario).outcome, Outcome::kSuccess);
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kBeforeConstruct, milliseconds(300)),
                     at(FaultSite::kDelay, 1, Point::kBeforeConstruct, milliseconds(300))};
  scenario.runner.agreeFirst = true;
  EXPECT_EQ(deriveExpectation(scenario).outcome, Outcome::kSuccess);
}

// With the runner's agreement, a rank late before the constructor is waited for there, not in
// the exchange: rank 1, on time before the constructor, gives up in the runner's agreement.
TEST(Expectation, TheRunnersAgreementIsAGroupCallOfItsOwn) {
  Scenario scenario = ranks(2);
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kBeforeConstruct, milliseconds(300)),
                     at(FaultSite::kDelay, 1, Point::kExchange, milliseconds(300))};
  const std::vector<RankFate> fates = deriveFates(scenario);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(fates[rank].end, RankFate::End::kRaised) << rank;
    EXPECT_EQ(fates[rank].message.kind, MessageKind::kGroup) << rank;
    EXPECT_TRUE(fates[rank].waited) << rank;
  }
}

// not-ready with the runner's agreement (the default): every rank raises the runner's error from
// the one all-reduce, nobody waits, nothing after it fires.
TEST(Expectation, NotReadyIsAgreedOnBeforeTheConstructor) {
  Scenario scenario = ranks(4);
  scenario.faults = {mapping(FaultSite::kNotReady, 2), mapping(FaultSite::kAlloc, 0),
                     mapping(FaultSite::kOpen, 1, 3)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(expect.messages.at(rank).kind, MessageKind::kText) << rank;
    EXPECT_EQ(expect.messages.at(rank).text,
              rank == 2 ? kNotReadyThisRankMessage : kNotReadyAnotherRankMessage)
        << rank;
  }
  for (const RankFate& fate : deriveFates(scenario)) EXPECT_FALSE(fate.waited);
  // One rank: no group, the runner raises its own error.
  Scenario one = ranks(1);
  one.faults = {mapping(FaultSite::kNotReady, 0)};
  EXPECT_EQ(deriveExpectation(one).messages.at(0).text, kNotReadyThisRankMessage);
  // By chance: whether it fires depends on the draw.
  scenario.faults = {mapping(FaultSite::kNotReady, 2)};
  scenario.faults[0].probability = 0.5;
  EXPECT_TRUE(undecidableReason(scenario));
}

// Without the runner's agreement the not-ready rank leaves alone; the others construct and wait
// out the deadline in the exchange (the wait the seed's tp_agree prevents).
TEST(Expectation, NotReadyWithoutTheAgreementLeavesTheOthersWaiting) {
  Scenario scenario = ranks(3);
  scenario.runner.agreeFirst = false;
  scenario.faults = {mapping(FaultSite::kNotReady, 1)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  EXPECT_EQ(expect.messages.at(1).text, kNotReadyThisRankMessage);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kGroup);
  EXPECT_EQ(expect.messages.at(2).kind, MessageKind::kGroup);
  const std::vector<RankFate> fates = deriveFates(scenario);
  EXPECT_FALSE(fates[1].waited);
  EXPECT_TRUE(fates[0].waited);
  EXPECT_TRUE(fates[2].waited);
}

// A rank that dies before the constructor leaves the others in the runner's agreement, the
// not-ready rank among them: they all time out there (group).
TEST(Expectation, ADeathBeforeTheConstructorIsWaitedForInTheRunnersAgreement) {
  Scenario scenario = ranks(3);
  scenario.faults = {mapping(FaultSite::kNotReady, 0),
                     at(FaultSite::kDeath, 1, Point::kBeforeConstruct)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kReported);
  EXPECT_EQ(expect.reported, std::vector<int>{1});
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kGroup);
  EXPECT_EQ(expect.messages.at(2).kind, MessageKind::kGroup);
  // Without the agreement, rank 0 leaves with its own error and rank 2 waits in the exchange.
  scenario.runner.agreeFirst = false;
  const Expectation alone = deriveExpectation(scenario);
  EXPECT_EQ(alone.messages.at(0).text, kNotReadyThisRankMessage);
  EXPECT_EQ(alone.messages.at(2).kind, MessageKind::kGroup);
}

// A group failure of a rank's own is not a wait: only the ranks left in the call waited.
TEST(Expectation, WaitedMarksTheRanksLeftInTheCall) {
  Scenario scenario = ranks(3);
  scenario.faults = {at(FaultSite::kGroupFail, 1, Point::kExchange)};
  const std::vector<RankFate> fates = deriveFates(scenario);
  EXPECT_FALSE(fates[1].waited);
  EXPECT_TRUE(fates[0].waited);
  EXPECT_TRUE(fates[2].waited);
  scenario.faults = {mapping(FaultSite::kAlloc, 1)};
  for (const RankFate& fate : deriveFates(scenario)) EXPECT_FALSE(fate.waited);
}

// Collectives in another order: every rank of the call raises a group error, none waited for a
// rank that never came, and no rank's text is a planted group-fail's (the group's own error).
TEST(Expectation, CollectiveOrderFailsEveryRankOfTheCallWithAGroupError) {
  for (const Point point : {Point::kExchange, Point::kAgree}) {
    SCOPED_TRACE(std::string(faults::pointName(point)));
    Scenario scenario = ranks(4);
    scenario.faults = {at(FaultSite::kCollectiveOrder, 2, point)};
    const Expectation expect = deriveExpectation(scenario);
    EXPECT_EQ(expect.outcome, Outcome::kRaise);
    for (int rank = 0; rank < 4; ++rank) {
      EXPECT_EQ(expect.messages.at(rank).kind, MessageKind::kGroup) << rank;
    }
    for (const RankFate& fate : deriveFates(scenario)) EXPECT_FALSE(fate.waited);
    const std::vector<RankTimeline> timelines = deriveTimelines(scenario);
    for (const RankTimeline& timeline : timelines) EXPECT_EQ(timeline.messageText, "");
  }
}

// At the agreement, a mismatch hides an open failure: nobody completes the agreement that would
// say "this" and "another".
TEST(Expectation, CollectiveOrderAtTheAgreementHidesAMappingFailure) {
  Scenario scenario = ranks(3);
  scenario.faults = {mapping(FaultSite::kOpen, 0, 1),
                     at(FaultSite::kCollectiveOrder, 1, Point::kAgree)};
  const Expectation expect = deriveExpectation(scenario);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(expect.messages.at(rank).kind, MessageKind::kGroup) << rank;
  }
  // At the exchange, before any open: the open fault never fires, the same messages.
  scenario.faults.back().at = Point::kExchange;
  for (const auto& [rank, message] : deriveExpectation(scenario).messages) {
    EXPECT_EQ(message.kind, MessageKind::kGroup) << rank;
  }
}

TEST(Expectation, LateAtTheAgreementFailsEveryRankWithAGroupError) {
  Scenario scenario = ranks(3);
  scenario.faults = {at(FaultSite::kDelay, 2, Point::kOpen, milliseconds(250)),
                     mapping(FaultSite::kOpen, 0, 1)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(expect.messages.at(rank).kind, MessageKind::kGroup) << rank;
  }
}

TEST(Expectation, DeathAtCloseLeavesTheOthersWithTheirBuffers) {
  Scenario scenario = ranks(3);
  scenario.faults = {at(FaultSite::kHang, 1, Point::kClose)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kReported);
  EXPECT_EQ(expect.reported, std::vector<int>{1});
  EXPECT_TRUE(expect.messages.empty());
}

TEST(Expectation, ADeathTheRankNeverReachesIsIgnored) {
  // Rank 0's alloc fails: it sends a failure record, and every rank raises at the exchange, so
  // rank 1 never reaches the agreement where it would die.
  Scenario scenario = ranks(3);
  Fault alloc = mapping(FaultSite::kAlloc, 0);
  scenario.faults = {alloc, at(FaultSite::kDeath, 1, Point::kAgree)};
  const auto fates = deriveFates(scenario);
  EXPECT_EQ(fates[1].end, RankFate::End::kRaised);
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kThis);
  EXPECT_EQ(expect.messages.at(1).kind, MessageKind::kAnother);
  EXPECT_EQ(expect.messages.at(2).kind, MessageKind::kAnother);
}

// Why fault `index` never fires on `rank` in the derivation, or empty when it fires there.
std::string neverFired(const Scenario& scenario, int rank, std::size_t index) {
  const auto timelines = deriveTimelines(scenario);
  const RankTimeline& timeline = timelines.at(static_cast<std::size_t>(rank));
  for (const auto& [fault, why] : timeline.neverFired) {
    if (fault == index) return why;
  }
  EXPECT_NE(std::find(timeline.fired.begin(), timeline.fired.end(), index), timeline.fired.end());
  return {};
}

// Issue 40, item 2: the core stops opening at the rank's first failed open, whichever fault fails
// it, so a second mapping fault of the rank aimed at a later peer never fires.
TEST(Expectation, AnOpenBehindTheRanksFirstFailedOpenNeverFires) {
  Scenario scenario = ranks(4);
  scenario.faults = {mapping(FaultSite::kOpen, 0, 2), mapping(FaultSite::kOpen, 0, 3),
                     mapping(FaultSite::kOpen, 1, 3)};
  EXPECT_EQ(neverFired(scenario, 0, 0), "");
  EXPECT_THAT(neverFired(scenario, 0, 1),
              ::testing::StartsWith("rank 0's open of peer 2 fails first (fault #0 (open of peer "
                                    "2"));
  EXPECT_EQ(neverFired(scenario, 1, 2), "");  // rank 1's first failure: it fires
  // The outcome is that of the first failures: unchanged.
  EXPECT_EQ(deriveExpectation(scenario).messages.at(0).kind, MessageKind::kThis);

  // A damaged handle fails its peer's open the same way; the handle fault fires as it arrives.
  scenario.faults = {mapping(FaultSite::kHandleCorrupt, 2, 0), mapping(FaultSite::kOpen, 2, 1),
                     mapping(FaultSite::kHandleStale, 2, 3)};
  EXPECT_THAT(neverFired(scenario, 2, 1),
              ::testing::StartsWith("rank 2's open of peer 0 fails first (fault #0"));
  EXPECT_EQ(neverFired(scenario, 2, 2), "");
}

// The fault plan fires one fault a call (the first of the file's order); a release fault fires
// only where the rank holds what it releases.
TEST(Expectation, OneFaultACallAndNoReleaseOfWhatTheRankNeverHeld) {
  Scenario scenario = ranks(3);
  Fault close = mapping(FaultSite::kClose, 0, 2);
  scenario.faults = {mapping(FaultSite::kAlloc, 1), mapping(FaultSite::kAlloc, 1),
                     mapping(FaultSite::kOpen, 0, 1), close};
  EXPECT_THAT(neverFired(scenario, 1, 1), ::testing::HasSubstr("takes its alloc call first"));
  // Rank 1's alloc ends every rank at the exchange: rank 0 maps nothing, closes nothing.
  EXPECT_FALSE(neverFired(scenario, 0, 3).empty());
  // Without it, rank 0's open of peer 1 fails first: it never maps peer 2.
  scenario.faults = {mapping(FaultSite::kOpen, 0, 1), close};
  EXPECT_THAT(neverFired(scenario, 0, 1), ::testing::StartsWith("it never maps peer 2"));
  // A rank that is not ready never constructs: it frees nothing.
  scenario.faults = {mapping(FaultSite::kNotReady, 0), mapping(FaultSite::kFree, 0)};
  EXPECT_THAT(neverFired(scenario, 0, 1), ::testing::HasSubstr("never constructs"));
}

// A handle fault damages the entry as the rank receives it: it fires though the exchange then
// ends the handshake (another rank's failure record), but not where its peer sent that record.
TEST(Expectation, AHandleFaultFiresAsTheEntriesArrive) {
  Scenario scenario = ranks(3);
  scenario.faults = {mapping(FaultSite::kAlloc, 1), mapping(FaultSite::kHandleCorrupt, 0, 2),
                     mapping(FaultSite::kHandleStale, 0, 1)};
  EXPECT_EQ(neverFired(scenario, 0, 1), "");
  EXPECT_THAT(neverFired(scenario, 0, 2), ::testing::StartsWith("peer 1 sends a failure record"));
}

TEST(Expectation, AnAllocFailureEndsTheHandshakeAtTheExchangeBeforeAnyOpen) {
  Scenario scenario = ranks(4);
  scenario.faults = {mapping(FaultSite::kGetHandle, 2), mapping(FaultSite::kOpen, 1, 3)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(expect.messages.at(rank).kind, rank == 2 ? MessageKind::kThis : MessageKind::kAnother)
        << rank;
  }
}

TEST(Expectation, ADeathAtTheExchangeStillLeavesTheOthersWaiting) {
  // The failure record never leaves a rank that dies before sending it.
  Scenario scenario = ranks(3);
  scenario.faults = {mapping(FaultSite::kAlloc, 0), at(FaultSite::kDeath, 0, Point::kExchange)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kReported);
  EXPECT_EQ(expect.messages.at(1).kind, MessageKind::kGroup);
}

TEST(Expectation, AGroupFailureAtTheAgreementHidesAMappingFailure) {
  Scenario scenario = ranks(4);
  scenario.faults = {mapping(FaultSite::kHandleCorrupt, 3, 0),
                     at(FaultSite::kGroupFail, 1, Point::kAgree)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(expect.messages.at(rank).kind, MessageKind::kGroup) << rank;
  }
}

// entry-corrupt: the rank that cannot decode a peer's entry keeps it as its failure and says
// "this" at the agreement; an intact failure record elsewhere makes it say "another" at the
// exchange; when the only failure record it received is the damaged one, it waits alone.
TEST(Expectation, AMalformedEntryIsAgreedOnLikeAMappingFailure) {
  Scenario scenario = ranks(4);
  scenario.faults = {mapping(FaultSite::kEntryCorrupt, 2)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(expect.messages.at(rank).kind, rank == 2 ? MessageKind::kThis : MessageKind::kAnother)
        << rank;
  }
  const auto timelines = deriveTimelines(scenario);
  EXPECT_THAT(timelines[2].end, ::testing::HasSubstr("could not decode peer 0's exchange entry"));
}

TEST(Expectation, ADamagedFailureRecordLeavesItsReaderWaitingAlone) {
  Scenario scenario = ranks(4);
  scenario.faults = {mapping(FaultSite::kAlloc, 0), mapping(FaultSite::kEntryCorrupt, 1, 0),
                     mapping(FaultSite::kEntryCorrupt, 3, 2)};
  const std::vector<RankFate> fates = deriveFates(scenario);
  EXPECT_EQ(fates[0].message.kind, MessageKind::kThis);
  EXPECT_EQ(fates[1].message.kind, MessageKind::kGroup);
  EXPECT_TRUE(fates[1].waited);
  EXPECT_EQ(fates[2].message.kind, MessageKind::kAnother);
  // Rank 3's damaged entry is not the failure record: it reads rank 0's and says "another".
  EXPECT_EQ(fates[3].message.kind, MessageKind::kAnother);
  EXPECT_FALSE(fates[3].waited);
}

// foreign-exception: the failure of the call it names; at a group call the rank raises the
// exception itself and the others wait (group).
TEST(Expectation, AForeignExceptionActsAsItsCallsFailure) {
  Scenario scenario = ranks(3);
  Fault open = mapping(FaultSite::kForeignException, 1, 2);
  open.call = faults::SeamCall::kOpen;
  scenario.faults = {open};
  Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  EXPECT_EQ(expect.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kAnother);

  Fault exchange = mapping(FaultSite::kForeignException, 1);
  exchange.call = faults::SeamCall::kExchange;
  scenario.faults = {exchange};
  expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.messages.at(1).kind, MessageKind::kText);
  EXPECT_EQ(expect.messages.at(1).text, "foreign exception from exchange on rank 1");
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kGroup);
  EXPECT_EQ(expect.messages.at(2).kind, MessageKind::kGroup);
  const auto timelines = deriveTimelines(scenario);
  EXPECT_FALSE(timelines[0].lateness) << "the others wait for rank 1, they are not late";
}

TEST(Expectation, OneRankHasNoGroupToWaitOn) {
  Scenario scenario = ranks(1);
  scenario.faults = {at(FaultSite::kDelay, 0, Point::kBeforeConstruct, milliseconds(500))};
  EXPECT_EQ(deriveExpectation(scenario).outcome, Outcome::kSuccess);
  scenario.faults = {mapping(FaultSite::kAlloc, 0)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kText);
}

// The device address table is built after the last open and before the agreement: its failure
// is agreed on like an open failure.
TEST(Expectation, ATableFailureIsAgreedLikeAnOpenFailure) {
  for (FaultSite site : {FaultSite::kAllocTable, FaultSite::kCopyTable}) {
    SCOPED_TRACE(toString(site));
    Scenario scenario = ranks(4);
    scenario.faults = {mapping(site, 2)};
    EXPECT_FALSE(undecidableReason(scenario));
    const Expectation expect = deriveExpectation(scenario);
    EXPECT_EQ(expect.outcome, Outcome::kRaise);
    ASSERT_EQ(expect.messages.size(), 4u);
    for (int rank = 0; rank < 4; ++rank) {
      EXPECT_EQ(expect.messages.at(rank).kind,
                rank == 2 ? MessageKind::kThis : MessageKind::kAnother)
          << rank;
    }
    // On every rank: everyone says "this".
    scenario.faults[0].ranks = {0, 1, 2, 3};
    for (const auto& [rank, message] : deriveExpectation(scenario).messages) {
      EXPECT_EQ(message.kind, MessageKind::kThis) << rank;
    }
  }
}

// A rank whose open failed never builds its table; it says "this" all the same, once.
TEST(Expectation, ATableFailureBehindAnOpenFailureChangesNothing) {
  Scenario scenario = ranks(3);
  scenario.faults = {mapping(FaultSite::kOpen, 1, 0), mapping(FaultSite::kCopyTable, 1)};
  const Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_EQ(expect.messages.at(2).kind, MessageKind::kAnother);
}

// One rank has nobody to agree with: the table's error is raised as it is.
TEST(Expectation, ATableFailureOnOneRankIsTheBackendError) {
  Scenario scenario = ranks(1);
  scenario.faults = {mapping(FaultSite::kAllocTable, 0)};
  Expectation expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kText);
  EXPECT_EQ(expect.messages.at(0).text, "alloc failed on rank 0");
  scenario.faults = {mapping(FaultSite::kCopyTable, 0)};
  expect = deriveExpectation(scenario);
  EXPECT_EQ(expect.messages.at(0).text, "copy failed on rank 0");
  // Its buffer's allocation comes first: when that fails, the table is never built.
  scenario.faults = {mapping(FaultSite::kAlloc, 0), mapping(FaultSite::kCopyTable, 0)};
  EXPECT_EQ(deriveExpectation(scenario).messages.at(0).text, "alloc failed on rank 0");
}

TEST(Expectation, ATableFailureByChanceIsUndecidable) {
  Scenario scenario = ranks(2);
  Fault table = mapping(FaultSite::kAllocTable, 0);
  table.probability = 0.25;
  scenario.faults = {table};
  EXPECT_TRUE(undecidableReason(scenario));
  const Expectation assumed = deriveExpectationIfChanceFaultsFire(scenario);
  EXPECT_EQ(assumed.messages.at(0).kind, MessageKind::kThis);
  EXPECT_EQ(assumed.messages.at(1).kind, MessageKind::kAnother);
}

// buffer-count: the first construction some rank never makes; the ranks that make it wait there
// (group, waited), the others return (`ok`), and explain's timeline says who never came.
TEST(Expectation, ARankThatRegistersFewerBuffersLeavesTheOthersWaiting) {
  const Scenario s = scenario::parseScenario(
      "ranks: 3\nlaunchers: [threads]\nbuffers: [{label: a, size: 4KiB}, {label: b, size: 8KiB}]\n"
      "faults: [{site: buffer-count, rank: 2, count: 1}]\nexpect: {outcome: raise}\n",
      "c.yaml");
  const Expectation expect = deriveExpectation(s);
  EXPECT_EQ(expect.outcome, Outcome::kRaise);
  EXPECT_EQ(expect.messages.at(2).kind, MessageKind::kOk);
  EXPECT_EQ(expect.messages.at(0).kind, MessageKind::kGroup);
  EXPECT_EQ(expect.messages.at(1).kind, MessageKind::kGroup);
  const auto fates = deriveFates(s);
  EXPECT_TRUE(fates[2].skips);
  EXPECT_TRUE(fates[0].waited);
  const auto timelines = deriveTimelines(s);
  EXPECT_EQ(timelines[2].fired, std::vector<std::size_t>{0});  // where it skips
  EXPECT_THAT(timelines[0].messageText, ::testing::HasSubstr("(rank 2 did not arrive)"));
  EXPECT_THAT(timelines[2].end, ::testing::HasSubstr("it raises nothing (ok)"));
}

}  // namespace
}  // namespace peerconf::harness::expectation
