// Explorer: the rapidcheck property over generated scenarios, the shrunk failure written as a
// file, and the determinism re-runs.
#include "explore/explorer.h"

#include <rapidcheck.h>
#include <rapidcheck/detail/Property.h>
#include <rapidcheck/detail/TestListener.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "explore/case_runner.h"
#include "explore/determinism.h"
#include "launch/interrupt.h"
#include "model/run_record.h"
#include "scenario/load.h"
#include "scenario/writer.h"

// rapidcheck's own (de)serialization of reproduce strings: exported by librapidcheck but not in
// its installed headers. They are what RC_PARAMS="reproduce=..." reads and prints.
namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace peerconf::harness::explore {

using model::Fault;
using model::RunRecord;
using model::Scenario;
using model::shortName;
using model::toString;
using model::Verdict;
using scenario::loadScenario;
using scenario::roundTripProblem;
using scenario::sameScenario;
using scenario::WriteOptions;
using scenario::writeScenario;
using scenario::writeScenarioFile;

namespace {

constexpr const char* kPropertyId = "peerconf-explore";
constexpr int kReruns = 3;  // the written file is run again this many times

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Whether the index-th passing case is re-run: a fixed fraction, drawn from the search's seed so
// that the same search rechecks the same cases.
bool recheckPicked(std::uint64_t seed, int index, double fraction) {
  if (fraction <= 0) return false;
  if (fraction >= 1) return true;
  const std::uint64_t draw = mix(seed ^ mix(static_cast<std::uint64_t>(index) + 1));
  return static_cast<double>(draw >> 11) * 0x1.0p-53 < fraction;
}

class CountingListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    if (accepted) ++shrinks;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  int shrinks = 0;
};

std::vector<std::string> propertyNames(const CaseRun& run) {
  std::vector<std::string> out;
  for (const Verdict* verdict : run.unexpectedFailures())
    out.push_back(shortName(verdict->property));
  if (!run.record.harnessErrors.empty()) out.push_back("harness");
  return out;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string searchCommand(const ExploreOptions& options, std::uint64_t seed) {
  std::string command = model::programName() + " explore --seed " + std::to_string(seed) +
                        " --cases " + std::to_string(options.cases) + " --max-ranks " +
                        std::to_string(options.generator.maxRanks);
  command += " --clock " + toString(options.clock);
  if (options.clock == launch::ClockMode::kSim && options.engine != launch::Engine::kFibers) {
    command += " --engine " + toString(options.engine);
  }
  return command;
}

// What the property saw last time it failed: during shrinking every failing run is an accepted
// shrink, so the last one is the minimal case.
struct Observed {
  ExploreFailure::Kind kind = ExploreFailure::Kind::kCore;
  Scenario scenario;
  std::string text;
  std::string summary;
  std::vector<std::string> properties;
};

// Counts a generated case (not a shrink attempt) by its expected outcome and the sites it faults.
void countCase(const Scenario& generated, ExploreResult& result) {
  ++result.cases;
  result.perOutcome[toString(generated.expect.outcome)] += 1;
  std::set<std::string> sites;
  for (const Fault& fault : generated.faults) sites.insert(toString(fault.site));
  for (const std::string& site : sites) result.perSite[site] += 1;
}

// Takes back countCase's count of a case an interrupt ended.
void uncountCase(const Scenario& generated, ExploreResult& result) {
  --result.cases;
  auto drop = [](std::map<std::string, int>& counts, const std::string& key) {
    if (--counts[key] <= 0) counts.erase(key);
  };
  drop(result.perOutcome, toString(generated.expect.outcome));
  std::set<std::string> sites;
  for (const Fault& fault : generated.faults) sites.insert(toString(fault.site));
  for (const std::string& site : sites) drop(result.perSite, site);
}

// Runs a passing case again and keeps how the two runs differ, if they do.
// On simulated time the two runs must be the same byte for byte (compareRuns' `exact`).
void recheck(CaseRunner& runner, const Scenario& scenario, const CaseRun& run,
             ExploreResult& result, bool exact) {
  const RunRecord again = runner.launch(scenario, scenario.seed);
  ++result.rechecked;
  if (auto divergence = compareRuns(run.record, again, exact)) {
    const bool harness = divergence->level == Divergence::Level::kResult;
    (harness ? result.nondeterminism : result.interleavings)
        .push_back({scenario, scenario.seed, harness, divergence->difference, {}});
  }
}

rc::detail::TestParams testParams(const ExploreOptions& options, std::uint64_t seed) {
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = options.cases;
  params.maxSize = 100;
  params.maxDiscardRatio = 10;
  params.disableShrinking = !options.shrink;
  return params;
}

// --reproduce into rapidcheck's map; why it cannot be read, or "" (also when there is none).
std::string readReproduce(const std::string& reproduce,
                          std::unordered_map<std::string, rc::detail::Reproduce>& map) {
  if (reproduce.empty()) return "";
  try {
    map = rc::detail::stringToReproduceMap(reproduce);
  } catch (const std::exception& e) {
    return std::string("cannot read the reproduce string: ") + e.what();
  }
  if (map.count(kPropertyId) == 0) {
    return "the reproduce string is not one `peerconf explore` printed";
  }
  return "";
}

// A core's shrunk failure as a scenario file in --out, read back and run again: the file alone
// must fail again, every time.
void writeShrunkCase(ExploreFailure& found, const ExploreOptions& options, std::uint64_t seed,
                     CaseRunner& runner) {
  std::ostringstream stem;
  stem << "explore-" << std::hex << std::setw(16) << std::setfill('0') << seed;
  found.scenario.name = stem.str();
  found.scenario.description = "found by " + model::programName() + " explore (" +
                               options.coreName +
                               " core): " + joined(found.failedProperties, ", ") + " failed";
  const std::string path =
      (std::filesystem::path(options.outDir) / (stem.str() + ".yaml")).string();
  WriteOptions write;
  write.header = {
      "Shrunk by `" + model::programName() +
          " explore` (rapidcheck) to a minimal failing case of the " + options.coreName + " core.",
      "Failed: " + found.summary,
      options.coreName == "production"
          ? "Run it again: " + model::programName() + " run " + path
          : "Run it again through runThreads with the " + options.coreName + " core (`" +
                model::programName() + " run " + path + "` runs the production core, which passes)",
      "Replay the search: " + found.command,
      "  (rapidcheck: RC_PARAMS=\"reproduce=" + found.reproduce + "\")",
  };
  try {
    writeScenarioFile(found.scenario, path, write);
    found.file = path;
    const Scenario written = loadScenario(path);
    std::string why;
    if (!sameScenario(written, found.scenario, &why)) {
      found.summary += " (the written file reads back differently: " + why + ")";
    }
    found.scenario = written;
    found.text = writeScenario(written);
    if (launch::interrupted()) {
      found.rerunsInterrupted = true;
      return;
    }
    // The file alone must fail again, every time.
    found.reproduced = true;
    found.sameProperties = true;
    for (int attempt = 0; attempt < kReruns; ++attempt) {
      const CaseRun again = runner.run(written, written.seed);
      found.reproduced = found.reproduced && !again.passed();
      found.sameProperties = found.sameProperties && propertyNames(again) == found.failedProperties;
    }
  } catch (const launch::Interrupted&) {
    found.reproduced = false;
    found.rerunsInterrupted = true;
  } catch (const std::exception& e) {
    found.summary += std::string(" (could not write it: ") + e.what() + ")";
  }
}

// What rapidcheck's outcome means for the search: the minimal failing case (written when the
// core failed), or why the search gave up.
void judgeOutcome(const rc::detail::TestResult& outcome, const std::optional<Observed>& last,
                  int shrinks, const ExploreOptions& options, CaseRunner& runner,
                  ExploreResult& result) {
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gaveUp;
  rc::detail::Error error;
  if (outcome.match(failure) && last) {
    ExploreFailure found;
    found.kind = last->kind;
    found.summary = last->summary;
    found.failedProperties = last->properties;
    found.shrinks = shrinks;
    found.reproduce = rc::detail::reproduceMapToString({{kPropertyId, failure.reproduce}});
    found.command = searchCommand(options, result.seed) + " --reproduce '" + found.reproduce + "'";
    found.scenario = last->scenario;
    found.text = last->text;
    if (found.kind == ExploreFailure::Kind::kCore) {
      writeShrunkCase(found, options, result.seed, runner);
    }
    result.failure = std::move(found);
  } else if (outcome.match(failure)) {
    result.gaveUp =
        "rapidcheck reported a failure the property did not see: " + failure.description;
  } else if (outcome.match(gaveUp)) {
    result.gaveUp = "rapidcheck gave up: " + gaveUp.description;
  } else if (outcome.match(error)) {
    result.gaveUp = "rapidcheck error: " + error.description;
  }
}

// Each re-run that differed, written to --out as `prefix-SEED-I.yaml` with how the runs differed.
void writeRechecks(std::vector<Nondeterminism>& list, const std::string& prefix,
                   const std::string& what, const ExploreOptions& options, std::uint64_t seed) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    Nondeterminism& found = list[i];
    Scenario scenario = found.scenario;
    scenario.name = prefix + "-" + std::to_string(seed) + "-" + std::to_string(i);
    const std::string path =
        (std::filesystem::path(options.outDir) / (scenario.name + ".yaml")).string();
    WriteOptions write;
    write.header = {"Two runs of this scenario with the same seed " + what + ":", found.difference};
    try {
      writeScenarioFile(scenario, path, write);
      found.file = path;
    } catch (const std::exception&) {
      // Reported without a file.
    }
  }
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): the search, shrink and report of explore; to be split
ExploreResult explore(const ExploreOptions& options, std::ostream& out) {
  ExploreResult result;
  result.seed =
      options.seed.value_or((std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
  const auto start = std::chrono::steady_clock::now();
  CaseRunner runner(options.core, true, options.isolate, options.clock, options.engine);

  bool failing = false;  // a failure was seen: later runs are shrink attempts
  int passingIndex = 0;
  unsigned generatedIndex = 0;  // cases generated (not shrink attempts): which are round-tripped
  std::optional<Observed> last;
  const rc::Gen<Scenario> generator = genScenario(options.generator);
  // An interrupt (launch/interrupt.h) fails the property once, unless a failure is being shrunk
  // already: rapidcheck then stops generating; every later call (its shrink attempts) passes at
  // once, so it winds down without running anything.
  bool stopped = false;

  auto property = [&] {
    const auto entered = std::chrono::steady_clock::now();
    const Scenario generated = *generator;
    if (stopped) return;
    if (failing) {
      ++result.shrinkRuns;
    } else {
      countCase(generated, result);
    }
    bool passed = false;  // counted as passed (an interrupt in its re-run leaves it so)
    try {
      launch::throwIfInterrupted();

      // What runs is what a file says: a sample (roundTripEvery), and a case that fails before it
      // counts (run again as read back), go through the writer and validator and must come back.
      std::string text;
      Scenario scenario = generated;
      auto roundTrip = [&] {
        const std::string why = roundTripProblem(generated, "generated.yaml", text, scenario);
        if (why.empty()) return;
        failing = true;
        last = Observed{ExploreFailure::Kind::kGenerator,
                        generated,
                        text,
                        "the generated scenario is not what its file says: it " + why,
                        {"generator"}};
        RC_FAIL(last->summary);
      };
      const bool sampled = failing || options.roundTripEvery <= 1 ||
                           generatedIndex++ % static_cast<unsigned>(options.roundTripEvery) == 0;
      if (sampled) roundTrip();

      runner.addSetup(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - entered)
                          .count());
      CaseRun run = runner.run(scenario, scenario.seed);
      if (!run.passed() && !sampled) {
        roundTrip();
        run = runner.run(scenario, scenario.seed);
      }
      if (!run.passed()) {
        failing = true;
        last = Observed{ExploreFailure::Kind::kCore, scenario, text, run.failureSummary(),
                        propertyNames(run)};
        RC_FAIL(last->summary);
      }
      if (failing) return;
      ++result.passed;
      passed = true;
      if (recheckPicked(result.seed, passingIndex++, options.recheckFraction)) {
        recheck(runner, scenario, run, result, options.clock == launch::ClockMode::kSim);
      }
      if (!options.quiet && result.cases % 100 == 0) {
        out << "  " << result.cases << " cases, " << result.passed << " passed\n" << std::flush;
      }
    } catch (const launch::Interrupted& stop) {
      stopped = true;
      result.interrupted = stop.signal;
      if (failing) {
        --result.shrinkRuns;
        return;  // this shrink attempt is not taken; the failure so far stands
      }
      if (!passed) uncountCase(generated, result);
      RC_FAIL("interrupted");
    }
  };

  rc::detail::TestMetadata metadata;
  metadata.id = kPropertyId;
  metadata.description = "every generated scenario passes C1-C5 and C8";
  std::unordered_map<std::string, rc::detail::Reproduce> reproduceMap;
  result.gaveUp = readReproduce(options.reproduce, reproduceMap);
  if (!result.gaveUp.empty()) return result;

  CountingListener listener;
  const rc::detail::TestResult outcome =
      rc::detail::checkProperty(rc::detail::toProperty(property), metadata,
                                testParams(options, result.seed), listener, reproduceMap);
  // Interrupted before any failure: rapidcheck's "failure" is the interrupt, not a finding.
  if (!stopped || failing) judgeOutcome(outcome, last, listener.shrinks, options, runner, result);

  writeRechecks(result.nondeterminism, "nondeterministic", "ended differently", options,
                result.seed);
  writeRechecks(result.interleavings, "interleaving", "interleaved differently", options,
                result.seed);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.breakdown = runner.breakdown();
  return result;
}

void printBreakdown(const CaseRunner::Breakdown& breakdown, double seconds, int cases,
                    std::ostream& out) {
  if (cases <= 0) return;
  const double per = 1e-3 / cases;  // ns in all -> us a case
  const double total = seconds * 1e6 / cases;
  const double setup = static_cast<double>(breakdown.setupNs) * per;
  const double run = static_cast<double>(breakdown.runNs) * per;
  const double checkers = static_cast<double>(breakdown.checkersNs) * per;
  const double record = static_cast<double>(breakdown.recordNs) * per;
  out << std::fixed << std::setprecision(1) << "  per case (us of wall time, " << cases
      << " cases, " << breakdown.launches << " runs): setup " << setup << ", run " << run
      << ", checkers " << checkers << ", record " << record << ", other "
      << std::max(0.0, total - setup - run - checkers - record) << "; total " << total << "\n"
      << std::defaultfloat;
}

int exitCode(const ExploreResult& result) {
  if (result.interrupted != 0) return launch::interruptedExitCode(result.interrupted);
  if (!result.gaveUp.empty()) return 2;
  if (result.failure && result.failure->kind == ExploreFailure::Kind::kGenerator) return 2;
  return result.ok() ? 0 : 1;
}

void printSummary(const ExploreResult& result, const ExploreOptions& options, std::ostream& out) {
  out << model::programName() << " explore: seed " << result.seed << ", " << options.coreName
      << " core, up to " << options.generator.maxRanks << " ranks\n";
  out << "  " << result.cases << " cases: " << result.passed << " passed, "
      << (result.failure ? 1 : 0) << " failed in " << std::fixed << std::setprecision(2)
      << result.seconds << " s";
  if (result.seconds > 0) {
    out << " (" << std::setprecision(0) << (result.cases + result.shrinkRuns) / result.seconds
        << " cases/s)";
  }
  out << "\n" << std::defaultfloat;
  if (options.breakdown)
    printBreakdown(result.breakdown, result.seconds, result.cases + result.shrinkRuns, out);
  if (result.interrupted != 0) {
    out << "  interrupted after " << result.passed << " of " << options.cases << " cases ("
        << launch::signalName(result.interrupted)
        << "): the case under way was ended and is not counted"
        << (result.failure ? "; the failure below is shrunk as far as it got" : "") << "\n";
  }
  out << "  expected outcomes:";
  for (const auto& [outcome, count] : result.perOutcome) out << " " << outcome << " " << count;
  out << "\n  fault sites:";
  for (const auto& [site, count] : result.perSite) out << " " << site << " " << count;
  out << "\n  determinism: " << result.rechecked << " passing case(s) re-run, "
      << result.nondeterminism.size() << " ended differently, " << result.interleavings.size()
      << " interleaved differently (same results)"
      << (options.clock == launch::ClockMode::kSim ? "; simulated time: compared byte for byte"
                                                   : "")
      << "\n";
  const auto shorten = [](const std::string& text) {
    return text.size() <= 300 ? text : text.substr(0, 297) + "...";
  };
  for (const Nondeterminism& found : result.nondeterminism) {
    out << "NONDETERMINISTIC " << (found.file.empty() ? found.scenario.name : found.file)
        << " (seed " << found.seed << "): " << shorten(found.difference) << "\n";
  }
  for (const Nondeterminism& found : result.interleavings) {
    out << "  interleaving: " << (found.file.empty() ? found.scenario.name : found.file) << ": "
        << shorten(found.difference) << "\n";
  }
  if (result.failure) {
    const ExploreFailure& failure = *result.failure;
    if (failure.kind == ExploreFailure::Kind::kGenerator) {
      out << "ERROR the generator made an invalid scenario (a bug of explore): " << failure.summary
          << "\n"
          << failure.text;
    } else {
      out << "FAIL " << failure.summary << "\n";
      out << "  minimal case after " << failure.shrinks << " shrink(s) and " << result.shrinkRuns
          << " run(s): " << failure.scenario.ranks << " rank(s), " << failure.scenario.faults.size()
          << " fault(s)\n";
      if (!failure.file.empty()) {
        out << "  written to " << failure.file << " (run alone " << kReruns << " times: "
            << (failure.rerunsInterrupted ? "not run: interrupted"
                : !failure.reproduced     ? "did NOT fail every time"
                : failure.sameProperties  ? "failed every time, the same way"
                                          : "failed every time, not always on the same properties")
            << ")\n  run it:     " << model::programName() << " run " << failure.file << "\n";
      }
      out << "  replay:     " << failure.command << "\n";
    }
  }
  if (!result.gaveUp.empty()) out << "ERROR " << result.gaveUp << "\n";
}

}  // namespace peerconf::harness::explore
