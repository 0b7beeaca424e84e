// Explorer: property-based search of the fault space (`peerconf explore`). rapidcheck generates
// scenarios (generators.h), each runs in thread mode over the mocked HIP runtime and is judged
// on C1–C5 and C8 against its derived expectation; a failure is shrunk to a minimal case and
// written as a scenario file with rapidcheck's reproduce string.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "explore/case_runner.h"
#include "explore/generators.h"
#include "launch/launcher.h"
#include "model/core_under_test.h"
#include "model/scenario.h"

namespace peerconf::harness::explore {

struct ExploreOptions {
  int cases = 100;                    // passing cases before the search stops
  std::optional<std::uint64_t> seed;  // rapidcheck's seed; unset: a random one (printed)
  GeneratorOptions generator;         // maxRanks, ...
  std::string outDir = "explore-failures";
  double recheckFraction = 0.05;  // passing cases re-run to compare their event logs
  bool shrink = true;
  std::string reproduce;  // a reproduce string: replay that one case (and shrink path)
  model::CoreFactory core =
      model::productionCore();          // the core under test (tests plant defects here)
  std::string coreName = "production";  // for reports and the written file's header
  bool quiet = false;                   // no progress lines, only the summary
  // Cases run in a child process, one child for case after case (isolation.h): a core that
  // crashes is a failing case; false (--no-fork): in this process.
  bool isolate = true;
  // --clock: the cases' clock (launch/launcher.h). The command line's default is sim; the
  // library's stays real, as LaunchOptions' does.
  launch::ClockMode clock = launch::ClockMode::kReal;
  launch::Engine engine = launch::Engine::kFibers;  // --engine: what runs the ranks on sim
  // What runs is what a file would say: 1 case in this many (the first included), every shrink
  // attempt and every case that fails go through the writer and the validator and must come back
  // the same scenario (sameScenario); the others run as generated. 1: every case.
  int roundTripEvery = 16;
  // --breakdown: the summary says where a case's wall time went (setup, run, checkers, record).
  bool breakdown = false;
};

// A failing case, shrunk.
struct ExploreFailure {
  enum class Kind {
    kCore,       // the core broke a property
    kGenerator,  // the generator made a scenario that does not validate (a bug of explore)
  } kind = Kind::kCore;
  model::Scenario scenario;  // the minimal case, as parsed back from the written file
  std::string text;          // its YAML
  std::string file;          // where it was written ("" when it could not be)
  std::string summary;       // what failed: "C1 uniform outcome: mixed outcome: ..."
  std::vector<std::string> failedProperties;  // "C1", "C5", ...
  std::string reproduce;                      // rapidcheck's reproduce string
  std::string command;                        // `peerconf explore ... --reproduce '...'`
  int shrinks = 0;                            // accepted shrink steps
  bool reproduced = false;         // re-running the written file alone failed again, every time
  bool sameProperties = false;     // ... and with the same properties every time (a core that races
                                   // with itself, like one that skips the agreement, may not)
  bool rerunsInterrupted = false;  // an interrupt came first: the written file was not re-run
};

// A passing case whose re-run did something else.
struct Nondeterminism {
  model::Scenario scenario;
  std::uint64_t seed = 0;
  bool resultDiffers = true;  // Divergence::Level::kResult (the harness), else kInterleaving
  std::string difference;     // the first difference
  std::string file;           // written next to the failures
};

struct ExploreResult {
  std::uint64_t seed = 0;           // the rapidcheck seed used
  CaseRunner::Breakdown breakdown;  // where the cases' wall time went (generating one: setup)
  int cases = 0;                    // cases run before a failure (or all of them)
  int passed = 0;
  int shrinkRuns = 0;                     // cases run while shrinking
  std::map<std::string, int> perOutcome;  // expected outcome of each case run: success, raise...
  std::map<std::string, int> perSite;     // fault sites declared by the cases run
  int rechecked = 0;
  std::vector<Nondeterminism> nondeterminism;  // results differ: non-determinism of the harness
  std::vector<Nondeterminism> interleavings;   // only the order of events differs (reported)
  std::optional<ExploreFailure> failure;
  std::string gaveUp;  // rapidcheck gave up or errored: why
  double seconds = 0;
  // The signal that ended the search early (launch/interrupt.h): the case under way was ended and
  // is not counted; a failure found before it is reported as shrunk so far.
  int interrupted = 0;

  bool ok() const { return !failure && nondeterminism.empty() && gaveUp.empty(); }
};

// Runs the search. Progress and the summary go to `out` (unless quiet).
ExploreResult explore(const ExploreOptions& options, std::ostream& out);

// `peerconf explore` exit code: 0 nothing found, 1 a failure or non-determinism, 2 error, 128 + the
// signal when interrupted.
int exitCode(const ExploreResult& result);

// The summary lines `peerconf explore` prints.
void printSummary(const ExploreResult& result, const ExploreOptions& options, std::ostream& out);
// "  per case (us of wall time, ...): setup S, run R, checkers C, record W, other O; total T".
void printBreakdown(const CaseRunner::Breakdown& breakdown, double seconds, int cases,
                    std::ostream& out);

}  // namespace peerconf::harness::explore
