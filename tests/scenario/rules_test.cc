// The scenario rules (scenario/rules.h), through parsed files and directly: the defaults of
// `expect.messages` and `reported`, the ceiling on the run's bound, the planned bound itself,
// how far a fault lets a rank get (stopFor), and validate's warnings about unreachable faults.
#include "scenario/rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scenario/load.h"

namespace peerconf::harness {

using model::Fault;
using model::FaultSite;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::MessageKind;
using model::Point;
using model::Scenario;
using model::ScenarioError;
using scenario::expandScenarioPaths;
using scenario::loadScenario;
using scenario::parseScenario;
using scenario::warnings;
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// The defaults of `expect`.

TEST(ScenarioDefaults, RaiseMessagesDefaultToThisAndAnother) {
  const Scenario s = parseScenario(
      "ranks: 5\n"
      "faults:\n"
      "  - {site: open, rank: 1, peer: 0}\n"
      "  - {site: handle-corrupt, rank: 3}\n"
      "  - {site: handle-stale, rank: 4, peer: 3, probability: 0.5}\n"
      "  - {site: close, rank: 2}\n"
      "expect: {outcome: raise}\n",
      "m.yaml");
  ASSERT_EQ(s.expect.messages.size(), 5u);
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_EQ(s.expect.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kAnother);
  EXPECT_EQ(s.expect.messages.at(3).kind, MessageKind::kThis);
  EXPECT_EQ(s.expect.messages.at(4).kind, MessageKind::kThis);
  EXPECT_FALSE(s.expect.others.has_value());
}

// A table failure is agreed on like an open failure: "this" where it fails, "another" elsewhere.
TEST(ScenarioDefaults, TableFaultsDefaultToThisAndAnother) {
  const Scenario s = parseScenario(
      "ranks: 4\nfaults: [{site: alloc-table, rank: 1}, {site: copy-table, rank: 3}]\n"
      "expect: {outcome: raise}\n",
      "t.yaml");
  ASSERT_EQ(s.expect.messages.size(), 4u);
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_EQ(s.expect.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kAnother);
  EXPECT_EQ(s.expect.messages.at(3).kind, MessageKind::kThis);
}

// The runner agrees first by default: a not-ready rank says "this" (the runner's error), every
// other rank "another", as {text: ...} messages; nothing else fires.
TEST(ScenarioDefaults, NotReadyDefaultsToTheRunnersErrors) {
  const Scenario s = parseScenario(
      "ranks: 4\nfaults: [{site: not-ready, rank: 2}, {site: alloc, rank: 0}]\n"
      "expect: {outcome: raise}\n",
      "n.yaml");
  EXPECT_TRUE(s.runner.agreeFirst);
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].site, FaultSite::kNotReady);
  EXPECT_EQ(s.faults[0].count, 0);
  EXPECT_EQ(s.faults[0].error, 0);
  ASSERT_EQ(s.expect.messages.size(), 4u);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(s.expect.messages.at(rank).kind, MessageKind::kText) << rank;
    EXPECT_EQ(s.expect.messages.at(rank).text,
              rank == 2 ? kNotReadyThisRankMessage : kNotReadyAnotherRankMessage)
        << rank;
  }
  // The alloc fault on rank 0 never fires: nobody constructs.
  bool allocUnreachable = false;
  for (const auto& w : scenario::warnings(s)) {
    allocUnreachable = allocUnreachable || w.message.find("fault #1 (alloc") != std::string::npos;
  }
  EXPECT_TRUE(allocUnreachable);
  // One rank: no group, the runner's own answer.
  const Scenario one = parseScenario(
      "ranks: 1\nfaults: [{site: not-ready, rank: 0}]\nexpect: {outcome: raise}\n", "one.yaml");
  EXPECT_EQ(one.expect.messages.at(0).text, kNotReadyThisRankMessage);
}

