// `peerconf explain`: the derived timeline, outcome and messages of scenarios of every kind (one
// golden report, structural checks of the others), the comparison with the file's `expect:` at
// line:col, what is stated as not derived, and --write-expect's splicing.
#include "expectation/explain.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "expectation/derive.h"
#include "launch/core_registry.h"
#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness::expectation {

using launch::CoreRegistry;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Scenario;
using scenario::expandScenarioPaths;
using scenario::loadScenario;
namespace {

namespace fs = std::filesystem;

std::string suite(const std::string& name) {
  return std::string(PEERCONF_SCENARIOS_DIR) + "/" + name;
}

std::string data(const std::string& name) {
  return std::string(PEERCONF_EXPLAIN_DATA_DIR) + "/" + name;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

FileExplanation explained(const std::string& path, const ExplainOptions& options = {}) {
  FileExplanation out = explainFile(path, options);
  EXPECT_NE(out.result, ExplainResult::kInvalid) << out.error;
  return out;
}

// A scenario written for one test, in a folder of this process's own.
std::string writeTemp(const std::string& name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("peerconf-explain-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// ---- Scenarios of every kind ----

TEST(Explain, GoldenSingleRankAllocFailure) {
  const std::string file = suite("alloc/alloc-fails-single-rank.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_EQ(
      out.report,
      "== " + file +
          " (alloc-fails-single-rank): 1 rank, deadline 300ms, 1 fault\n"
          "timeline (derived):\n"
          "  rank 0:\n"
          "    before-construct\n"
          "    alloc: fault #0 (alloc, hipErrorOutOfMemory, line 9): its buffer's allocation "
          "fails\n"
          "    => raises text \"alloc failed on rank 0\": its backend error as it is (a "
          "single rank has nobody to agree with)\n"
          "derived: outcome raise\n"
          "  rank 0: text \"alloc failed on rank 0\"\n"
          "compared with the file's expect (" +
          file + ":11:1):\n  " + file + ":12:12: outcome raise: agrees\n  " + file +
          ":14:5: rank 0: text \"alloc failed on rank 0\": agrees\n"
          "bounds (C8): the run within 2600 ms (2 x deadline + delays + 2 s); on simulated time "
          "every rank raises within one agreement round (36 us: 1 rank x 9 calls x 4 call "
          "points x 1 us) of the last fault that fired\n"
          "result: agrees (2 compared)\n");
}

TEST(Explain, OpenFailureSaysThisOnTheFailingRankOnly) {
  const std::string file = suite("open/open-fails-rank1-to-peer0.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_EQ(out.compared, 3);
  EXPECT_TRUE(contains(out.report,
                       "  rank 1:\n"
                       "    before-construct, alloc, get-handle\n"
                       "    exchange: the exchange (all-gather) completes: every rank sent its "
                       "handle\n"
                       "    open: fault #0 (open of peer 0, hipErrorMapFailed, line 12): it cannot "
                       "map peer 0"))
      << out.report;
  EXPECT_TRUE(contains(out.report,
                       "derived: outcome raise\n  ranks 0, 2, 3: another\n"
                       "  rank 1: this\n"))
      << out.report;
  EXPECT_TRUE(contains(out.report, file + ":19:5: rank 1: this: agrees")) << out.report;
  EXPECT_TRUE(contains(out.report, file + ":20:5: ranks 0, 2, 3: another (others): agrees"))
      << out.report;
}

TEST(Explain, AllocFailureEndsEveryRankAtTheExchange) {
  const FileExplanation out = explained(suite("alloc/alloc-fails-rank0.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(out.report, "it joins the exchange with a failure record")) << out.report;
  EXPECT_TRUE(contains(out.report, "=> raises another: rank 0 sent a failure record"))
      << out.report;
  // Nobody opens a peer or agrees: the timelines end at the exchange.
  EXPECT_FALSE(contains(out.report, "\n    open")) << out.report;
  EXPECT_FALSE(contains(out.report, "\n    agree")) << out.report;
}

TEST(Explain, HangInTheAgreementIsReportedAndTheOthersGiveUp) {
  const std::string file = suite("lifecycle/hang-at-agree.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(out.report, "=> hangs at 'agree': reported hung")) << out.report;
  EXPECT_TRUE(contains(out.report,
                       "waits for a rank that never comes (rank 3: it hung at "
                       "'agree') and gives up at the deadline"))
      << out.report;
  EXPECT_TRUE(contains(out.report, ": reported [3]: agrees")) << out.report;
  ASSERT_EQ(out.notDerived.size(), 1U);
  EXPECT_TRUE(contains(out.notDerived[0], ": within 5s: the file's bound")) << out.notDerived[0];
}

TEST(Explain, DeathAtCloseLeavesTheSurvivorsOk) {
  const FileExplanation out = explained(suite("lifecycle/death-at-close.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(out.report, "=> dies at 'close': reported dead")) << out.report;
  EXPECT_TRUE(contains(out.report, ": ok (returns a usable PeerBuffer)")) << out.report;
}

// A fault aimed at one buffer of `buffers:` says which in its name, wherever explain names it:
// the timeline, the draws and each rank's fate over them.
TEST(Explain, AFaultAimedAtOneBufferNamesItsBuffer) {
  const FileExplanation hang = explained(suite("buffers/hang-at-exchange-third-round.yaml"));
  EXPECT_EQ(hang.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(hang.report, "fault #0 (hang, buffer 2, line 15): it hangs here"))
      << hang.report;
  const FileExplanation chance =
      explained(writeTemp("aimed-chance.yaml",
                          "ranks: 2\n"
                          "buffers: [{label: kv, size: 4KiB}, {label: ws, size: 8KiB}]\n"
                          "faults:\n"
                          "  - {site: open, rank: 1, buffer: 1, probability: 0.5}\n"
                          "expect: {outcome: as-drawn}\n"));
  EXPECT_EQ(chance.result, ExplainResult::kAgrees) << chance.report;
  EXPECT_TRUE(contains(chance.report, "draw 1: fault #0 (open, buffer 1) on rank 1 fires"))
      << chance.report;
  EXPECT_TRUE(contains(chance.report, "probability 0.5, buffer 1, line 4)")) << chance.report;
  // A fault aimed at no buffer names none.
  const FileExplanation plain = explained(suite("lifecycle/hang-at-agree.yaml"));
  EXPECT_FALSE(contains(plain.report, ", buffer ")) << plain.report;
}

// Faults aimed at several buffers: the run is the first failing construction's; a fault aimed
// before it fires in a construction that succeeds, one aimed after it never fires (a difference:
// a run fails its coverage check, the file is wrong).
TEST(Explain, FaultsAimedAtSeveralBuffersDeriveTheFirstFailingConstruction) {
  const FileExplanation three =
      explained(suite("buffers/release-faults-then-agreement-fails-third.yaml"));
  EXPECT_EQ(three.result, ExplainResult::kAgrees) << three.report;
  EXPECT_TRUE(contains(three.report,
                       "the faults are aimed at buffers 0, 1 and 2; the run is derived from "
                       "buffer 2 ('scratch' (4096 bytes)"))
      << three.report;
  EXPECT_TRUE(contains(three.report,
                       "fault #1 (close, buffer 1, line 18) fires in construction 1, which "
                       "succeeds (at its close)"))
      << three.report;
  const FileExplanation never =
      explained(writeTemp("aimed-never.yaml",
                          "ranks: 3\n"
                          "buffers: [{label: kv, size: 4KiB}, {label: ws, size: 8KiB}]\n"
                          "faults:\n"
                          "  - {site: alloc, rank: 1, buffer: 0}\n"
                          "  - {site: open, rank: 2, peer: 0, buffer: 1}\n"
                          "expect: {outcome: raise}\n"));
  EXPECT_EQ(never.result, ExplainResult::kDiffers) << never.report;
  EXPECT_EQ(never.unfiredFaults, 1U);
  EXPECT_TRUE(contains(never.report,
                       "fault #1 (open, buffer 1, line 5) never fires: "
                       "construction 0 fails first"))
      << never.report;
  EXPECT_TRUE(contains(never.report,
                       "it never fires there (construction 0 (buffer 0) fails "
                       "first, and no later buffer is constructed)"))
      << never.report;
}

TEST(Explain, GroupFailRankMatchesItsGroupErrorByText) {
  const std::string file = suite("group/group-fail-exchange.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(out.report, "its all-gather fails locally before it sends anything"));
  EXPECT_TRUE(contains(out.report, "rank 1: its own call failed (group-fail)")) << out.report;
  EXPECT_TRUE(contains(out.report, file + ":16:5: rank 1: text \"all-gather failed on rank 1\": "
                                          "agrees"))
      << out.report;
}

TEST(Explain, LatenessPastTheDeadlineBreaksTheCall) {
  const FileExplanation out = explained(suite("timing/late-past-deadline-exchange.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(out.report, "not within the deadline")) << out.report;
  EXPECT_TRUE(contains(out.report, "failed (lateness)")) << out.report;
}

TEST(Explain, ChanceFaultIsComparedInEveryDraw) {
  const std::string file = suite("probability/open-fails-by-chance.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(out.report,
                       "draws (the seed decides; 2):\n"
                       "  draw 1: fault #1 (open) on rank 2 fires\n"
                       "  draw 2: fault #1 (open) on rank 2 does not fire\n"))
      << out.report;
  EXPECT_TRUE(
      contains(out.report,
               "  rank 2: this where fault #1 (open) on rank 2 fires, another where it does "
               "not\n"))
      << out.report;
  EXPECT_TRUE(contains(out.report, "probability 0.5, line 14")) << out.report;
  EXPECT_TRUE(contains(out.report, file + ":21:5: rank 2: text \"peer memory handshake failed "
                                          "on\": agrees"))
      << out.report;
}

// Seven chance pairs make 128 draws: explain summarises them (one line for the draws, one fate a
// rank) instead of listing every draw and every rank's fate in each (100 KB at 8 ranks).
TEST(Explain, ManyDrawsAreSummarised) {
  const std::string file = writeTemp("many-draws.yaml", R"(ranks: 8
faults:
  - {site: open, ranks: [1, 2, 3, 4, 5, 6, 7], peer: 0, probability: 0.5}
  - {site: open, rank: 0, peer: 1}
expect:
  outcome: raise
  messages:
    others: {text: "peer memory handshake failed on"}
)");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees) << out.report;
  EXPECT_TRUE(contains(out.report,
                       "draws (the seed decides; 128: each of fault #0 (open) on ranks "
                       "1-7 fires or not; draw 1: every one fires, draw 128: none "
                       "does)\n"))
      << out.report;
  EXPECT_TRUE(contains(out.report,
                       "  rank 5: this where fault #0 (open) on rank 5 fires, another "
                       "where it does not\n"))
      << out.report;
  EXPECT_FALSE(contains(out.report, "draw 2:")) << out.report;
  EXPECT_LT(out.report.size(), 8000U) << out.report;
}

// A rank whose allocation fails and that exits before it posts its entry never joins the exchange:
// explain must not say it does (issue 40 item 4).
TEST(Explain, ARankThatExitsBeforePostingSendsNoFailureRecord) {
  const std::string file = writeTemp("exit-before-posting.yaml", R"(ranks: 2
deadline: 300ms
faults:
  - {site: alloc, rank: 1}
  - {site: exit, rank: 1, at: exchange-send}
expect:
  outcome: reported
  within: 3s
)");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees) << out.report;
  EXPECT_TRUE(contains(out.report,
                       "its buffer's allocation fails; then it exits at "
                       "'exchange-send' before posting its entry: nobody receives a "
                       "failure record"))
      << out.report;
  EXPECT_FALSE(contains(out.report, "joins the exchange")) << out.report;
}

TEST(Explain, PlantedCoreControlComparesTheContractAndStatesTheViolation) {
  const std::string file = suite("controls/c3-leaks-on-failure.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_GE(out.compared, 2);
  ASSERT_EQ(out.notDerived.size(), 2U);
  EXPECT_TRUE(contains(out.notDerived[0],
                       "core leaks-on-failure: a planted core; the derivation "
                       "is what the production core must show"))
      << out.notDerived[0];
  EXPECT_TRUE(contains(out.notDerived[1],
                       "violation C3 \"opened, never closed\": the run must "
                       "fail C3 with this finding, from the planted core "
                       "leaks-on-failure"))
      << out.notDerived[1];
  EXPECT_TRUE(contains(out.report, "result: agrees (" + std::to_string(out.compared) +
                                       " compared, 2 stated, not derived)"));
}

TEST(Explain, BoundControlStatesWithinAndItsViolation) {
  const std::string file = suite("controls/c8-bound-too-tight.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  ASSERT_EQ(out.notDerived.size(), 2U);
  EXPECT_EQ(out.notDerived[0].rfind(file + ":18:7: violation C8 \"past its bound of 50 ms\"", 0),
            0U)
      << out.notDerived[0];
  EXPECT_EQ(out.notDerived[1].rfind(file + ":16:11: within 50ms", 0), 0U) << out.notDerived[1];
}

TEST(Explain, DataPlaneIsStatedNotDerived) {
  const FileExplanation run = explained(suite("dataplane/stop-mid-run.yaml"));
  EXPECT_EQ(run.result, ExplainResult::kAgrees);
  ASSERT_EQ(run.notDerived.size(), 1U);
  EXPECT_TRUE(contains(run.notDerived[0],
                       "dataplane (layout reference, workload exchange, 2000 "
                       "steps, rank 2 stops at step 100): runs after the "
                       "handshake derived above"))
      << run.notDerived[0];
  const FileExplanation control = explained(suite("dataplane/control-epoch-ge.yaml"));
  EXPECT_EQ(control.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(control.report, "from the data-plane layout epoch-ge")) << control.report;
}

TEST(Explain, MpiOnlyControlComparesTheContract) {
  const FileExplanation out = explained(suite("timing/late-past-deadline-agree-mpi.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kAgrees);
  EXPECT_EQ(out.compared, 2);
  EXPECT_TRUE(contains(out.report, "from the mpi launcher")) << out.report;
  EXPECT_TRUE(contains(out.report,
                       "launchers [mpi]: the derivation follows the thread "
                       "launcher's group calls"))
      << out.report;
}

TEST(Explain, SingleRankTableAndReleaseFaultsAndGpuFiles) {
  const FileExplanation table = explained(suite("table/copy-table-fails-single-rank.yaml"));
  EXPECT_EQ(table.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(table.report, "    table: fault #0 (copy-table")) << table.report;
  const FileExplanation close = explained(suite("close-free/close-fails-one-peer.yaml"));
  EXPECT_EQ(close.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(close.report, "close: fault #0 (close of peer")) << close.report;
  EXPECT_TRUE(contains(close.report, "close() raises a CloseError naming each failed release"));
  const FileExplanation cleanup =
      explained(suite("close-free/close-fails-during-failed-handshake.yaml"));
  EXPECT_TRUE(contains(cleanup.report, "fires in the cleanup")) << cleanup.report;
  const FileExplanation gpu = explained(suite("gpu/handle-stale.yaml"));
  EXPECT_EQ(gpu.result, ExplainResult::kAgrees);
  EXPECT_TRUE(contains(gpu.report, "it receives a stale handle of peer 1")) << gpu.report;
}

// A control of the judge's coverage rule (expect.judge: coverage) agrees where a certain fault
// never fires (the run passes when the judge refuses it for that), and differs where every
// certain fault fires (the judge has nothing to refuse: the run fails the control).
TEST(Explain, ACoverageControlOfTheJudgeAgreesOnlyWhereACertainFaultNeverFires) {
  const std::string head =
      "ranks: 2\ndeadline: 1s\nfaults:\n"
      "  - {site: open, rank: 0, peer: 1, error: hipErrorInvalidDevice}\n";
  const std::string expect =
      "expect:\n  outcome: raise\n  messages: {others: this}\n"
      "  judge:\n    - {rule: coverage, finding: \"the file is wrong\"}\n";
  const FileExplanation fires = explainText(
      head + "  - {site: open, rank: 1, peer: 0, error: hipErrorInvalidDevice}\n" + expect,
      "fires.yaml");
  EXPECT_EQ(fires.result, ExplainResult::kDiffers) << fires.error << fires.report;
  EXPECT_TRUE(contains(fires.report, "but every certain fault fires")) << fires.report;
  const FileExplanation never = explainText(
      "ranks: 3\ndeadline: 1s\nfaults:\n"
      "  - {site: open, rank: 0, peer: 1, error: hipErrorInvalidDevice}\n"
      "  - {site: open, rank: 0, peer: 2, error: hipErrorInvalidDevice}\n"
      "  - {site: open, rank: 1, peer: 0, error: hipErrorInvalidDevice}\n"
      "  - {site: open, rank: 2, peer: 0, error: hipErrorInvalidDevice}\n" +
          expect,
      "never.yaml");
  EXPECT_EQ(never.result, ExplainResult::kAgrees) << never.error << never.report;
  EXPECT_EQ(never.unfiredFaults, 1U) << never.report;
  EXPECT_TRUE(contains(never.report, "as the file's control of the judge expects")) << never.report;
}

// The issue's condition: the guide, the oracle and the files agree.
TEST(Explain, EverySuiteFileAgreesWithTheDerivation) {
  const auto files = expandScenarioPaths({PEERCONF_SCENARIOS_DIR});
  ASSERT_GE(files.size(), 100U);
  for (const std::string& file : files) {
    const FileExplanation out = explainFile(file);
    EXPECT_EQ(out.result, ExplainResult::kAgrees) << out.error << out.report;
    EXPECT_GT(out.compared, 0) << file;
  }
}

// ---- Differences, what is not derived, input errors ----

TEST(Explain, WrongExpectIsADifferenceAtItsLineAndColumn) {
  const std::string file = data("wrong-expect.yaml");
  const FileExplanation out = explained(file);
  EXPECT_EQ(out.result, ExplainResult::kDiffers);
  ASSERT_EQ(out.differences.size(), 1U);
  EXPECT_EQ(out.differences[0], file +
                                    ":14:5: ranks 1, 2: group (others): DIFFERS: the file expects "
                                    "group; the derivation says another (raises another: rank 0 "
                                    "sent a failure record)");
  EXPECT_EQ(out.derivedExpect,
            "expect:\n  outcome: raise\n  messages:\n    0: this\n    others: another\n");
}

TEST(Explain, TimingNearTheDeadlineIsNotDerivedAndNotCompared) {
  const FileExplanation out = explained(data("near-deadline.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kNotDerived);
  EXPECT_EQ(out.compared, 0);
  EXPECT_TRUE(contains(out.report, "not derived: cannot derive the outcome")) << out.report;
  EXPECT_FALSE(contains(out.report, "agrees")) << out.report;
  EXPECT_TRUE(contains(out.report, "result: not derived (nothing compared)")) << out.report;
}

TEST(Explain, MpiOnlyLatenessIsNotDerived) {
  const FileExplanation out = explained(data("mpi-late-agree.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kNotDerived);
  EXPECT_EQ(out.compared, 0);
  EXPECT_FALSE(contains(out.report, "agrees")) << out.report;
}

TEST(Explain, AnOutcomeThatDependsOnTheDrawDiffersAndCannotBeWritten) {
  const FileExplanation out = explained(data("chance-outcome.yaml"));
  EXPECT_EQ(out.result, ExplainResult::kDiffers);
  EXPECT_TRUE(out.derivedExpect.empty());
  EXPECT_TRUE(contains(out.report,
                       "when fault #0 (alloc) on rank 1 does not fire, the "
                       "derivation says success"))
      << out.report;
  EXPECT_TRUE(contains(out.report, "the outcome depends on the draw")) << out.report;
}

TEST(Explain, InvalidFilesAndUnknownCoresAreInputErrors) {
  const FileExplanation bad =
      explainFile(std::string(PEERCONF_EXPLAIN_DATA_DIR) + "/../invalid_scenarios/count-zero.yaml");
  EXPECT_EQ(bad.result, ExplainResult::kInvalid);
  EXPECT_TRUE(contains(bad.error, "count-zero.yaml:")) << bad.error;
  const FileExplanation missing = explainFile(data("no-such-file.yaml"));
  EXPECT_EQ(missing.result, ExplainResult::kInvalid);

  const CoreRegistry cores;
  ExplainOptions options;
  options.checkCore = [&cores](const Scenario& scenario) { cores.check(scenario); };
  const FileExplanation core =
      explainText("ranks: 2\ncore: no-such-core\nexpect: {outcome: success}\n", "x.yaml", options);
  EXPECT_EQ(core.result, ExplainResult::kInvalid);
  EXPECT_TRUE(contains(core.error, "x.yaml:2:7: unknown core 'no-such-core'")) << core.error;

  std::ostringstream out, err;
  EXPECT_EQ(runExplain({data("wrong-expect.yaml"), data("no-such-file.yaml")}, {}, out, err), 2);
  EXPECT_EQ(runExplain({data("wrong-expect.yaml"), data("near-deadline.yaml")}, {}, out, err), 1);
  EXPECT_EQ(runExplain({suite("open"), data("near-deadline.yaml")}, {}, out, err), 0);
  EXPECT_TRUE(contains(out.str(), "agree, 0 differ, 1 not derived, 0 invalid")) << out.str();
}

TEST(Explain, MessageAgreementFollowsTheCoresWording) {
  RankTimeline timeline;
  timeline.messageText = "peer memory handshake failed on this TP rank";
  const MessageExpectation thisRank{MessageKind::kThis, {}};
  EXPECT_TRUE(messageAgrees(thisRank, thisRank, timeline));
  EXPECT_TRUE(messageAgrees({MessageKind::kText, "handshake failed on"}, thisRank, timeline));
  EXPECT_FALSE(messageAgrees({MessageKind::kText, "another TP rank"}, thisRank, timeline));
  EXPECT_FALSE(messageAgrees({MessageKind::kAnother, {}}, thisRank, timeline));
  // A timeout's wording is not the core's: a {text} cannot be confirmed on a group rank.
  RankTimeline waiting;
  EXPECT_FALSE(
      messageAgrees({MessageKind::kText, "timed out"}, {MessageKind::kGroup, {}}, waiting));
  EXPECT_TRUE(messageAgrees({MessageKind::kText, "alloc failed"},
                            {MessageKind::kText, "alloc failed on rank 0"}, waiting));
}

// ---- --write-expect ----

class ExplainWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("peerconf-explain-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string copy(const std::string& from) {
    const fs::path to = dir_ / fs::path(from).filename();
    fs::copy_file(from, to);
    return to.string();
  }

  fs::path dir_;
};

// Every line of `before` is in `after`, in the same order.
bool keepsEveryLine(const std::string& before, const std::string& after) {
  std::istringstream lines(before);
  std::size_t from = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = after.find(line + "\n", from);
    if (at == std::string::npos) return false;
    from = at + line.size() + 1;
  }
  return true;
}

TEST_F(ExplainWrite, FaultsOnlyDraftGetsTheDerivedExpectAppended) {
  const std::string file = copy(data("faults-only.yaml"));
  const std::string before = read(file);
  ExplainOptions write;
  write.writeExpect = true;
  const FileExplanation first = explainFile(file, write);
  EXPECT_TRUE(first.written) << first.report << first.error;
  EXPECT_EQ(first.result, ExplainResult::kAgrees);
  const std::string after = read(file);
  EXPECT_EQ(after, before +
                       "expect:\n  outcome: raise\n  messages:\n    2: this\n    3: this\n"
                       "    others: another\n");
  EXPECT_TRUE(keepsEveryLine(before, after));

  const Scenario scenario = loadScenario(file);
  EXPECT_EQ(scenario.expect.outcome, Outcome::kRaise);
  EXPECT_EQ(scenario.expect.messages.at(2).kind, MessageKind::kThis);
  EXPECT_EQ(scenario.expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_EQ(explainFile(file).result, ExplainResult::kAgrees);

  // A second --write-expect finds nothing to change and does not touch the file.
  const auto past = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(file, past);
  const FileExplanation second = explainFile(file, write);
  EXPECT_FALSE(second.written);
  EXPECT_EQ(second.result, ExplainResult::kAgrees);
  EXPECT_EQ(fs::last_write_time(file), past);
  EXPECT_EQ(read(file), after);
}

TEST_F(ExplainWrite, ReportedDraftLeavesTheSurvivorsToTheDefault) {
  const std::string file = copy(data("faults-only-hang.yaml"));
  const std::string before = read(file);
  ExplainOptions write;
  write.writeExpect = true;
  EXPECT_TRUE(explainFile(file, write).written);
  EXPECT_EQ(read(file), before + "expect:\n  outcome: reported\n  reported: [2]\n");
  const Scenario scenario = loadScenario(file);
  EXPECT_EQ(scenario.expect.messages.at(0).kind, MessageKind::kGroup);
}

// A rank that registers fewer buffers raises nothing: the draft's `ok` comes from the defaults,
// since no placeholder text can stand for it.
TEST_F(ExplainWrite, ABufferCountDraftGetsOkAndGroup) {
  const std::string file = copy(data("faults-only-buffer-count.yaml"));
  const std::string before = read(file);
  ExplainOptions write;
  write.writeExpect = true;
  const FileExplanation first = explainFile(file, write);
  EXPECT_TRUE(first.written) << first.report << first.error;
  EXPECT_EQ(read(file), before +
                            "expect:\n  outcome: raise\n  messages:\n    2: ok\n"
                            "    others: group\n");
  EXPECT_EQ(loadScenario(file).expect.messages.at(2).kind, MessageKind::kOk);
  EXPECT_EQ(explainFile(file).result, ExplainResult::kAgrees);
}

TEST_F(ExplainWrite, AWrongExpectIsReplacedInPlaceAndTheRestKept) {
  const std::string file = copy(data("wrong-expect.yaml"));
  // Keys and comments after the expect block stay as they are.
  {
    std::ofstream out(file, std::ios::app);
    out << "\n# the launchers, after the expectation\nlaunchers: [threads]  # only threads\n";
  }
  const std::string before = read(file);
  ExplainOptions write;
  write.writeExpect = true;
  const FileExplanation out = explainFile(file, write);
  EXPECT_TRUE(out.written) << out.report << out.error;
  const std::string after = read(file);
  const std::string head = before.substr(0, before.find("expect:\n"));
  const std::string tail = before.substr(before.find("\n\n# the launchers"));
  EXPECT_EQ(
      after,
      head + "expect:\n  outcome: raise\n  messages:\n    0: this\n    others: another" + tail);
  EXPECT_EQ(explainFile(file).result, ExplainResult::kAgrees);
}

// Issue 40, item 2: certain faults behind a rank's first failed open never fire, which no expect:
// can fix: --write-expect writes nothing and never calls the file agreeing, with its expect: or
// without (a draft of faults only).
TEST_F(ExplainWrite, AnOpenBehindAFailedOpenIsNeverWrittenAgreeing) {
  const std::string file = copy(std::string(PEERCONF_TEST_DATA_DIR) +
                                "/explain-run/cross-node-later-opens-certain.yaml");
  ExplainOptions write;
  write.writeExpect = true;
  const FileExplanation out = explainFile(file, write);
  EXPECT_FALSE(out.written);
  EXPECT_EQ(out.result, ExplainResult::kDiffers);
  EXPECT_EQ(out.unfiredFaults, 4u);
  EXPECT_TRUE(contains(out.report, "never fires: rank 0's open of peer 2 fails first"))
      << out.report;

  const std::string draft = read(file).substr(0, read(file).find("expect:"));
  {
    std::ofstream rewrite(file, std::ios::trunc);
    rewrite << draft;
  }
  const FileExplanation drafted = explainFile(file, write);
  EXPECT_FALSE(drafted.written) << drafted.report;
  EXPECT_EQ(drafted.result, ExplainResult::kDiffers);
  EXPECT_EQ(read(file), draft);
}

TEST(ExplainSplice, ReplacesOnlyTheBlockAppendsWhenNoneAndKeepsLineEndings) {
  const std::string block = "expect:\n  outcome: success\n";
  EXPECT_EQ(spliceExpect("ranks: 2\nexpect:\n  outcome: raise  # why\n\n# next\nseed: 3\n", block),
            "ranks: 2\nexpect:\n  outcome: success\n\n# next\nseed: 3\n");
  EXPECT_EQ(spliceExpect("ranks: 2\nexpect: {outcome: raise}\nseed: 3\n", block),
            "ranks: 2\nexpect:\n  outcome: success\nseed: 3\n");
  EXPECT_EQ(spliceExpect("ranks: 2  # two\n", block), "ranks: 2  # two\n" + block);
  EXPECT_EQ(spliceExpect("ranks: 2", block), "ranks: 2\n" + block);
  EXPECT_EQ(spliceExpect("ranks: 2\r\nexpect:\r\n  outcome: raise\r\n", block),
            "ranks: 2\r\nexpect:\r\n  outcome: success\r\n");
  EXPECT_THROW(spliceExpect("{ranks: 2, expect: {outcome: raise}}\n", block),
               std::invalid_argument);
}

}  // namespace
}  // namespace peerconf::harness::expectation
