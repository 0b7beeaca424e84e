// Exhaustive exploration (`peerconf explore --exhaustive`): every subset of open failures over the
// (rank, peer) pairs of N ranks — 2^(N(N-1)) scenarios, 4096 at N = 4 — optionally crossed with
// one late rank at each point and with a failure of the device address table (alloc-table or
// copy-table, on one rank or on every rank), each judged like any other scenario.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "explore/case_runner.h"
#include "launch/launcher.h"
#include "model/core_under_test.h"
#include "model/scenario.h"

namespace peerconf::harness::explore {

inline constexpr int kMaxExhaustiveRanks = 4;

struct ExhaustiveOptions {
  int ranks = 4;                             // 1..kMaxExhaustiveRanks
  bool withLate = false;                     // cross every subset with each (rank, point) late
  bool withTable = false;                    // cross every subset with each table failure
  std::chrono::milliseconds lateDelay{2};    // how late (inside the deadline: same outcome)
  std::chrono::milliseconds deadline{1000};  // per group call; nothing waits for it when the core
                                             // is right, so it only bounds a broken one
  std::string outDir = "explore-failures";
  int maxFailureFiles = 100;  // failures past this are counted, not written
  bool validate = true;       // cases through the writer and the validator (see roundTripEvery)
  // 1 case in this many (the first included) and every case that fails go through the writer
  // and the validator and must read back the same (sameScenario); 1: every case.
  int roundTripEvery = 16;
  model::CoreFactory core = model::productionCore();
  std::string coreName = "production";
  bool quiet = false;
  bool isolate = true;  // cases in a child process (ExploreOptions::isolate)
  launch::ClockMode clock = launch::ClockMode::kReal;  // the cases' clock (ExploreOptions::clock)
  launch::Engine engine = launch::Engine::kFibers;     // ExploreOptions::engine
  bool breakdown = false;                              // ExploreOptions::breakdown
};

// A late rank: `rank` is `delay` late at `at`.
struct Late {
  int rank = 0;
  model::Point at = model::Point::kBeforeConstruct;
};

// A failure of the device address table: `site` (alloc-table or copy-table) on `rank`, or on
// every rank (rank kEveryRank).
struct TableFailure {
  static constexpr int kEveryRank = -1;
  model::FaultSite site = model::FaultSite::kAllocTable;
  int rank = kEveryRank;
};

// The table failures --with-table crosses every subset with: each site on each rank, and on
// every rank (with more than one rank).
std::vector<TableFailure> tableVariants(int ranks);

// The ranks of `table` that build their table in case `mask`: those whose opens all succeed (a
// rank whose open fails never reaches its table, so a table fault there would never fire).
std::vector<int> tableRanks(int ranks, std::uint64_t mask, const TableFailure& table);

// Case `mask` of N ranks: bit k set = the k-th (rank, peer) pair (rank-major, peer ascending,
// the rank itself skipped) fails to open with hipErrorMapFailed; plus the late rank, if any, and
// the table failure, if any, on tableRanks() (none when that is empty). Its expectation is
// derived (deriveExpectation); its name says what it is.
model::Scenario exhaustiveCase(const ExhaustiveOptions& options, std::uint64_t mask,
                               std::optional<Late> late,
                               std::optional<TableFailure> table = std::nullopt);

struct ExhaustiveResult {
  std::int64_t cases = 0;
  std::int64_t passed = 0;
  std::int64_t failed = 0;
  std::int64_t invalid = 0;  // cases the validator rejected (a bug of explore)
  struct Tally {
    std::int64_t cases = 0;
    std::int64_t passed = 0;
  };
  std::map<std::string, Tally> perOutcome;          // by expected outcome
  std::map<std::string, std::int64_t> perProperty;  // failed cases per property ("C1")
  std::vector<std::string> files;                   // failures written
  std::vector<std::string> failures;                // "name: summary" of the first failures
  double seconds = 0;
  std::int64_t total = 0;  // cases the enumeration holds (an upper bound: see exhaustive.cc)
  int interrupted = 0;     // the signal that ended it early (launch/interrupt.h), or 0
  CaseRunner::Breakdown breakdown;  // where the cases' wall time went (making one: setup)

  bool ok() const { return failed == 0 && invalid == 0; }
};

ExhaustiveResult exhaustive(const ExhaustiveOptions& options, std::ostream& out);

void printSummary(const ExhaustiveResult& result, const ExhaustiveOptions& options,
                  std::ostream& out);

}  // namespace peerconf::harness::explore