TEST(ScenarioDefaults, ListedRanksWinAndOthersFillTheRest) {
  const Scenario s = parseScenario(
      "ranks: 4\n"
      "faults: [{site: alloc, rank: 2}]\n"
      "expect:\n"
      "  outcome: raise\n"
      "  messages:\n"
      "    2: {text: \"alloc failed on rank 2\"}\n"
      "    others: group\n",
      "o.yaml");
  ASSERT_EQ(s.expect.messages.size(), 4u);
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kText);
  EXPECT_EQ(s.expect.messages.at(2).text, "alloc failed on rank 2");
  for (int rank : {0, 1, 3}) EXPECT_EQ(s.expect.messages.at(rank).kind, MessageKind::kGroup);
  ASSERT_TRUE(s.expect.others.has_value());
  EXPECT_EQ(s.expect.others->kind, MessageKind::kGroup);
}

// `within` bounds a raising run too (on either clock), in place of the together bound.
TEST(ScenarioRules, WithinIsAcceptedWithRaise) {
  const Scenario s = parseScenario(
      "ranks: 4\n"
      "deadline: 300ms\n"
      "faults:\n"
      "  - {site: open, rank: 1, peer: 0}\n"
      "expect: {outcome: raise, within: 100ms}\n",
      "r.yaml");
  EXPECT_EQ(s.expect.within, milliseconds(100));
  EXPECT_EQ(plannedBound(s), milliseconds(100));
  EXPECT_EQ(togetherBound(s), std::nullopt);
}

TEST(ScenarioDefaults, ReportedDefaultsToTheDeadAndSurvivorsToGroup) {
  const Scenario s = parseScenario(
      "ranks: 4\n"
      "deadline: 300ms\n"
      "faults:\n"
      "  - {site: death, rank: 2, at: exchange}\n"
      "  - {site: hang, rank: 0, at: exchange}\n"
      "expect: {outcome: reported, within: 5s}\n",
      "r.yaml");
  EXPECT_EQ(s.expect.reported, (std::vector<int>{0, 2}));
  EXPECT_EQ(s.expect.within, milliseconds(5000));
  ASSERT_EQ(s.expect.messages.size(), 2u);
  EXPECT_EQ(s.expect.messages.at(1).kind, MessageKind::kGroup);
  EXPECT_EQ(s.expect.messages.at(3).kind, MessageKind::kGroup);
}

TEST(ScenarioDefaults, DeathAtCloseLeavesSurvivorsWithoutMessages) {
  const Scenario s = parseScenario(
      "ranks: 3\nfaults: [{site: death, rank: 1, at: close}]\nexpect: {outcome: reported}\n",
      "c.yaml");
  EXPECT_EQ(s.expect.reported, std::vector<int>{1});
  EXPECT_TRUE(s.expect.messages.empty());
}

TEST(ScenarioDefaults, ControlsMayRaiseWithoutAFailingFault) {
  const Scenario s = parseScenario(
      "ranks: 2\nexpect: {outcome: raise, violations: [{property: C1, finding: x}]}\n",
      "control.yaml");
  EXPECT_EQ(s.expect.messages.size(), 2u);
}

TEST(ScenarioDefaults, CountDoesNotMakeSuccessImpossibleForCloseFaults) {
  EXPECT_NO_THROW(
      parseScenario("ranks: 2\nfaults: [{site: close, rank: 0, count: 1}, {site: free, rank: 1}]\n"
                    "expect: {outcome: success}\n",
                    "s.yaml"));
  // A failing site below probability 1 may or may not fire: success stays possible.
  EXPECT_NO_THROW(
      parseScenario("ranks: 2\nfaults: [{site: open, rank: 0, probability: 0.1}]\n"
                    "expect: {outcome: success}\n",
                    "s.yaml"));
}

// ---------------------------------------------------------------------------------------------
// The run's ceiling on its bound (the bound itself: model/scenario.h).

