// Exhaustive exploration: enumerate, derive, validate, run, tally.
#include "explore/exhaustive.h"

#include <array>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <stdexcept>

#include "expectation/derive.h"
#include "explore/case_runner.h"
#include "explore/explorer.h"
#include "launch/interrupt.h"
#include "model/run_record.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness::explore {

using expectation::deriveExpectation;
using model::Fault;
using model::FaultSite;
using model::Point;
using model::Scenario;
using model::shortName;
using model::toString;
using model::Verdict;
using scenario::roundTripProblem;
using scenario::WriteOptions;
using scenario::writeScenarioFile;

namespace {

constexpr std::array<Point, 5> kPoints{Point::kBeforeConstruct, Point::kExchange, Point::kOpen,
                                       Point::kAgree, Point::kClose};
constexpr int kMapFailed = 205;  // hipErrorMapFailed

std::vector<std::pair<int, int>> pairsOf(int ranks) {
  std::vector<std::pair<int, int>> pairs;
  for (int rank = 0; rank < ranks; ++rank) {
    for (int peer = 0; peer < ranks; ++peer) {
      if (peer != rank) pairs.emplace_back(rank, peer);
    }
  }
  return pairs;
}

std::vector<std::optional<Late>> lateVariants(const ExhaustiveOptions& options) {
  std::vector<std::optional<Late>> variants{std::nullopt};
  if (!options.withLate) return variants;
  for (int rank = 0; rank < options.ranks; ++rank) {
    for (Point point : kPoints) {
      // One rank has no group: it never meets the exchange, an open or the agreement.
      if (options.ranks == 1 && point != Point::kBeforeConstruct && point != Point::kClose) {
        continue;
      }
      variants.push_back(Late{rank, point});
    }
  }
  return variants;
}

std::vector<std::optional<TableFailure>> tableOptions(const ExhaustiveOptions& options) {
  std::vector<std::optional<TableFailure>> variants{std::nullopt};
  if (!options.withTable) return variants;
  for (const TableFailure& table : tableVariants(options.ranks)) variants.push_back(table);
  return variants;
}

}  // namespace

std::vector<TableFailure> tableVariants(int ranks) {
  std::vector<TableFailure> variants;
  for (FaultSite site : {FaultSite::kAllocTable, FaultSite::kCopyTable}) {
    for (int rank = 0; rank < ranks; ++rank) variants.push_back({site, rank});
    if (ranks > 1) variants.push_back({site, TableFailure::kEveryRank});
  }
  return variants;
}

std::vector<int> tableRanks(int ranks, std::uint64_t mask, const TableFailure& table) {
  const auto pairs = pairsOf(ranks);
  std::vector<bool> opensFail(static_cast<std::size_t>(ranks), false);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if ((mask >> k & 1U) != 0) opensFail[static_cast<std::size_t>(pairs[k].first)] = true;
  }
  std::vector<int> out;
  for (int rank = 0; rank < ranks; ++rank) {
    const bool chosen = table.rank == TableFailure::kEveryRank || table.rank == rank;
    if (chosen && !opensFail[static_cast<std::size_t>(rank)]) out.push_back(rank);
  }
  return out;
}

