// Console report: scenario lines, rank-by-rank failure stories, the final count line.
#include "reports/console.h"

#include <gtest/gtest.h>

#include <sstream>

#include "checkers/checkers.h"
#include "judge/judgement.h"
#include "synthetic_run.h"

namespace peerconf::harness::reports {

using model::Property;
using model::RunRecord;
using model::Verdict;
namespace {

namespace testing = checkers::testing;

// Judged on every built-in checker, by the rules alone (a synthetic run has no file to explain).
judge::Judgement check(const RunRecord& record) {
  return judge::judge(record, checkers::checkRun(record, checkers::builtinCheckers()));
}

TEST(ConsoleReport, PassLineAndSummary) {
  std::ostringstream out;
  ConsoleReport report(out);
  const RunRecord record = testing::successRun();
  report.onScenario(record, check(record));
  report.finish();
  EXPECT_EQ(out.str(), "PASS clean (4 ranks, 12 ms wall)\n1 passed, 0 failed\n");
  EXPECT_EQ(report.passed(), 1u);
}

TEST(ConsoleReport, ARunOnSimulatedTimeSaysSo) {
  std::ostringstream out;
  ConsoleReport report(out);
  RunRecord record = testing::successRun();
  record.clock = "sim";
  report.onScenario(record, check(record));
  EXPECT_EQ(out.str(), "PASS clean (4 ranks, 12 ms wall, clock sim: event times simulated)\n");
}

TEST(ConsoleReport, FailureIsExplainedRankByRankWithReproduce) {
  std::ostringstream out;
  ConsoleReport report(out);
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[1].ledger.pop_back();  // rank 1 never frees its buffer
  record.ranks[2].cause.clear();
  report.onScenario(record, check(record));
  report.onScenario(testing::successRun(2), check(testing::successRun(2)));
  report.finish();
  const std::string text = out.str();
  EXPECT_NE(text.find("FAIL open_fail (4 ranks, 15 ms wall): C2 message, C3 cleanup\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("C3 cleanup: "), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1: buffer 0x20000000 (65536 bytes, gen 11) allocated, never freed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 2: the failing rank lost its backend error"), std::string::npos)
      << text;
  EXPECT_NE(text.find("reproduce: peerconf run scenarios/handshake/open_fail.yaml --seed 7 "
                      "--launcher threads"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("PASS clean (2 ranks, 12 ms wall)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n1 passed, 1 failed\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 19), "1 passed, 1 failed\n");
}

TEST(ConsoleReport, ProgressPrefix) {
  std::ostringstream out;
  ConsoleReport report(out, {.progress = true, .total = 300});
  const RunRecord record = testing::hangRun();
  report.onScenario(record, check(record));
  EXPECT_EQ(out.str().rfind("[1/300] PASS hang_agree (4 ranks, 1200 ms wall)", 0), 0u) << out.str();
}

TEST(ConsoleReport, NegativeControlPassesWhenItsPropertyFails) {
  std::ostringstream out;
  ConsoleReport report(out);
  RunRecord record = testing::successRun();
  record.scenario.expect.violations = {"C4"};
  record.ranks[0].ownSlotIsLocal = false;
  report.onScenario(record, check(record));
  // Expecting C6 to fail while no C6 checker ran (a caller that runs its own subset) proves
  // nothing: a failure.
  record.scenario.expect.violations = {"C4", "C6"};
  report.onScenario(record,
                    judge::judge(record, checkers::checkRun(record, {{Property::kC4Addresses,
                                                                      checkers::checkAddresses}})));
  report.finish();
  const std::string text = out.str();
  EXPECT_NE(text.find("PASS clean (4 ranks, 12 ms wall) [C4 failed as expected]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("no checker ran it"), std::string::npos) << text;
  EXPECT_NE(text.find("1 passed, 1 failed\n"), std::string::npos) << text;
}

TEST(ConsoleReport, HarnessErrorsFailTheScenario) {
  std::ostringstream out;
  ConsoleReport report(out);
  RunRecord record = testing::successRun();
  record.harnessErrors = {"rank 3 sent an unreadable result"};
  report.onScenario(record, check(record));
  EXPECT_NE(out.str().find("FAIL clean"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("harness: rank 3 sent an unreadable result"), std::string::npos);
  EXPECT_FALSE(isTerminal(out));
}

}  // namespace
}  // namespace peerconf::harness::reports
