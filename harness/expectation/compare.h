// A scenario's `expect:` and its certain faults held against what the oracle derives from its
// faults (derive.h): the one comparison that `peerconf explain` prints and the judge words a
// run's failure by (judge/judgement.h, judgeRun: the file is wrong, not the core).
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "expectation/derive.h"
#include "model/scenario.h"

namespace peerconf::harness::expectation {

// What the oracle derives for a scenario as a file states it: every draw of its chance faults
// (deriveDraws), or why nothing can be derived (timing, too many chance faults, or a rank late
// past the deadline in a file written for a launcher other than threads, whose outcome the oracle
// does not derive).
struct Derivation {
  std::vector<Draw> draws;
  std::string notDerived;  // why the oracle cannot derive it (then nothing is compared)
};
Derivation derivation(const model::Scenario& scenario);

// Every item compared: the outcome (in every draw), `reported`, each rank's message (ranks that
// read the same grouped), and every certain fault on every rank it names (a run fails its
// coverage check where one never fires). Each line is "FILE:LINE:COL: what: agrees" or
// "FILE:LINE:COL: what: DIFFERS: ...", at the place the file wrote it (model::ExpectationMarks).
struct Comparison {
  std::vector<std::string> lines;        // every compared item, agreeing or not
  std::vector<std::string> differences;  // the lines that differ
  int compared = 0;
  // The last this many of `differences` are certain faults that never fire (no expect: fixes
  // them); the others are the file's expect: against the derivation.
  std::size_t faultDifferences = 0;
};
// `draws` from derivation(scenario) (with notDerived empty).
Comparison compare(const model::Scenario& scenario, const std::vector<Draw>& draws);

// `outcome: as-drawn` (model::Expectation::asDrawn): the draw a run made, from the (fault, rank)
// pairs that fired in it (judge::firedFaults): the first draw whose chance pairs that fire in its
// derivation (its timelines' `fired`) are exactly the run's chance pairs that fired. Null when no
// draw is (a fault fired where the oracle says it cannot).
const Draw* drawOfRun(const std::vector<Draw>& draws,
                      const std::set<std::pair<std::size_t, int>>& fired);

// What a file that does not say `outcome: as-drawn` is refused for: its outcome (success, raise or
// reported) differs between the draws of its faults left to chance, so a run's verdict would
// follow the seed. Empty for an as-drawn file, a control (its contract is stated) and a file the
// oracle does not derive.
std::string outcomeDependsOnDraw(const model::Scenario& scenario, const std::vector<Draw>& draws);

// As the file reads: "as-drawn" or the outcome's name.
std::string outcomeText(const model::Expectation& expect);

// --- The wording explain shares with the comparison ---

// "FILE:LINE:COL", or FILE where the mark is unknown.
std::string at(const std::string& file, model::Mark mark);
// "rank 3", "ranks 0, 2-5".
std::string rankList(const std::vector<int>& ranks);
// "[0, 2]".
std::string intList(const std::vector<int>& ranks);
// "fault #1 (open) on rank 2": one (fault, rank) pair of the draws.
std::string pairText(const model::Scenario& scenario, const std::pair<std::size_t, int>& pair);
// "fault #1 (open) on rank 2 fires; fault #2 (open) on rank 3 does not fire".
std::string drawText(const model::Scenario& scenario, const Draw& draw);
// What `rank` ends with in `draw`: its message, or none (ok, dead, hung).
std::optional<model::MessageExpectation> derivedMessage(const Draw& draw, int rank);
// Ranks grouped by a text, in the order of their first rank.
std::vector<std::pair<std::vector<int>, std::string>> groupRanks(
    const std::vector<std::string>& perRank);
// Whether the file's launchers include threads (none named: every launcher).
bool threadsRun(const model::Scenario& scenario);

}  // namespace peerconf::harness::expectation