Scenario exhaustiveCase(const ExhaustiveOptions& options, std::uint64_t mask,
                        std::optional<Late> late, std::optional<TableFailure> table) {
  Scenario scenario;
  scenario.ranks = options.ranks;
  scenario.deadline = options.deadline;
  scenario.bufferBytes = 4 << 10;
  scenario.seed = mask;
  scenario.name = "exhaustive-n" + std::to_string(options.ranks) + "-m" + std::to_string(mask);
  const auto pairs = pairsOf(options.ranks);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if ((mask >> k & 1U) == 0) continue;
    Fault fault;
    fault.site = FaultSite::kOpen;
    fault.ranks = {pairs[k].first};
    fault.peer = pairs[k].second;
    fault.error = kMapFailed;
    scenario.faults.push_back(fault);
  }
  if (late) {
    Fault fault;
    fault.site = FaultSite::kDelay;
    fault.ranks = {late->rank};
    fault.at = late->at;
    fault.delay = options.lateDelay;
    scenario.faults.push_back(fault);
    scenario.name += "-late-r" + std::to_string(late->rank) + "-" + toString(late->at);
  }
  if (table) {
    std::vector<int> ranks = tableRanks(options.ranks, mask, *table);
    if (!ranks.empty()) {
      Fault fault;
      fault.site = table->site;
      fault.ranks = std::move(ranks);
      scenario.faults.push_back(fault);
      scenario.name +=
          "-" + toString(table->site) + "-" +
          (table->rank == TableFailure::kEveryRank ? std::string("all")
                                                   : "r" + std::to_string(table->rank));
    }
  }
  scenario.description = "exhaustive: " + std::to_string(scenario.faults.size()) + " fault(s)";
  scenario.expect = deriveExpectation(scenario);
  return scenario;
}