TEST(MaxRun, ALongDelayValidatesOnlyWithMaxRun) {
  const std::string faults =
      "faults:\n  - {site: delay, rank: 0, at: close, delay: 3600s}\nexpect: {outcome: success}\n";
  EXPECT_THROW(parseScenario("ranks: 2\n" + faults, "long.yaml"), ScenarioError);
  const Scenario s = parseScenario("ranks: 2\nmax_run: 3700s\n" + faults, "long.yaml");
  ASSERT_TRUE(s.maxRun.has_value());
  EXPECT_EQ(*s.maxRun, std::chrono::seconds(3700));
}

TEST(MaxRun, WithinCountsAsTheBound) {
  try {
    parseScenario(
        "ranks: 2\ndeadline: 300ms\nfaults: [{site: hang, rank: 1, at: exchange}]\n"
        "expect: {outcome: reported, within: 90s}\n",
        "within.yaml");
    FAIL() << "a within of 90s passed the 60s ceiling";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.mark().line, 4);
    EXPECT_THAT(e.message(), HasSubstr("the run's bound is 90s ('within' 90s)"));
  }
}

// ---------------------------------------------------------------------------------------------
// Faults aimed at one buffer of `buffers:` (rule 8c).

constexpr const char* kTwoBuffers =
    "ranks: 3\n"
    "buffers: [{label: kv, size: 4KiB}, {label: ws, size: 8KiB}]\n"
    "buffers_alive: one-at-a-time\n";

// The message and line of the ScenarioError `text` raises ("" when it parses).
std::pair<std::string, int> refusal(const std::string& text) {
  try {
    parseScenario(text, "b.yaml");
  } catch (const ScenarioError& e) {
    return {e.message(), e.mark().line};
  }
  return {"", 0};
}

TEST(AimedFaults, DefaultsAreThoseOfTheAimedConstruction) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "faults: [{site: alloc, rank: 1, buffer: 1}]\n"
                                       "expect: {outcome: raise}\n",
                                   "b.yaml");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].onBuffer, 1);
  ASSERT_EQ(s.expect.messages.size(), 3u);
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_EQ(s.expect.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kAnother);
}

TEST(AimedFaults, TheAimedConstructionsRulesHold) {
  // A certain alloc fault in buffer 1 makes success impossible, as it would for one buffer.
  const auto [message, line] = refusal(std::string(kTwoBuffers) +
                                       "faults: [{site: alloc, rank: 1, buffer: 1}]\n"
                                       "expect: {outcome: success}\n");
  EXPECT_THAT(message, HasSubstr("outcome 'success' is impossible"));
}

// A death, hang, exit or delay aimed at buffer I is judged as the one-buffer scenario of that
// construction: a death reports its rank, a delay under the deadline succeeds, and one past the
// deadline leaves the peers waiting (group), as for one buffer.
TEST(AimedFaults, StopsAndDelaysAreJudgedInTheAimedConstruction) {
  const Scenario death =
      parseScenario(std::string(kTwoBuffers) +
                        "deadline: 300ms\n"
                        "faults: [{site: death, rank: 2, at: exchange, buffer: 1}]\n"
                        "expect: {outcome: reported}\n",
                    "b.yaml");
  ASSERT_EQ(death.faults.size(), 1u);
  EXPECT_EQ(death.faults[0].onBuffer, 1);
  EXPECT_EQ(death.expect.reported, std::vector<int>{2});
  EXPECT_EQ(death.expect.messages.at(0).kind, MessageKind::kGroup);
  // The last round's close: no later round, so a stop there is derived.
  EXPECT_EQ(refusal(std::string(kTwoBuffers) +
                    "faults: [{site: exit, rank: 1, at: close, code: 3, buffer: 1}]\n"
                    "expect: {outcome: reported}\n")
                .first,
            "");
  const auto [late, line] = refusal(std::string(kTwoBuffers) +
                                    "deadline: 300ms\n"
                                    "faults: [{site: delay, rank: 1, at: agree, delay: 900ms, "
                                    "buffer: 1}]\n"
                                    "expect: {outcome: success}\n");
  EXPECT_THAT(late, HasSubstr("outcome 'success' is impossible"));
  EXPECT_EQ(line, 5);  // at the delay
}

