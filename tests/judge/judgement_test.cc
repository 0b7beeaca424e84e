// judge(): a scenario's verdicts against its expectation — plain failures, negative controls with
// their named findings, controls whose checker never ran, coverage of certain faults, the
// harness's own errors — and the duration format every report prints; judgeRun, the one entry,
// with the oracle's differences of the file derived from the record's scenario.
#include "judge/judgement.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "synthetic_run.h"

namespace peerconf::harness::reports {

using judge::countExcesses;
using judge::coverageMisses;
using judge::Failure;
using judge::firedFaults;
using judge::formatDuration;
using judge::judge;
using judge::Judgement;
using judge::rankWord;
using judge::story;
using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::Property;
using model::RunRecord;
using model::Verdict;
namespace {

// The kFault event of fault #`fault` (site `what`) firing on `rank`.
Event firedEvent(int rank, const char* what, std::size_t fault) {
  Event fired;
  fired.rank = rank;
  fired.kind = EventKind::kFault;
  fired.what = what;
  fired.fault = fault;
  return fired;
}

std::vector<Verdict> passing(const RunRecord& record) {
  std::vector<Verdict> out;
  for (Property p : {Property::kC1Uniform, Property::kC2Message, Property::kC3Cleanup,
                     Property::kC4Addresses, Property::kC5Agreement, Property::kC8Bounded}) {
    Verdict v;
    v.property = p;
    v.summary = "fine";
    v.reproduce = "peerconf run " + record.scenario.file;
    out.push_back(v);
  }
  return out;
}

Verdict& verdictOf(std::vector<Verdict>& verdicts, Property p) {
  for (Verdict& v : verdicts) {
    if (v.property == p) return v;
  }
  throw std::logic_error("no verdict");
}

TEST(Judge, EveryVerdictPassingPasses) {
  const RunRecord record = checkers::testing::successRun();
  const Judgement j = judge(record, passing(record));
  EXPECT_TRUE(j.passed);
  EXPECT_TRUE(j.failures.empty());
  EXPECT_TRUE(j.controls.empty());
}

TEST(Judge, AFailingVerdictFailsWithItsTitleSummaryAndReproduceLine) {
  const RunRecord record = checkers::testing::successRun();
  auto verdicts = passing(record);
  Verdict& c3 = verdictOf(verdicts, Property::kC3Cleanup);
  c3.status = Verdict::Status::kFail;
  c3.summary = "rank 2 never closed peer 0";
  const Judgement j = judge(record, verdicts);
  ASSERT_FALSE(j.passed);
  ASSERT_EQ(j.failures.size(), 1u);
  EXPECT_NE(j.failures[0].title.find("C3"), std::string::npos) << j.failures[0].title;
  EXPECT_EQ(j.failures[0].summary, "rank 2 never closed peer 0");
  EXPECT_EQ(j.failures[0].reproduce, c3.reproduce);
}

// The harness's own release after the checks (what the core left) must succeed: a failure means it
// counted as held what the rank no longer held, and the run fails for the harness, not the core.
TEST(Judge, AFailedReleaseOfWhatTheCoreLeftIsTheHarnessesFailure) {
  RunRecord record = checkers::testing::successRun();
  const std::string why(model::kReleasedAfterTheChecks);
  record.ranks[1].harnessReleases.push_back("freed buffer 0x10 (" + why + ")");
  record.ranks[1].harnessReleases.push_back(
      "could not free buffer 0x20 (held after an injected free failure): invalid");
  EXPECT_TRUE(judge(record, passing(record)).passed);  // an injected failure's leftover: not ours
  record.ranks[1].harnessReleases.push_back("could not free buffer 0x30 (" + why + "): invalid");
  const Judgement j = judge(record, passing(record));
  ASSERT_FALSE(j.passed);
  ASSERT_EQ(j.failures.size(), 1u);
  EXPECT_EQ(j.failures[0].rule, "harness");
  EXPECT_NE(
      j.failures[0].summary.find("rank 1: the harness's release of what the core left failed"),
      std::string::npos)
      << j.failures[0].summary;
}

// A C2 failure that explain traces to the file's expect: reads as the file's problem ("the file
// expected X; the core did: Y", explain's differences listed); without such a difference, and for
// C3 (the core's own), the wording stays the core's.
TEST(Judge, AWrongExpectationReadsAsTheFilesProblem) {
  RunRecord record = checkers::testing::successRun();
  auto verdicts = passing(record);
  Verdict& c2 = verdictOf(verdicts, Property::kC2Message);
  c2.status = Verdict::Status::kFail;
  c2.summary = "1 of 4 ranks raised the wrong error";
  c2.findings = {{1, "expected GroupTimeout or GroupError, got raised HandshakeError: x"}};
  Verdict& c3 = verdictOf(verdicts, Property::kC3Cleanup);
  c3.status = Verdict::Status::kFail;
  c3.summary = "rank 2 never closed peer 0";

  const Judgement core = judge(record, verdicts);  // no difference: the core's failure
  ASSERT_EQ(core.failures.size(), 2u);
  EXPECT_EQ(core.failures[0].summary, "1 of 4 ranks raised the wrong error");
  EXPECT_EQ(core.failures[0].findings[0].text, c2.findings[0].text);

  judge::FileDifferences differences;
  differences.expect = {"a.yaml:14:5: rank 1: group: DIFFERS: the derivation says another"};
  const Judgement file = judge(record, verdicts, differences);
  ASSERT_EQ(file.failures.size(), 2u);
  EXPECT_EQ(file.failures[0].summary.rfind("the file's expect: is wrong, not the core", 0), 0u)
      << file.failures[0].summary;
  ASSERT_EQ(file.failures[0].findings.size(), 2u);
  EXPECT_EQ(file.failures[0].findings[0].text,
            "the file expected GroupTimeout or GroupError; the core did: raised HandshakeError: x");
  EXPECT_EQ(file.failures[0].findings[1].text, "explain: " + differences.expect[0]);
  EXPECT_EQ(file.failures[1].summary, "rank 2 never closed peer 0");
}

// judgeRun, the one entry: the verdicts are the checkers', and what the oracle finds wrong with
// the scenario itself it derives from the scenario in the record, for the production core only.
TEST(JudgeRun, DerivesTheFilesDifferencesFromTheScenarioInTheRecord) {
  RunRecord record = checkers::testing::openFailureRun(4, 2, 0);
  const Judgement right = judge::judgeRun(record);
  EXPECT_TRUE(right.passed) << story(record, right);
  EXPECT_FALSE(right.verdicts.empty());

  // The file says rank 2, whose open fails, raises "another": C2 fails, and the oracle says the
  // file is wrong (its line names the place the file wrote it).
  record.scenario.expect.messages[2] = {model::MessageKind::kAnother, {}};
  record.scenario.expect.marks.messages[2] = {9, 5};
  const Judgement wrong = judge::judgeRun(record);
  ASSERT_FALSE(wrong.passed);
  ASSERT_EQ(wrong.failures.front().title, "C2 message") << story(record, wrong);
  EXPECT_EQ(wrong.failures.front().summary.rfind("the file's expect: is wrong, not the core", 0),
            0u)
      << wrong.failures.front().summary;
  const std::string explained = wrong.failures.front().findings.back().text;
  EXPECT_EQ(explained.rfind("explain: scenarios/handshake/open_fail.yaml:9:5: rank 2: another: "
                            "DIFFERS: the file expects another; the derivation says this",
                            0),
            0u)
      << explained;

  // A planted core (named by the run or by the scenario) is judged by the rules alone.
  for (const std::string planted : {"run", "scenario"}) {
    RunRecord control = record;
    (planted == "run" ? control.core : control.scenario.core) = "skips-agreement";
    const Judgement judged = judge::judgeRun(control);
    ASSERT_FALSE(judged.passed);
    EXPECT_EQ(judged.failures.front().summary.find("the file's expect"), std::string::npos)
        << planted << ": " << judged.failures.front().summary;
  }
}

// A certain fault the oracle says never fires fails the run's coverage as the file's problem.
TEST(JudgeRun, AnUnfiredCertainFaultTheOracleForesawIsTheFilesProblem) {
  RunRecord record = checkers::testing::openFailureRun(4, 2, 0);
  Fault late;  // close() is never called in a run that raises
  late.site = FaultSite::kDelay;
  late.at = model::Point::kClose;
  late.delay = std::chrono::milliseconds(1);
  late.ranks = {0};
  late.mark = {12, 5};
  record.scenario.faults.push_back(late);
  record.requireCoverage = true;
  const Judgement judged = judge::judgeRun(record);
  ASSERT_FALSE(judged.passed);
  const Failure& coverage = judged.failures.back();
  ASSERT_EQ(coverage.title, "coverage") << story(record, judged);
  EXPECT_NE(coverage.summary.find("the file is wrong, not the core"), std::string::npos)
      << coverage.summary;
  EXPECT_EQ(coverage.findings.back().text.rfind(
                "explain: scenarios/handshake/open_fail.yaml:12:5: fault #1 (delay, probability "
                "1) on rank 0: DIFFERS",
                0),
            0u)
      << coverage.findings.back().text;
  // Without the oracle's word (judge() with no FileDifferences) the miss reads as the core's.
  const Judgement plain = judge(record, judged.verdicts);
  EXPECT_EQ(plain.failures.back().summary.find("the file is wrong"), std::string::npos);
}

TEST(Judge, AControlPassesOnlyWhenItsPropertyFailsWithTheNamedFinding) {
  RunRecord record = checkers::testing::successRun();
  record.scenario.expect.violations = {"C4"};
  record.scenario.expect.findings = {{"C4", "Permuted Table", {}}};
  auto verdicts = passing(record);
  Verdict& c4 = verdictOf(verdicts, Property::kC4Addresses);
  c4.expectedViolation = true;

  // The property passed: the control proves nothing.
  EXPECT_FALSE(judge(record, verdicts).passed);

  // It failed, with the named finding (case ignored): the control passes and is listed.
  c4.status = Verdict::Status::kFail;
  c4.summary = "rank 1: the permuted table does not match";
  const Judgement caught = judge(record, verdicts);
  EXPECT_TRUE(caught.passed);
  EXPECT_EQ(caught.controls, std::vector<std::string>{"C4"});

  // It failed for another reason: not the control's finding.
  c4.summary = "rank 1: unwritten entry";
  EXPECT_FALSE(judge(record, verdicts).passed);
}

// A finding that may appear (`appear: may`, the knock-on C8 after a C6): the control passes
// whether it shows or not, but not when it fails otherwise, and not when the one that MUST
// appear is missing.
TEST(Judge, AFindingThatMayAppearPassesEitherWayButAMissingMustStillFails) {
  RunRecord record = checkers::testing::successRun();
  record.scenario.expect.violations = {"C4", "C8"};
  record.scenario.expect.findings = {{"C4", "permuted table", {}}, {"C8", "timed out", {}, true}};
  auto verdicts = passing(record);
  Verdict& c4 = verdictOf(verdicts, Property::kC4Addresses);
  c4.expectedViolation = true;
  c4.status = Verdict::Status::kFail;
  c4.summary = "rank 1: the permuted table does not match";
  Verdict& c8 = verdictOf(verdicts, Property::kC8Bounded);
  c8.mayFail = true;

  // The knock-on did not show: the control passes.
  const Judgement without = judge(record, verdicts);
  EXPECT_TRUE(without.passed);
  EXPECT_EQ(without.controls, std::vector<std::string>{"C4"});

  // It showed, with its finding: the control passes and lists both.
  c8.status = Verdict::Status::kFail;
  c8.summary = "rank 0's wait timed out on rank 1";
  const Judgement with = judge(record, verdicts);
  EXPECT_TRUE(with.passed);
  EXPECT_EQ(with.controls, (std::vector<std::string>{"C4", "C8"}));

  // It failed for another reason: that fails the run, saying it may fail only so.
  c8.summary = "rank 0 never returned";
  const Judgement otherwise = judge(record, verdicts);
  ASSERT_FALSE(otherwise.passed);
  EXPECT_NE(otherwise.failures.front().summary.find("may fail only with the finding"),
            std::string::npos);

  // The one that must appear is missing (C4 passed): the control fails, whatever C8 did.
  c8.summary = "rank 0's wait timed out on rank 1";
  c4.status = Verdict::Status::kPass;
  c4.summary = "fine";
  EXPECT_FALSE(judge(record, verdicts).passed);
}

TEST(Judge, AControlWhoseCheckerNeverRanFails) {
  RunRecord record = checkers::testing::successRun();
  record.scenario.expect.violations = {"C6"};
  const Judgement j = judge(record, passing(record));  // no C6 verdict at all
  EXPECT_FALSE(j.passed);
}

TEST(Judge, ACertainFaultThatNeverFiredFailsTheScenarioWhenCoverageIsRequired) {
  RunRecord record = checkers::testing::successRun(2);
  Fault fault;
  fault.site = FaultSite::kClose;
  fault.ranks = {1};
  record.scenario.faults = {fault};
  record.requireCoverage = true;
  const auto misses = coverageMisses(record);
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_EQ(misses[0].fault, 0u);
  EXPECT_EQ(misses[0].rank, 1);
  EXPECT_FALSE(judge(record, passing(record)).passed);

  // The fault's kFault event on rank 1: it fired, nothing is missed.
  record.ranks[1].events.push_back(firedEvent(1, "close", 0));
  EXPECT_TRUE(coverageMisses(record).empty());
  EXPECT_EQ(firedFaults(record).count({0u, 1}), 1u);
  EXPECT_TRUE(judge(record, passing(record)).passed);

  // Without --coverage the miss is not a failure.
  record.ranks[1].events.pop_back();
  record.requireCoverage = false;
  EXPECT_TRUE(judge(record, passing(record)).passed);
}

// A fault over a set of peers (`peers:`) is planted a (rank, peer) pair each; the set fires on a
// rank where any pair does (the core stops opening at its first failed open), and is missed only
// where none did.
TEST(Judge, ASetOfPeersIsCoveredOnARankWhereAnyOfItsPairsFired) {
  RunRecord record = checkers::testing::successRun(3);
  Fault pair;
  pair.site = FaultSite::kOpen;
  pair.ranks = {0};
  pair.set = 0;
  pair.peer = 1;
  Fault later = pair;
  later.peer = 2;
  record.scenario.faults = {pair, later};
  record.requireCoverage = true;
  // Neither pair fired: each is missed.
  EXPECT_EQ(coverageMisses(record).size(), 2u);
  // The first pair fired: the later one, never tried, is not asked to.
  record.ranks[0].events.push_back(firedEvent(0, "open", 0));
  EXPECT_TRUE(coverageMisses(record).empty());
  // Written alone (no set), the later fault is still required.
  record.scenario.faults[1].set = -1;
  ASSERT_EQ(coverageMisses(record).size(), 1u);
  EXPECT_EQ(coverageMisses(record)[0].fault, 1u);
}

// A fault's `count` bounds its firings on each rank; one firing more is the harness's failure,
// whatever the verdicts say (mutant fp-count-off-by-one: the plan fired count + 1 times).
TEST(Judge, AFaultFiringMoreOftenThanItsCountFailsTheScenario) {
  RunRecord record = checkers::testing::successRun(2);
  Fault fault;
  fault.site = FaultSite::kClose;
  fault.ranks = {0};
  fault.count = 1;
  record.scenario.faults = {fault};
  const Event fired = firedEvent(0, "close", 0);
  record.ranks[0].events.push_back(fired);
  EXPECT_TRUE(countExcesses(record).empty());
  EXPECT_TRUE(judge(record, passing(record)).passed);

  record.ranks[0].events.push_back(fired);
  const auto excesses = countExcesses(record);
  ASSERT_EQ(excesses.size(), 1u);
  EXPECT_EQ(excesses[0].fault, 0u);
  EXPECT_EQ(excesses[0].rank, 0);
  EXPECT_EQ(excesses[0].fired, 2);
  const Judgement judgement = judge(record, passing(record));
  ASSERT_FALSE(judgement.passed);
  ASSERT_EQ(judgement.failures.size(), 1u);
  EXPECT_EQ(judgement.failures[0].title, "fault count");
  ASSERT_EQ(judgement.failures[0].findings.size(), 1u);
  EXPECT_NE(judgement.failures[0].findings[0].text.find("count 1"), std::string::npos);
  EXPECT_NE(judgement.failures[0].findings[0].text.find("fired 2 times"), std::string::npos);

  // Without a count a fault may fire as often as its site is reached.
  record.scenario.faults[0].count = 0;
  EXPECT_TRUE(judge(record, passing(record)).passed);
}

// A fault aimed at one buffer fires among that buffer's calls only; a firing in another
// construction is the harness's failure (mutant ab-aim-ignored: the plan ignored `buffer:`).
TEST(Judge, AFaultAimedAtOneBufferFiringInAnotherConstructionFailsTheScenario) {
  RunRecord record = checkers::testing::successRun(2);
  Fault fault;
  fault.site = FaultSite::kClose;
  fault.ranks = {0};
  fault.onBuffer = 1;
  record.scenario.faults = {fault};
  Event fired = firedEvent(0, "close", 0);
  fired.buffer = 1;
  record.ranks[0].events.push_back(fired);
  EXPECT_TRUE(judge(record, passing(record)).passed);

  fired.buffer = 0;
  record.ranks[0].events.push_back(fired);
  const Judgement judgement = judge(record, passing(record));
  ASSERT_FALSE(judgement.passed);
  ASSERT_EQ(judgement.failures.size(), 1u);
  EXPECT_EQ(judgement.failures[0].title, "fault aim");
  EXPECT_EQ(judgement.failures[0].rule, "fault-aim");
  ASSERT_EQ(judgement.failures[0].findings.size(), 1u);
  EXPECT_NE(judgement.failures[0].findings[0].text.find(
                "is aimed at buffer 1 but fired in construction 0"),
            std::string::npos);

  // A fault aimed at no buffer may fire in any construction.
  record.scenario.faults[0].onBuffer.reset();
  EXPECT_TRUE(judge(record, passing(record)).passed);
}

TEST(Judge, HarnessErrorsAlwaysFail) {
  RunRecord record = checkers::testing::successRun();
  record.harnessErrors = {"rank 3 sent no record"};
  const Judgement j = judge(record, passing(record));
  ASSERT_FALSE(j.passed);
  bool named = false;
  for (const Failure& f : j.failures)
    named = named || f.summary.find("rank 3") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Judge, StoryNamesEveryFailureAndItsReproduceLine) {
  const RunRecord record = checkers::testing::openFailureRun();
  auto verdicts = passing(record);
  Verdict& c2 = verdictOf(verdicts, Property::kC2Message);
  c2.status = Verdict::Status::kFail;
  c2.summary = "1 of 4 ranks raised the wrong error";
  c2.findings = {{2, "expected this, got another"}};
  const std::string text = story(record, judge(record, verdicts), "> ");
  EXPECT_NE(text.find("1 of 4 ranks raised the wrong error"), std::string::npos) << text;
  EXPECT_NE(text.find("expected this, got another"), std::string::npos) << text;
  EXPECT_NE(text.find(c2.reproduce), std::string::npos) << text;
  EXPECT_EQ(text.rfind("> ", 0), 0u) << text;
}

TEST(Judge, DurationsReadAsTheReportsPrintThem) {
  EXPECT_EQ(formatDuration(1'234'000), "1.2 ms");
  EXPECT_EQ(formatDuration(12'000'000), "12 ms");
  EXPECT_EQ(formatDuration(12'500'000'000), "12.50 s");
  EXPECT_EQ(rankWord(1), "1 rank");
  EXPECT_EQ(rankWord(4), "4 ranks");
}

}  // namespace
}  // namespace peerconf::harness::reports

namespace peerconf::harness::reports {
namespace {

// A handle fault whose open the runtime answered otherwise than the fault means (a stale handle
// that opened; an aliased one refused) is the file's and the runtime's failure, never the core's:
// "fault without effect", every other failure worded as following from it. Without that open,
// or with the answer the fault means, nothing of it (the controls).
TEST(Judgement, AFaultWithoutEffectIsTheRuntimesNotTheCores) {
  const auto recordWith = [](FaultSite site, EventKind openEnds) {
    RunRecord record = checkers::testing::successRun();
    Fault fault;
    fault.site = site;
    fault.ranks = {1};
    fault.peer = 0;
    record.scenario.faults = {fault};
    record.runtime = "gpu";
    Event fired = firedEvent(1, model::toString(site).c_str(), 0);
    fired.peer = 0;
    Event open;
    open.rank = 1;
    open.kind = openEnds;
    open.what = "openMemHandle";
    open.peer = 0;
    open.detail = openEnds == EventKind::kThrow ? "invalid argument (1)" : "ptr=0x10";
    record.ranks[1].events.push_back(fired);
    record.ranks[1].events.push_back(open);
    return record;
  };
  RunRecord opened = recordWith(FaultSite::kHandleStale, EventKind::kReturn);
  std::vector<Verdict> verdicts = passing(opened);
  verdictOf(verdicts, Property::kC1Uniform).status = Verdict::Status::kFail;
  verdictOf(verdicts, Property::kC1Uniform).summary = "expected raise, but 2 ok";
  const Judgement judged = judge(opened, verdicts);
  EXPECT_FALSE(judged.passed);
  ASSERT_EQ(judged.failures.size(), 2u) << story(opened, judged);
  EXPECT_EQ(judged.failures[0].title, "C1 uniform outcome");
  EXPECT_EQ(judged.failures[0].summary.rfind("follows from the fault without effect below", 0), 0u)
      << judged.failures[0].summary;
  EXPECT_EQ(judged.failures[1].title, "fault without effect");
  EXPECT_NE(judged.failures[1].summary.find("runtime (gpu)"), std::string::npos);
  ASSERT_EQ(judged.failures[1].findings.size(), 1u);
  EXPECT_EQ(judged.failures[1].findings[0].rank, 1);
  EXPECT_NE(judged.failures[1].findings[0].text.find("the runtime opened the stale handle"),
            std::string::npos);

  const RunRecord refusedAlias = recordWith(FaultSite::kHandleAliased, EventKind::kThrow);
  const auto missing = judge::faultsWithoutEffect(refusedAlias);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].what.find("the runtime refused the aliased handle (invalid argument"),
            std::string::npos);