namespace {

// `scenario` through the writer and the validator, replaced by what reads back; false (counted
// invalid, and said why) when it does not validate or reads back different.
bool roundTrips(Scenario& scenario, ExhaustiveResult& result) {
  const Scenario generated = scenario;
  std::string text;
  const std::string why = roundTripProblem(generated, generated.name + ".yaml", text, scenario);
  if (why.empty()) return true;
  ++result.invalid;
  if (result.failures.size() < 10) result.failures.push_back(generated.name + ": " + why);
  return false;
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): the exhaustive walk and its report; to be split
ExhaustiveResult exhaustive(const ExhaustiveOptions& options, std::ostream& out) {
  if (options.ranks < 1 || options.ranks > kMaxExhaustiveRanks) {
    throw std::invalid_argument("--exhaustive needs 1 to " + std::to_string(kMaxExhaustiveRanks) +
                                " ranks (2^(N(N-1)) cases), got " + std::to_string(options.ranks));
  }
  ExhaustiveResult result;
  const auto start = std::chrono::steady_clock::now();
  CaseRunner runner(options.core, true, options.isolate, options.clock, options.engine);
  const std::uint64_t subsets = std::uint64_t{1} << pairsOf(options.ranks).size();
  // Every late variant crossed with every table variant (each list holds "none" first).
  std::vector<std::pair<std::optional<Late>, std::optional<TableFailure>>> variants;
  for (const std::optional<Late>& late : lateVariants(options)) {
    for (const std::optional<TableFailure>& table : tableOptions(options)) {
      variants.emplace_back(late, table);
    }
  }
  // An upper bound: table failures no rank reaches are skipped.
  const std::int64_t total = static_cast<std::int64_t>(subsets * variants.size());

  result.total = total;
  std::uint64_t generatedIndex = 0;  // which cases are round-tripped (roundTripEvery)
  // An interrupt (launch/interrupt.h) ends the enumeration; the case under way is not counted.
  try {
    for (std::uint64_t mask = 0; mask < subsets; ++mask) {
      for (const auto& [late, table] : variants) {
        // A table failure no rank reaches is the case without it; one on "every rank" that only
        // one rank reaches is that rank's case. Both are run already.
        if (table) {
          const std::size_t reached = tableRanks(options.ranks, mask, *table).size();
          if (reached == 0 || (table->rank == TableFailure::kEveryRank && reached == 1)) continue;
        }
        const auto making = std::chrono::steady_clock::now();
        Scenario scenario = exhaustiveCase(options, mask, late, table);
        // Through the writer and the validator, and back the same: a sample of the cases (1 in
        // roundTripEvery) and every case that fails, before it counts.
        auto roundTrip = [&] { return roundTrips(scenario, result); };
        const bool sampled =
            options.validate &&
            (options.roundTripEvery <= 1 ||
             generatedIndex++ % static_cast<std::uint64_t>(options.roundTripEvery) == 0);
        if (sampled && !roundTrip()) continue;
        launch::throwIfInterrupted();
        runner.addSetup(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - making)
                            .count());
        CaseRun run = runner.run(scenario, scenario.seed);
        if (!run.passed() && options.validate && !sampled) {
          if (!roundTrip()) continue;
          run = runner.run(scenario, scenario.seed);
        }
        ++result.cases;
        auto& tally = result.perOutcome[toString(scenario.expect.outcome)];
        ++tally.cases;
        if (run.passed()) {
          ++result.passed;
          ++tally.passed;
        } else {
          ++result.failed;
          for (const Verdict* verdict : run.unexpectedFailures()) {
            ++result.perProperty[shortName(verdict->property)];
          }
          if (result.failures.size() < 10) {
            result.failures.push_back(scenario.name + ": " + run.failureSummary());
          }
          if (static_cast<int>(result.files.size()) < options.maxFailureFiles) {
            const std::string path =
                (std::filesystem::path(options.outDir) / (scenario.name + ".yaml")).string();
            WriteOptions write;
            write.header = {
                "Failed in `" + model::programName() + " explore --exhaustive --ranks " +
                    std::to_string(options.ranks) + "` (" + options.coreName + " core):",
                run.failureSummary(), "Run it again: " + model::programName() + " run " + path};
            scenario.description = "exhaustive case that failed: " + run.failureSummary();
            writeScenarioFile(scenario, path, write);
            result.files.push_back(path);
          }
        }
        if (!options.quiet && total >= 10000 && result.cases % 10000 == 0) {
          out << "  " << result.cases << "/" << total << " cases\n" << std::flush;
        }
      }
    }
  } catch (const launch::Interrupted& stop) {
    result.interrupted = stop.signal;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.breakdown = runner.breakdown();
  return result;
}

void printSummary(const ExhaustiveResult& result, const ExhaustiveOptions& options,
                  std::ostream& out) {
  out << model::programName() << " explore --exhaustive: " << options.ranks
      << " ranks, every subset of open "
      << "failures over " << options.ranks * (options.ranks - 1) << " (rank, peer) pairs"
      << (options.withLate ? ", each crossed with one late rank at each point" : "")
      << (options.withTable ? ", each crossed with an alloc-table or copy-table failure on each "
                              "rank and on every rank (where no open of that rank fails)"
                            : "")
      << ", " << options.coreName << " core\n";
  out << "  " << result.cases << " cases: " << result.passed << " passed, " << result.failed
      << " failed";
  if (result.invalid > 0) out << ", " << result.invalid << " INVALID";
  if (result.interrupted != 0) {
    out << ", interrupted after " << result.cases << " of " << result.total << " cases ("
        << launch::signalName(result.interrupted) << ")";
  }
  out << " in " << std::fixed << std::setprecision(2) << result.seconds << " s";
  if (result.seconds > 0) {
    out << " (" << std::setprecision(0) << static_cast<double>(result.cases) / result.seconds
        << " cases/s)";
  }
  out << "\n" << std::defaultfloat;
  if (options.breakdown) {
    printBreakdown(result.breakdown, result.seconds, static_cast<int>(result.cases), out);
  }
  for (const auto& [outcome, tally] : result.perOutcome) {
    out << "  " << outcome << ": " << tally.cases << " cases, " << tally.passed << " passed\n";
  }
  for (const auto& [property, count] : result.perProperty) {
    out << "  " << property << " failed in " << count << " case(s)\n";
  }
  for (const std::string& failure : result.failures) out << "FAIL " << failure << "\n";
  if (!result.files.empty()) {
    out << "  " << result.files.size() << " failure(s) written to " << options.outDir;
    if (result.failed > static_cast<std::int64_t>(result.files.size())) {
      out << " (" << result.failed - static_cast<std::int64_t>(result.files.size())
          << " more not written)";
    }
    out << "\n";
  }
}

}  // namespace peerconf::harness::explore