// Faults aimed at two buffers: the first construction that fails is the run's, the faults aimed
// after it never fire (a warning, at the fault), and those aimed before it act in constructions
// that succeed.
TEST(AimedFaults, SeveralBuffersDeriveTheFirstFailingConstruction) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "faults:\n"
                                       "  - {site: close, rank: 0, peer: 1, buffer: 0}\n"
                                       "  - {site: alloc, rank: 2, buffer: 1}\n"
                                       "expect: {outcome: raise}\n",
                                   "b.yaml");
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kThis);
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_TRUE(scenario::warnings(s).empty());
  const Scenario never = parseScenario(std::string(kTwoBuffers) +
                                           "faults:\n"
                                           "  - {site: alloc, rank: 1, buffer: 0}\n"
                                           "  - {site: open, rank: 2, peer: 0, buffer: 1}\n"
                                           "expect: {outcome: raise}\n",
                                       "b.yaml");
  EXPECT_EQ(never.expect.messages.at(1).kind, MessageKind::kThis);
  const auto warned = scenario::warnings(never);
  ASSERT_EQ(warned.size(), 1U);
  EXPECT_EQ(warned[0].mark.line, 6);
  EXPECT_THAT(warned[0].message,
              HasSubstr("fault #1 (open, buffer 1, line 6) never fires on rank 2: construction 0 "
                        "fails first"));
  // What the first construction's failure makes impossible is judged there: not `reported`.
  const auto [message, line] = refusal(std::string(kTwoBuffers) +
                                       "faults:\n"
                                       "  - {site: alloc, rank: 1, buffer: 0}\n"
                                       "  - {site: death, rank: 2, at: open, buffer: 1}\n"
                                       "expect: {outcome: reported}\n");
  EXPECT_THAT(message, HasSubstr("outcome 'reported' needs a death"));
}