  const auto refusedMapped =
      judge::faultsWithoutEffect(recordWith(FaultSite::kHandleMapped, EventKind::kThrow));
  ASSERT_EQ(refusedMapped.size(), 1u);
  EXPECT_NE(refusedMapped[0].what.find("the runtime refused to open again a handle the rank maps"),
            std::string::npos);

  // The effects the faults mean: nothing to report.
  EXPECT_TRUE(
      judge::faultsWithoutEffect(recordWith(FaultSite::kHandleStale, EventKind::kThrow)).empty());
  EXPECT_TRUE(judge::faultsWithoutEffect(recordWith(FaultSite::kHandleAliased, EventKind::kReturn))
                  .empty());
  EXPECT_TRUE(
      judge::faultsWithoutEffect(recordWith(FaultSite::kHandleMapped, EventKind::kReturn)).empty());
  EXPECT_TRUE(judge::faultsWithoutEffect(checkers::testing::successRun()).empty());
}

// A control of the judge (`expect.judge`): the refusals it lists are the judge's answer, not
// failures; one it lists and did not get fails the run, naming what the judge did; a failure it
// does not list still fails it.
TEST(Judge, AControlOfTheJudgePassesOnlyOnTheRefusalsItNamesAndNothingElse) {
  RunRecord record = checkers::testing::successRun(2);
  Fault fault;
  fault.site = FaultSite::kClose;
  fault.ranks = {1};
  record.scenario.faults = {fault};
  record.requireCoverage = true;
  record.scenario.expect.refusals = {{"coverage", "Never Fired On This Rank", {7, 7}}};

  // The coverage rule refused the run, with the finding: the control of the judge passes.
  const Judgement refused = judge(record, passing(record));
  EXPECT_TRUE(refused.passed) << story(record, refused);
  EXPECT_EQ(refused.refusals, std::vector<std::string>{"coverage"});

  // The rule did not refuse it (the fault fired): the control fails, saying the judge passed it.
  record.ranks[1].events.push_back(firedEvent(1, "close", 0));
  const Judgement blind = judge(record, passing(record));
  ASSERT_FALSE(blind.passed);
  ASSERT_EQ(blind.failures.size(), 1u);
  EXPECT_EQ(blind.failures[0].rule, "judge");
  EXPECT_NE(blind.failures[0].summary.find(
                "expected the judge to refuse the run for coverage with the finding \"Never "
                "Fired On This Rank\" (a control of the judge, "),
            std::string::npos)
      << blind.failures[0].summary;
  EXPECT_NE(blind.failures[0].summary.find("but it passed the run"), std::string::npos);

  // Refused for another rule: the control fails, naming it, and that failure stays.
  auto verdicts = passing(record);
  verdictOf(verdicts, Property::kC3Cleanup).status = Verdict::Status::kFail;
  verdictOf(verdicts, Property::kC3Cleanup).summary = "rank 1 never closed peer 0";
  const Judgement otherwise = judge(record, verdicts);
  ASSERT_EQ(otherwise.failures.size(), 2u) << story(record, otherwise);
  EXPECT_EQ(otherwise.failures[0].rule, "C3");
  EXPECT_NE(otherwise.failures[1].summary.find(
                "but it refused it otherwise: C3 (C3 cleanup): rank 1 never closed peer 0"),
            std::string::npos)
      << otherwise.failures[1].summary;

  // Both listed: both are the judge's answer. A failure not listed still fails the run.
  record.ranks[1].events.pop_back();
  record.scenario.expect.refusals.push_back({"C3", "never closed", {}});
  EXPECT_TRUE(judge(record, verdicts).passed);
  record.scenario.expect.refusals.pop_back();
  const Judgement extra = judge(record, verdicts);
  ASSERT_FALSE(extra.passed);
  ASSERT_EQ(extra.failures.size(), 1u);
  EXPECT_EQ(extra.failures[0].rule, "C3");
  EXPECT_EQ(extra.refusals, std::vector<std::string>{"coverage"});

  // A refusal for the wrong finding is not the one listed.
  record.scenario.expect.refusals = {{"coverage", "the file is wrong", {}}};
  EXPECT_FALSE(judge(record, passing(record)).passed);

  // Without --coverage a coverage refusal is not demanded.
  record.requireCoverage = false;
  EXPECT_TRUE(judge(record, passing(record)).passed);
}

// Every failure carries the rule a control of the judge names it by.
TEST(Judge, EachFailureCarriesItsRulesName) {
  RunRecord record = checkers::testing::successRun();
  record.scenario.expect.violations = {"C4", "C6"};
  record.scenario.expect.findings = {{"C4", "permuted", {}}};
  auto verdicts = passing(record);
  Verdict& c4 = verdictOf(verdicts, Property::kC4Addresses);
  c4.expectedViolation = true;
  c4.status = Verdict::Status::kFail;
  c4.summary = "unwritten entry";
  verdictOf(verdicts, Property::kC1Uniform).status = Verdict::Status::kFail;
  record.harnessErrors = {"the run's process was killed"};
  const Judgement j = judge(record, verdicts);
  std::vector<std::string> rules;
  for (const Failure& f : j.failures) rules.push_back(f.rule);
  EXPECT_EQ(rules, (std::vector<std::string>{"C1", "named-finding", "control", "harness"}));
  c4.status = Verdict::Status::kPass;
  EXPECT_EQ(judge(record, verdicts).failures[1].rule, "control");
}

}  // namespace
}  // namespace peerconf::harness::reports
