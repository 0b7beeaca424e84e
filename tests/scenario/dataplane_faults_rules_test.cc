// Deaths, hangs and exits `at: dataplane` in a scenario file (scenarios/README.md rules 4, 6, 8,
// 8b, 13, 17): what parses, the defaults it gets, and each validation error with its line,
// column and message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/fault_sites.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness {

using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Scenario;
using model::ScenarioError;
using scenario::parseScenario;
namespace {

using ::testing::HasSubstr;

// A 4-rank data plane of 200 steps; `faults` and `expect` follow (line 8 on).
std::string file(const std::string& faults, const std::string& expect,
                 const std::string& dataplaneExtra = "") {
  return "ranks: 4\n"                                                           // 1
         "deadline: 2s\n"                                                       // 2
         "dataplane:\n"                                                         // 3
         "  steps: 200\n"                                                       // 4
         "  timeout: 300ms\n" +                                                 // 5
         (dataplaneExtra.empty() ? "  layout: reference\n" : dataplaneExtra) +  // 6
         "faults:\n" +                                                          // 7
         faults +
         expect;
}

const std::string kReported = "expect: {outcome: reported, reported: [2]}\n";

struct Error {
  int line = 0;
  int column = 0;
  std::string message;
};

Error ruleErrorOf(const std::string& text) {
  try {
    parseScenario(text, "dp.yaml");
  } catch (const ScenarioError& e) {
    return {e.mark().line, e.mark().column, e.message()};
  }
  ADD_FAILURE() << "parsed without an error:\n" << text;
  return {};
}

TEST(DataplaneFaults, AHangAtAStepParsesWithItsStepAndTheSurvivorsDefault) {
  const Scenario s = parseScenario(
      file("  - {site: hang, rank: 2, at: dataplane, step: 100}\n", kReported), "dp.yaml");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].at, Point::kDataplane);
  EXPECT_EQ(s.faults[0].step, 100u);
  EXPECT_TRUE(model::stopsInDataPlane(s.faults[0]));
  EXPECT_EQ(s.expect.outcome, Outcome::kReported);
  EXPECT_EQ(s.expect.reported, std::vector<int>{2});
  ASSERT_EQ(s.expect.messages.size(), 3u);
  for (int rank : {0, 1, 3}) {
    EXPECT_EQ(s.expect.messages.at(rank).kind, MessageKind::kText);
    EXPECT_EQ(s.expect.messages.at(rank).text, "waiting for rank 2's pair");
  }
}

TEST(DataplaneFaults, AnExitTakesItsCodeAndOthersMayNameTheRank) {
  const Scenario s =
      parseScenario(file("  - {site: exit, rank: 2, at: dataplane, step: 0, code: 7}\n",
                         "expect: {outcome: reported, messages: {others: {text: \"rank 2\"}}}\n"),
                    "dp.yaml");
  EXPECT_EQ(s.faults[0].code, 7);
  EXPECT_EQ(s.faults[0].step, 0u);
  EXPECT_EQ(s.expect.messages.at(0).text, "rank 2");
}

TEST(DataplaneFaults, TheWriterWritesTheStepBack) {
  const Scenario s = parseScenario(file("  - {site: death, rank: 1, at: dataplane, step: 42}\n",
                                        "expect: {outcome: reported}\n"),
                                   "dp.yaml");
  const Scenario back = parseScenario(scenario::writeScenario(s), "back.yaml");
  ASSERT_EQ(back.faults.size(), 1u);
  EXPECT_EQ(back.faults[0].at, Point::kDataplane);
  EXPECT_EQ(back.faults[0].step, 42u);
}

TEST(DataplaneFaults, StepIsRequiredAtDataplane) {
  const Error e = ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane}\n", kReported));
  EXPECT_EQ(e.line, 8);
  EXPECT_EQ(e.column, 5);
  EXPECT_THAT(e.message, HasSubstr("a hang fault at 'dataplane' needs 'step'"));
}

TEST(DataplaneFaults, StepIsValidOnlyAtDataplane) {
  const Error e = ruleErrorOf(file("  - {site: hang, rank: 2, at: agree, step: 3}\n", kReported));
  EXPECT_EQ(e.line, 8);
  EXPECT_EQ(e.column, 38);
  EXPECT_THAT(e.message, HasSubstr("'step' names a data-plane step: it is valid only with "
                                   "'at: dataplane' (at is 'agree')"));
}

TEST(DataplaneFaults, StepIsNotAKeyOfOtherSites) {
  const Error e = ruleErrorOf(file("  - {site: open, rank: 2, step: 3}\n", kReported));
  EXPECT_EQ(e.line, 8);
  EXPECT_THAT(e.message, HasSubstr("key 'step' is not valid for site 'open'"));
}