TEST(AimedFaults, RefusedWhereTheOracleCannotDeriveThem) {
  const std::string two = kTwoBuffers;
  struct Case {
    std::string text;
    std::string says;
    int line;
  };
  const std::vector<Case> cases = {
      {"ranks: 2\nfaults: [{site: alloc, rank: 1, buffer: 0}]\nexpect: {outcome: raise}\n",
       "this scenario constructs one", 2},
      {two + "faults: [{site: alloc, rank: 1, buffer: 2}]\nexpect: {outcome: raise}\n",
       "'buffer' 2 is out of range", 4},
      // Aimed at two buffers: the first construction may fail or succeed as the draw falls.
      {two + "faults:\n  - {site: alloc, rank: 1, buffer: 0, probability: 0.5}\n"
             "  - {site: open, rank: 0, buffer: 1}\n"
             "expect: {outcome: raise}\n",
       "whose construction fails or succeeds as the draw of its faults left to chance", 6},
      // A construction before the failing one takes close, free and delay faults only.
      {two + "faults:\n  - {site: handle-aliased, rank: 1, buffer: 0}\n"
             "  - {site: open, rank: 0, buffer: 1}\n"
             "expect: {outcome: raise}\n",
       "takes close, free and delay faults only", 5},
      // A stop at close with faults aimed at several buffers.
      {two + "faults:\n  - {site: close, rank: 1, buffer: 0}\n"
             "  - {site: hang, rank: 2, at: close, buffer: 1}\n"
             "expect: {outcome: reported}\n",
       "cannot go with faults aimed at several buffers", 6},
      {two + "faults:\n  - {site: alloc, rank: 1, buffer: 0}\n  - {site: open, rank: 0}\n"
             "expect: {outcome: raise}\n",
       "is aimed at no buffer", 6},
      {two + "faults:\n  - {site: alloc, rank: 1, buffer: 1}\n  - {site: buffer-order, rank: 1}\n"
             "expect: {outcome: raise}\n",
       "cannot go with a fault aimed at one buffer", 6},
      {two + "faults: [{site: not-ready, rank: 1, buffer: 1}]\nexpect: {outcome: raise}\n",
       "key 'buffer' is not valid for site 'not-ready'", 4},
      // `before-construct` comes once a run, before buffer 0: aimed at buffer 1 it never fires.
      {two + "faults: [{site: hang, rank: 1, at: before-construct, buffer: 1}]\n"
             "expect: {outcome: reported}\n",
       "at 'before-construct' is aimed at buffer 1", 4},
      // A death at the close of a round with a later one: the next round is not derived.
      {two + "faults: [{site: death, rank: 1, at: close, buffer: 0}]\n"
             "expect: {outcome: reported}\n",
       "in the next round's construction (buffer 1)", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const auto [message, line] = refusal(c.text);
    EXPECT_THAT(message, HasSubstr(c.says));
    EXPECT_EQ(line, c.line);
  }
}

// ---------------------------------------------------------------------------------------------
// How far a rank gets when a fault fires (the timeline, model/fault_sites.h).

TEST(StopFor, EachEffectStopsWhereTheTimelineSays) {
  Scenario s;
  s.ranks = 2;
  Fault f;
  f.ranks = {1};

  f.site = FaultSite::kOpen;  // a failed mapping: every rank reaches the agreement
  EXPECT_EQ(scenario::stopFor(s, f, 0), model::kTimelineAgree);
  EXPECT_EQ(scenario::stopFor(s, f, 1), model::kTimelineAgree);
  f.probability = 0.5;  // may not fire: stops nobody
  EXPECT_EQ(scenario::stopFor(s, f, 1), model::kTimelineNever);
  f.probability = 1.0;

  f.site = FaultSite::kAlloc;  // every rank raises in the exchange; one rank at its allocation
  EXPECT_EQ(scenario::stopFor(s, f, 0), model::kTimelineExchange);
  s.ranks = 1;
  f.ranks = {0};
  EXPECT_EQ(scenario::stopFor(s, f, 0), model::kTimelineAlloc);
  s.ranks = 2;
  f.ranks = {1};

  f.site = FaultSite::kClose;  // a failed release stops nobody
  EXPECT_EQ(scenario::stopFor(s, f, 1), model::kTimelineNever);

  f.site = FaultSite::kDeath;  // the rank it names dies at its point
  f.at = Point::kOpen;
  EXPECT_EQ(scenario::stopFor(s, f, 1), model::kTimelineOpen);
  EXPECT_GE(scenario::stopFor(s, f, 0), model::kTimelineOpen);  // the others at a later group call

  f.site = FaultSite::kNotReady;  // with the runner's agreement nobody constructs
  EXPECT_EQ(scenario::stopFor(s, f, 0), model::kTimelineBeforeConstruct);
  EXPECT_EQ(scenario::stopFor(s, f, 1), model::kTimelineBeforeConstruct);
}

// ---------------------------------------------------------------------------------------------
// collective-order (rule 10d): what it cannot mean is refused at the fault.

std::string orderRefusal(const std::string& yaml) {
  try {
    (void)parseScenario(yaml, "r.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CollectiveOrder, EveryRankInTheSameOrderIsRefused) {
  const std::string error = orderRefusal(
      "ranks: 3\nfaults:\n  - {site: collective-order, ranks: [0, 1], at: agree}\n"
      "  - {site: collective-order, rank: 2, at: agree}\n"
      "expect: {outcome: raise, messages: {others: group}}\n");
  EXPECT_THAT(error, HasSubstr("r.yaml:3:5: every rank makes its calls in this order"));
  // Every rank reordered, but at two different calls: the calls meet, accepted.
  EXPECT_EQ(orderRefusal("ranks: 2\nfaults:\n  - {site: collective-order, rank: 0, at: agree}\n"
                         "  - {site: collective-order, rank: 1, at: exchange}\n"
                         "expect: {outcome: raise, messages: {others: group}}\n"),
            "accepted");
}

TEST(CollectiveOrder, ACallThatAlreadyFailsLocallyIsRefused) {
  EXPECT_THAT(orderRefusal("ranks: 3\nfaults:\n  - {site: collective-order, rank: 1, at: agree}\n"
                           "  - {site: foreign-exception, rank: 1, call: agree}\n"
                           "expect: {outcome: raise, messages: {others: group}}\n"),
              HasSubstr("r.yaml:3:5: rank 1's agreement already fails there, locally"));
  // On another rank, or at the other call: accepted.
  EXPECT_EQ(orderRefusal("ranks: 3\nfaults:\n  - {site: collective-order, rank: 1, at: agree}\n"
                         "  - {site: group-fail, rank: 2, at: agree}\n"
                         "expect: {outcome: raise, messages: {others: group}}\n"),
            "accepted");
}

TEST(CollectiveOrder, ARankThatStopsFirstNeverReordersAndOneRankHasNoGroup) {
  EXPECT_THAT(orderRefusal("ranks: 2\nfaults:\n  - {site: hang, rank: 1, at: open}\n"
                           "  - {site: collective-order, rank: 1, at: agree}\n"
                           "expect: {outcome: reported, reported: [1]}\n"),
              HasSubstr("r.yaml:4:5: this collective-order fault on rank 1 never fires"));
  EXPECT_THAT(
      orderRefusal("ranks: 1\nfaults:\n  - {site: collective-order, rank: 0, at: exchange}\n"
                   "expect: {outcome: raise, messages: {others: group}}\n"),
      HasSubstr("never fires with 1 rank"));
}

TEST(CollectiveOrder, StopsItsCallOnEveryRank) {
  Scenario s;
  s.ranks = 3;
  Fault f;
  f.site = FaultSite::kCollectiveOrder;
  f.ranks = {1};
  f.at = Point::kExchange;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(scenario::stopFor(s, f, rank), model::kTimelineExchange) << rank;
  }
  const Scenario parsed = parseScenario(
      "ranks: 3\nfaults:\n  - {site: collective-order, rank: 1, at: exchange}\n"
      "expect: {outcome: raise, messages: {others: group}}\n",
      "r.yaml");
  EXPECT_EQ(parsed.expect.messages.at(1).kind, MessageKind::kGroup);
}

// ---------------------------------------------------------------------------------------------
// Unreachable faults: validate's warnings.

std::vector<std::string> warningsOf(const std::string& yaml) {
  std::vector<std::string> out;
  for (const auto& w : scenario::warnings(parseScenario(yaml, "w.yaml"))) {
    out.push_back(std::to_string(w.mark.line) + ":" + std::to_string(w.mark.column) + " " +
                  w.message);
  }
  return out;
}

TEST(UnreachableFaults, ACloseFaultOnARankThatNeverMapsAPeer) {
  const auto warnings = warningsOf(
      "ranks: 2\nfaults:\n  - {site: get-handle, rank: 1}\n  - {site: close, rank: 0}\n"
      "expect:\n  outcome: raise\n  messages: {1: {text: x}, 0: group}\n");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "4:5 fault #1 (close, line 4) never fires on rank 0: the get-handle fault (line 3) "
            "ends rank 0's handshake at 'exchange': it never maps a peer, so it never closes one "
            "(a run fails its coverage check)");
}

TEST(UnreachableFaults, AFreeFaultOnARankWhoseAllocFails) {
  const auto warnings = warningsOf(
      "ranks: 1\nfaults:\n  - {site: alloc, rank: 0}\n  - {site: free, rank: 0, probability: 0.5}\n"
      "expect:\n  outcome: raise\n  messages: {0: {text: x}}\n");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("its own alloc fault (line 3) ends rank 0's handshake at "
                                     "'alloc': its allocation fails, so it never frees (it is "
                                     "never counted)"));
}

