// Judgement: whether a run of a scenario passed, and the story of why not. judgeRun is the one
// entry (a run's record in, its judgement out) that `run`, `explore` and the tests judge every run
// through; the reports take its judgement, so the console, JUnit, trace and HTML never disagree.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::judge {

// One reason a scenario failed.
struct Failure {
  std::string title;                     // "C3 cleanup", "harness"
  std::string summary;                   // one line
  std::vector<model::Finding> findings;  // rank by rank
  std::string reproduce;                 // empty when none applies
  // The rule that refused the run, by the name a control of the judge gives it
  // (model::kJudgeRules): "C3" (the property's verdict failed), "named-finding", "control",
  // "coverage", "fault-without-effect"; and "fault-count", "fault-aim", "scenario", "harness",
  // "judge" (a control of the judge that the judge did not answer as it expects), which no file
  // can expect.
  std::string rule;
};

struct Judgement {
  bool passed = true;
  std::vector<Failure> failures;
  std::vector<std::string> controls;  // properties that failed as the scenario expected ("C6")
  // The judge's rules that refused the run as the scenario's `judge:` expects ("coverage"): a
  // control of the judge that passed (its refusals are not failures).
  std::vector<std::string> refusals;
  std::vector<model::Verdict> verdicts;  // the checkers' verdicts it was made from
  // `outcome: as-drawn`: the outcome of the draw the run made, and the draw ("raise (fault #0
  // (open) on rank 1 fires)"); empty for any other file.
  std::string drawn;
  std::optional<model::Outcome> drawnOutcome;  // the outcome of that draw
};

// What the expectation oracle finds wrong with the run's scenario itself, not with the core that
// ran it (expectation/compare.h): where its expect: differs from what its faults imply, and its
// certain faults that never fire. The judgement words a failure they explain as the file's.
struct FileDifferences {
  // "FILE:LINE:COL: rank 1: another: DIFFERS: ...", explain's lines of the file's expect:.
  std::vector<std::string> expect;
  // "FILE:LINE:COL: fault #1 (open, probability 1) on rank 0: DIFFERS: ...".
  std::vector<std::string> unfiredFaults;
};

// The one entry: `record`'s judgement. The checkers (checkers::checkRun) give the verdicts; for a
// run of the production core (record.core and the scenario's `core:` name none) the oracle gives
// the scenario's FileDifferences, derived from record.scenario (the marks its file wrote name the
// places); then judge()'s rules. A file of `outcome: as-drawn` is judged against the oracle's
// expectation of the draw the run made (from firedFaults; Judgement::drawn says which); a run
// whose faults fired as no draw can fails ("harness").
Judgement judgeRun(const model::RunRecord& record);

// The oracle's FileDifferences of `scenario` (none where it derives nothing: timing, too many
// chance faults): what judgeRun gives judge() for a run of the production core.
FileDifferences fileDifferences(const model::Scenario& scenario);

// The rules. A scenario passes when every verdict is acceptable (passed or N/A; or failed where
// the scenario expects that property to fail, with the finding the scenario names for it in the
// verdict's summary or findings, ignoring case), every property the scenario expects to fail has
// a verdict (a negative control whose checker never ran proves nothing), with
// record.requireCoverage every certain fault fired on every rank it names (coverageMisses), and
// no fault fired more often than its `count` (countExcesses), and the harness reported no error of
// its own. `file`: a failure of C1 or C2 that file.expect explains, and a coverage miss beside
// file.unfiredFaults, are worded as the file's. Last, a control of the judge (the scenario's
// `expect.judge`) passes when the judge refused the run for each rule it lists, with its finding,
// and for nothing else (judgeTheJudge); without --require-coverage a coverage refusal is not
// demanded. For verdicts of one's own choosing (a report's test, a subset of the checkers); every
// run of a scenario is judged by judgeRun.
Judgement judge(const model::RunRecord& record, std::vector<model::Verdict> verdicts,
                const FileDifferences& file = {});

// Which faults fired on which ranks: (index in scenario.faults, rank), from the ranks' kFault
// events (every launcher carries them, a SIGKILLed rank's too).
std::set<std::pair<std::size_t, int>> firedFaults(const model::RunRecord& record);

// A handle fault that fired on a rank but had no effect on the runtime that ran it: the runtime
// opened a stale or corrupted handle (meant to be refused), or refused an aliased one (meant to
// open onto another allocation). judge() fails the run for it ("fault without effect"), against
// the file and the runtime, and words every other failure as following from it, not from the
// core. Read from the rank's events: the kFault of the handle fault, then its open of that peer.
struct FaultWithoutEffect {
  std::size_t fault = 0;  // index in scenario.faults
  int rank = 0;
  std::string what;  // "the runtime opened the stale handle"
};
std::vector<FaultWithoutEffect> faultsWithoutEffect(const model::RunRecord& record);

// A certain fault (probability 1) that never fired on a rank it names.
struct CoverageMiss {
  std::size_t fault = 0;  // index in scenario.faults
  int rank = 0;
};
// Ranks that came back missing are left out (nothing of theirs came back to count).
std::vector<CoverageMiss> coverageMisses(const model::RunRecord& record);

// A fault with a `count` that fired more often than that on a rank (from the ranks' kFault events):
// the harness planted what the scenario does not declare. judge() fails the scenario for it
// ("fault count"), with or without coverage.
struct FaultExcess {
  std::size_t fault = 0;  // index in scenario.faults
  int rank = 0;
  int fired = 0;
};
std::vector<FaultExcess> countExcesses(const model::RunRecord& record);

// "2 ranks" / "1 rank".
std::string rankWord(int ranks);

// The multi-line, rank-by-rank account of `judgement`'s failures, each line starting with
// `indent`: a line per rank's status, then per failure its title and summary, its findings
// ("rank 2: ..."), and its reproduce command.
std::string story(const model::RunRecord& record, const Judgement& judgement,
                  const std::string& indent = "  ");

// "1.2 ms", "12 ms", "3.40 s".
std::string formatDuration(std::int64_t ns);

}  // namespace peerconf::harness::judge