TEST(DataplaneFaults, OnlyDeathsHangsAndExitsHappenAtDataplane) {
  const Error e =
      ruleErrorOf(file("  - {site: delay, rank: 2, at: dataplane, delay: 1ms}\n", kReported));
  EXPECT_EQ(e.line, 8);
  EXPECT_EQ(e.column, 32);
  EXPECT_THAT(e.message, HasSubstr("a delay fault happens at"));
  EXPECT_THAT(e.message, HasSubstr("a data-plane delay is 'dataplane.late'"));
  const Error g = ruleErrorOf(file("  - {site: group-fail, rank: 2, at: dataplane}\n", kReported));
  EXPECT_THAT(g.message, HasSubstr("a group-fail fault happens at 'exchange' or 'agree'"));
}

TEST(DataplaneFaults, AStepMustBeAnIntegerFromZero) {
  const Error e =
      ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: -1}\n", kReported));
  EXPECT_EQ(e.line, 8);
  EXPECT_EQ(e.column, 48);
  EXPECT_THAT(e.message, HasSubstr("'step' must be an integer from 0"));
}

TEST(DataplaneFaults, NeedsADataplaneSection) {
  const Error e = ruleErrorOf(
      "ranks: 4\nfaults:\n  - {site: hang, rank: 2, at: dataplane, step: 5}\n" + kReported);
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 5);
  EXPECT_THAT(e.message, HasSubstr("needs a 'dataplane:' section"));
}

TEST(DataplaneFaults, TheStepMustCome) {
  const Error e =
      ruleErrorOf(file("  - {site: death, rank: 2, at: dataplane, step: 200}\n", kReported));
  EXPECT_EQ(e.line, 8);
  EXPECT_EQ(e.column, 5);
  EXPECT_THAT(e.message, HasSubstr("never fires: step 200 never comes, the data plane runs 200 "
                                   "steps"));
}

TEST(DataplaneFaults, OneDataplaneStopPerRank) {
  const Error e =
      ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n"
                       "  - {site: death, rank: 2, at: dataplane, step: 5}\n",
                       kReported));
  EXPECT_EQ(e.line, 9);
  EXPECT_THAT(e.message, HasSubstr("rank 2 already hangs at data-plane step 5 (line 8)"));
}

TEST(DataplaneFaults, ConflictsWithDataplaneStopOnTheSameRank) {
  const Error e = ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n", kReported,
                                   "  stop: {rank: 2, step: 5}\n"));
  EXPECT_EQ(e.line, 8);
  EXPECT_THAT(e.message, HasSubstr("stops rank 2, which 'dataplane.stop' (line 6) already stops "
                                   "at step 5"));
}

TEST(DataplaneFaults, EveryDataplaneStopIsAtOneStep) {
  const Error e =
      ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n"
                       "  - {site: death, rank: 1, at: dataplane, step: 9}\n",
                       "expect: {outcome: reported}\n"));
  EXPECT_EQ(e.line, 9);
  EXPECT_THAT(e.message, HasSubstr("at step 9 never fires: rank 2 hangs at data-plane step 5"));
  const Error d = ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n", kReported,
                                   "  stop: {rank: 1, step: 6}\n"));
  EXPECT_THAT(d.message, HasSubstr("stop at different steps"));
}

TEST(DataplaneFaults, AHandshakeFailureFirstMeansTheRankNeverGetsThere) {
  const Error e =
      ruleErrorOf(file("  - {site: open, rank: 0}\n"
                       "  - {site: hang, rank: 2, at: dataplane, step: 5}\n",
                       kReported));
  EXPECT_EQ(e.line, 9);
  EXPECT_THAT(e.message, HasSubstr("rank 2 never reaches 'dataplane'"));
}

TEST(DataplaneFaults, TheDataplaneStillNeedsSuccessOrOnlyDataplaneStops) {
  const Error e =
      ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n"
                       "  - {site: hang, rank: 1, at: close}\n",
                       "expect: {outcome: reported}\n"));
  EXPECT_THAT(e.message, HasSubstr("or 'reported' when every rank that stops stops at "
                                   "'dataplane'"));
  const Error s = ruleErrorOf(
      file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n", "expect: {outcome: success}\n"));
  EXPECT_THAT(s.message, HasSubstr("expect.outcome must be 'reported'"));
}

TEST(DataplaneFaults, SurvivorsReportATextNotAGroupError) {
  const Error e = ruleErrorOf(file("  - {site: hang, rank: 2, at: dataplane, step: 5}\n",
                                   "expect: {outcome: reported, messages: {others: group}}\n"));
  EXPECT_THAT(e.message, HasSubstr("cannot say 'group': its handshake succeeded"));
}

TEST(DataplaneFaults, OneRankHasNoDataplane) {
  const Error e = ruleErrorOf(
      "ranks: 1\nfaults:\n  - {site: hang, rank: 0, at: dataplane, step: 5}\n"
      "expect: {outcome: reported}\n");
  EXPECT_EQ(e.line, 3);
  EXPECT_THAT(e.message, HasSubstr("point 'dataplane' never happens with 1 rank"));
}

}  // namespace
}  // namespace peerconf::harness