TEST(UnreachableFaults, AFaultPastTheStopOfItsRank) {
  // A delay at close in a raising scenario: close() is never called.
  const auto warnings = warningsOf(
      "ranks: 2\nfaults:\n  - {site: open, rank: 0}\n"
      "  - {site: delay, rank: 1, at: close, delay: 5ms}\nexpect: {outcome: raise}\n");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("ends rank 1's handshake at 'agree': it never reaches "
                                     "'close'"));
}

// The core stops opening at a rank's first failed open (src/handshake.cc): a later open of that
// rank never comes, nor a close of a peer it never mapped; and the fault plan fires one fault a
// call, the first of the file's order (model/rank_calls.h).
TEST(UnreachableFaults, AnOpenBehindTheRanksFirstFailedOpen) {
  const auto warnings = warningsOf(
      "ranks: 4\nfaults:\n  - {site: open, rank: 0, peer: 2}\n  - {site: open, rank: 0, peer: 3}\n"
      "  - {site: close, rank: 0, peer: 3}\n  - {site: open, rank: 1, peer: 3}\n"
      "expect: {outcome: raise}\n");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0],
            "4:5 fault #1 (open, line 4) never fires on rank 0: rank 0's open of peer 2 fails "
            "first (its own open fault (line 3)), and the core stops opening there (a run fails "
            "its coverage check)");
  EXPECT_EQ(warnings[1],
            "5:5 fault #2 (close, line 5) never fires on rank 0: it never maps peer 3, so it never "
            "closes one: rank 0's open of peer 2 fails first (its own open fault (line 3)), and "
            "the core stops opening there (a run fails its coverage check)");
}

TEST(UnreachableFaults, ADamagedHandleFailsItsOpenFirst) {
  // Peer 1's handle reaches rank 0 stale: its open fails before the one of peer 2. A handle fault
  // of a later peer still fires (as the entries arrive), so it is no warning.
  const auto warnings = warningsOf(
      "ranks: 3\nfaults:\n  - {site: handle-stale, rank: 0, peer: 1}\n"
      "  - {site: open, rank: 0, peer: 2}\n  - {site: handle-corrupt, rank: 0, peer: 2}\n"
      "expect: {outcome: raise}\n");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("4:5 fault #1 (open, line 4) never fires on rank 0: rank "
                                     "0's open of peer 1 fails first (its own handle-stale fault "
                                     "(line 3))"));
}

TEST(UnreachableFaults, TheSecondFaultOfOneCall) {
  const auto alloc = warningsOf(
      "ranks: 2\nfaults:\n  - {site: alloc, rank: 0}\n"
      "  - {site: alloc, rank: 0, probability: 0.5}\n"
      "expect:\n  outcome: raise\n  messages: {0: this, 1: another}\n");
  ASSERT_EQ(alloc.size(), 1u);
  EXPECT_EQ(alloc[0],
            "4:5 fault #1 (alloc, line 4) never fires on rank 0: its own alloc fault (line 3) "
            "takes the same call first: the fault plan fires one fault a call, the first of the "
            "file's order (it is never counted)");
  // Rank 1 closes one peer: the close fault aimed at it first takes that close.
  const auto close = warningsOf(
      "ranks: 2\nfaults:\n  - {site: close, rank: 1, peer: 0}\n  - {site: close, rank: 1}\n"
      "expect: {outcome: success}\n");
  ASSERT_EQ(close.size(), 1u);
  EXPECT_THAT(close[0], HasSubstr("4:5 fault #1 (close, line 4) never fires on rank 1: its own "
                                  "close fault (line 3) takes the same call (peer 0) first"));
}

TEST(UnreachableFaults, ReachableFaultsAndTheSuiteRaiseNoWarning) {
  EXPECT_TRUE(warningsOf("ranks: 3\nfaults:\n  - {site: open, rank: 0, peer: 2}\n"
                         "  - {site: close, rank: 0}\n  - {site: free, rank: 1}\n"
                         "expect: {outcome: raise}\n")
                  .empty());
  // Three suite files plant unreachable faults on purpose (chance ones, so that coverage does not
  // require them): the validator must name exactly those there (as many as the file plants, each
  // with the text given), and nothing elsewhere.
  const std::map<std::string, std::pair<std::size_t, std::string>> deliberate = {
      {"alloc/alloc-fails-beside-open-failure.yaml",
       {1,
        "fault #1 (open, line 14) never fires on rank 2: the alloc fault (line 12) ends rank 2's "
        "handshake at 'exchange'"}},
      {"handles/handle-corrupt-of-failure-record.yaml",
       {1,
        "fault #1 (handle-corrupt, line 17) never fires on rank 0: peer 1 sends a failure record "
        "in the exchange"}},
      {"open/cross-node-later-opens-never-fire.yaml",
       {4, "fails first (its own open fault (line "}},
      // A slow rank: the delay times the peers out for certain, and validate says so.
      {"dataplane/slow-writer-times-out.yaml",
       {1, "the peers' data planes time out for certain: rank(s) 1 late by 500 ms at step 10"}},
      {"dataplane/slow-reader-times-out-allreduce.yaml",
       {1, "the peers' data planes time out for certain: rank(s) 2 late by 1000 ms at step 20"}},
      // The same in one buffer's data plane of several: named by its buffer.
      {"buffers/dataplane-late-writer-second-buffer.yaml",
       {1,
        "buffer 1: the peers' data planes time out for certain: rank(s) 1 late by 500 ms at "
        "step 10"}},
      // A control of the judge's coverage rule: the warnings are what it is made of.
      {"judge/coverage-certain-fault-never-fires.yaml",
       {4, "fails first (its own open fault (line "}},
      // The same with faults aimed at two buffers: the second construction never comes.
      {"judge/coverage-fault-aimed-after-failing-construction.yaml",
       {1, "never fires on rank 2: construction 0 fails first (buffer 0)"}},
      // Two certain faults on one call, and a close on a rank that maps nothing.
      {"judge/coverage-second-fault-on-one-call.yaml", {1, "takes the same call (peer 0) first"}},
      {"judge/coverage-second-fault-on-one-alloc.yaml", {1, "takes the same call first"}},
      {"judge/coverage-close-on-a-rank-that-mapped-nothing.yaml",
       {1, "it never maps a peer, so it never closes one"}}};
  std::set<std::string> sawDeliberate;
  for (const std::string& file : expandScenarioPaths({PEERCONF_SCENARIOS_DIR})) {
    const auto warnings = scenario::warnings(loadScenario(file));
    const auto named = std::find_if(deliberate.begin(), deliberate.end(), [&](const auto& entry) {
      return file.size() >= entry.first.size() &&
             file.compare(file.size() - entry.first.size(), entry.first.size(), entry.first) == 0;
    });
    if (named != deliberate.end()) {
      sawDeliberate.insert(named->first);
      ASSERT_EQ(warnings.size(), named->second.first) << file;
      for (const auto& warning : warnings) {
        EXPECT_THAT(warning.message, HasSubstr(named->second.second));
      }
      continue;
    }
    EXPECT_TRUE(warnings.empty()) << file << ": " << warnings.front().message;
  }
  EXPECT_EQ(sawDeliberate.size(), deliberate.size());
}

}  // namespace
}  // namespace peerconf::harness
