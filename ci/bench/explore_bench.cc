// Exploration throughput: 4-rank fault scenarios per second in thread mode over the mocked HIP
// runtime (launch + checkers + judgement), its parts (validating through the writer and the
// parser, the launch alone), and one exhaustive N = 4 enumeration. ci/bench/explore_bench.sh
// runs it next to the MPI comparison; ci/bench/RESULTS.md keeps the figures.
#include <benchmark/benchmark.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "expectation/derive.h"
#include "explore/case_runner.h"
#include "explore/exhaustive.h"
#include "explore/generators.h"
#include "judge/judgement.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness::explore {

using expectation::deriveExpectation;
using expectation::deriveFates;
using expectation::RankFate;
using launch::LaunchOptions;
using launch::runThreads;
using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::Point;
using model::productionCore;
using model::RankResult;
using model::RunRecord;
using model::Scenario;
using scenario::expandScenarioPaths;
using scenario::loadScenario;
using scenario::parseScenario;
using scenario::writeScenario;
namespace {

Fault fault(FaultSite site, int rank, std::optional<int> peer = std::nullopt, int count = 0) {
  Fault f;
  f.site = site;
  f.ranks = {rank};
  f.peer = peer;
  f.count = count;
  if (site == FaultSite::kOpen || site == FaultSite::kClose || site == FaultSite::kFree)
    f.error = 1;
  return f;
}

// Fault scenarios of 4 ranks whose outcome needs no deadline to pass: what a property or an
// exhaustive run spends most of its cases on.
std::vector<Scenario> fourRankFaultScenarios() {
  const std::vector<std::vector<Fault>> sets = {
      {fault(FaultSite::kOpen, 1, 0)},
      {fault(FaultSite::kOpen, 3, std::nullopt, 1)},
      {fault(FaultSite::kHandleCorrupt, 2, 1)},
      {fault(FaultSite::kHandleStale, 0, 3)},
      {fault(FaultSite::kOpen, 0, 3), fault(FaultSite::kOpen, 2, 1)},
      {fault(FaultSite::kClose, 1, 2)},
      {fault(FaultSite::kFree, 3)},
      {fault(FaultSite::kOpen, 1, 3), fault(FaultSite::kClose, 2)},
      {fault(FaultSite::kHandleCorrupt, 1, 0), fault(FaultSite::kHandleStale, 3, 2)},
      {fault(FaultSite::kClose, 0), fault(FaultSite::kFree, 1)},
  };
  std::vector<Scenario> out;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    Scenario scenario;
    scenario.name = "bench-" + std::to_string(i);
    scenario.ranks = 4;
    scenario.bufferBytes = 64 << 10;
    scenario.deadline = std::chrono::milliseconds(1000);
    scenario.seed = i + 1;
    scenario.faults = sets[i];
    scenario.expect = deriveExpectation(scenario);
    out.push_back(parseScenario(writeScenario(scenario), scenario.name + ".yaml"));
  }
  return out;
}

void BM_ValidateScenario(benchmark::State& state) {
  const auto scenarios = fourRankFaultScenarios();
  std::size_t i = 0;
  for (auto _ : state) {
    const Scenario& scenario = scenarios[i++ % scenarios.size()];
    benchmark::DoNotOptimize(parseScenario(writeScenario(scenario), "bench.yaml"));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ValidateScenario);

// The launch alone: arg 0 = runThreads (threads started per run), 1 = CaseRunner's rank pool.
void BM_LaunchFourRanks(benchmark::State& state) {
  const auto scenarios = fourRankFaultScenarios();
  CaseRunner runner(productionCore(), state.range(0) != 0);
  std::size_t i = 0;
  for (auto _ : state) {
    const Scenario& scenario = scenarios[i++ % scenarios.size()];
    if (state.range(0) == 0) {
      benchmark::DoNotOptimize(runThreads(scenario, scenario.seed, LaunchOptions{}));
    } else {
      benchmark::DoNotOptimize(runner.launch(scenario, scenario.seed));
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchFourRanks)->Arg(0)->Arg(1)->UseRealTime();

// A whole case: launch, every checker, the judgement. Items per second = scenarios per second.
void BM_FourRankFaultScenario(benchmark::State& state) {
  const auto scenarios = fourRankFaultScenarios();
  CaseRunner runner(productionCore(), state.range(0) != 0);
  std::size_t i = 0, failed = 0;
  for (auto _ : state) {
    const Scenario& scenario = scenarios[i++ % scenarios.size()];
    if (!runner.run(scenario, scenario.seed).passed()) ++failed;
  }
  if (failed > 0) state.SkipWithError("a benchmark scenario failed its checks");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FourRankFaultScenario)->Arg(0)->Arg(1)->UseRealTime();

// `peerconf explore --exhaustive --ranks 4`: 4096 cases, validated, run, checked.
void BM_ExhaustiveN4(benchmark::State& state) {
  ExhaustiveOptions options;
  options.ranks = 4;
  options.quiet = true;
  options.outDir = "explore-bench-failures";
  std::int64_t cases = 0, failed = 0;
  for (auto _ : state) {
    std::ostringstream out;
    const ExhaustiveResult result = exhaustive(options, out);
    cases += result.cases;
    failed += result.failed + result.invalid;
  }
  if (failed > 0) state.SkipWithError("exhaustive N=4 found failures");
  state.SetItemsProcessed(cases);
}
BENCHMARK(BM_ExhaustiveN4)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

// --- Deadline waits of the exploration (issue 14's goal), from the generators and the oracle ---

// Whether some rank of `scenario` waits out a group deadline: it raises a group error because a
// peer never completed a group call (not a group-fail of its own).
bool waitsOutADeadline(const Scenario& scenario) {
  const std::vector<RankFate> fates = deriveFates(scenario);
  return std::any_of(fates.begin(), fates.end(), [](const RankFate& f) { return f.waited; });
}

// The seed's semantics before failure records (the oracle of f2c6544^): an alloc or get-handle
// failure made its rank raise before the exchange and every other rank wait there until the
// deadline. In the oracle that is exactly a group-fail at the exchange on that rank (it raises
// at once, the others time out in the exchange), so the seed's waits are read off the same
// oracle with that substitution and without the runner's agreement.
Scenario asSeedSemantics(Scenario scenario) {
  scenario.runner.agreeFirst = false;
  if (scenario.ranks == 1) return scenario;
  for (Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kAlloc && fault.site != FaultSite::kGetHandle) continue;
    fault.site = FaultSite::kGroupFail;
    fault.at = Point::kExchange;
    fault.error = 0;
  }
  return scenario;
}

bool hasSite(const Scenario& scenario, FaultSite site) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(),
                     [&](const Fault& f) { return f.site == site; });
}

std::string percent(int part, int whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return text;
}

// `--wait-share=N`: N cases of `peerconf explore`'s generators (default options, rapidcheck sizes
// 0..100 in turn, a fixed seed), the share whose expected outcome has a rank waiting out a group
// deadline, under the semantics of today, of the port before this runner model (failure
// records, no runner agreement, no not-ready site) and of the seed (no failure records).
int waitShare(int n, std::uint64_t seed) {
  GeneratorOptions today;  // every site, not-ready included; 1 case in 8 without the agreement
  GeneratorOptions before = today;
  before.sites = allSites();
  std::erase(before.sites, FaultSite::kNotReady);
  const rc::Gen<ScenarioSpec> specs = genScenarioSpec(today);
  const rc::Gen<ScenarioSpec> specsBefore = genScenarioSpec(before);
  rc::Random random(seed);
  int waitToday = 0, waitBefore = 0, waitSeed = 0, notReady = 0, notReadyAgreeing = 0;
  int notReadyWaitAgreeing = 0, notReadyWaitWithout = 0, allocGet = 0, allocGetWaitToday = 0,
      allocGetWaitSeed = 0;
  for (int i = 0; i < n; ++i) {
    const int size = i % 101;
    rc::Random r = random.split();
    ScenarioSpec spec = specs(r, size).value();
    const Scenario now = buildScenario(spec, today);
    waitToday += waitsOutADeadline(now) ? 1 : 0;
    if (hasSite(now, FaultSite::kNotReady)) {
      ++notReady;
      // The same case with and without the runner's agreement.
      Scenario agreeing = now, without = now;
      agreeing.runner.agreeFirst = true;
      without.runner.agreeFirst = false;
      notReadyAgreeing += now.runner.agreeFirst ? 1 : 0;
      notReadyWaitAgreeing += waitsOutADeadline(agreeing) ? 1 : 0;
      notReadyWaitWithout += waitsOutADeadline(without) ? 1 : 0;
    }
    // The port before this change: the same draw over the sites it had, no runner agreement.
    ScenarioSpec old = specsBefore(r, size).value();
    old.agreeFirst = false;
    const Scenario prior = buildScenario(old, before);
    const bool priorWaits = waitsOutADeadline(prior);
    const bool seedWaits = waitsOutADeadline(asSeedSemantics(prior));
    waitBefore += priorWaits ? 1 : 0;
    waitSeed += seedWaits ? 1 : 0;
    if (prior.ranks > 1 &&
        (hasSite(prior, FaultSite::kAlloc) || hasSite(prior, FaultSite::kGetHandle))) {
      ++allocGet;
      allocGetWaitToday += priorWaits ? 1 : 0;
      allocGetWaitSeed += seedWaits ? 1 : 0;
    }
  }
  std::printf(
      "Generated cases: %d (rapidcheck sizes 0..100 in turn, seed %llu, default generator "
      "options: 1..16 ranks, up to 5 faults)\n\n",
      n, static_cast<unsigned long long>(seed));
  std::printf("| semantics | cases where some rank waits out a group deadline |\n| --- | --- |\n");
  std::printf(
      "| seed (no failure records; alloc/get-handle raise before the exchange) | %d (%s) |\n",
      waitSeed, percent(waitSeed, n).c_str());
  std::printf(
      "| failure records, no runner agreement, no not-ready site (before this change) | "
      "%d (%s) |\n",
      waitBefore, percent(waitBefore, n).c_str());
  std::printf(
      "| today: failure records, runner agreement (1 case in 8 without), not-ready drawn | "
      "%d (%s) |\n\n",
      waitToday, percent(waitToday, n).c_str());
  std::printf(
      "Multi-rank cases with an alloc or get-handle fault: %d; waiting: %d (%s) with "
      "failure records, %d (%s) under the seed's semantics.\n",
      allocGet, allocGetWaitToday, percent(allocGetWaitToday, allocGet).c_str(), allocGetWaitSeed,
      percent(allocGetWaitSeed, allocGet).c_str());
  std::printf(
      "Cases with a not-ready fault: %d (%d generated with the agreement); the same cases "
      "wait in %d (%s) with the runner's agreement, in %d (%s) without it.\n",
      notReady, notReadyAgreeing, notReadyWaitAgreeing,
      percent(notReadyWaitAgreeing, notReady).c_str(), notReadyWaitWithout,
      percent(notReadyWaitWithout, notReady).c_str());
  return 0;
}

// `--handshake-times=PATH,...` (files or directories): each scenario `repeat` times in thread
// mode on the mocked runtime; the handshake is the span from the first rank's constructor start
// to the last rank's constructor end (event times; where no rank constructs, the runner's
// "ready" phase instead), and the run's wall time.
int handshakeTimes(const std::vector<std::string>& paths, int repeat) {
  std::printf(
      "| scenario | ranks | outcome | handshake median / max (ms) | run wall median (ms) "
      "|\n| --- | --- | --- | --- | --- |\n");
  double worst = 0;
  for (const std::string& file : expandScenarioPaths(paths)) {
    const Scenario scenario = loadScenario(file);
    std::vector<double> spans, walls;
    bool passed = true;
    bool readyOnly = false;
    for (int i = 0; i < repeat; ++i) {
      const RunRecord record = runThreads(scenario, scenario.seed, LaunchOptions{});
      passed = passed && judge::judgeRun(record).passed;
      // The constructor's span; where no rank constructs (not-ready), the runner's "ready" phase.
      auto span = [&](const std::string& phase) {
        std::int64_t first = -1, last = -1;
        for (const RankResult& rank : record.ranks) {
          for (const Event& e : rank.events) {
            if (e.what != phase) continue;
            if (e.kind == EventKind::kPhaseBegin && (first < 0 || e.tNs < first)) first = e.tNs;
            if (e.kind == EventKind::kPhaseEnd && e.tNs > last) last = e.tNs;
          }
        }
        return first >= 0 && last >= first ? (last - first) / 1e6 : -1.0;
      };
      double ms = span("construct");
      if (ms < 0) {
        ms = span("ready");
        readyOnly = true;
      }
      spans.push_back(std::max(ms, 0.0));
      walls.push_back(record.wallNs / 1e6);
    }
    std::sort(spans.begin(), spans.end());
    std::sort(walls.begin(), walls.end());
    worst = std::max(worst, spans.back());
    std::printf("| %s | %d | %s%s | %.2f / %.2f%s | %.2f |\n", scenario.name.c_str(),
                scenario.ranks, toString(scenario.expect.outcome).c_str(),
                passed ? "" : " (FAILED)", spans[spans.size() / 2], spans.back(),
                readyOnly ? " (no constructor: the runner's agreement)" : "",
                walls[walls.size() / 2]);
  }
  std::printf("\nLongest handshake over every run: %.2f ms\n", worst);
  return 0;
}

}  // namespace
}  // namespace peerconf::harness::explore

// Modes of this binary besides the benchmarks (CLI11; anything else goes to Google Benchmark):
//   --write-scenarios DIR: write the 4-rank fault scenarios as files (the list the MPI comparison
//     of explore_bench.sh runs) and exit;
//   --wait-share N [--seed S]: the deadline-wait shares of N generated cases (RESULTS.md);
//   --handshake-times PATH,... [--repeat R]: handshake times of scenario files on the mock.
int main(int argc, char** argv) {
  CLI::App app{"peerconf exploration benchmarks"};
  app.allow_extras();
  std::string writeDir;
  int waitCases = 0;
  std::uint64_t seed = 14;
  std::vector<std::string> handshakePaths;
  int repeat = 20;
  app.add_option("--write-scenarios", writeDir, "Write the 4-rank fault scenarios here and exit");
  app.add_option("--wait-share", waitCases, "Deadline-wait shares over this many generated cases")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--seed", seed, "--wait-share: the generators' seed")->capture_default_str();
  app.add_option("--handshake-times", handshakePaths, "Scenario files or directories to time")
      ->delimiter(',');
  app.add_option("--repeat", repeat, "--handshake-times: runs of each scenario")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!writeDir.empty()) {
    for (const auto& scenario : peerconf::harness::explore::fourRankFaultScenarios()) {
      peerconf::harness::scenario::writeScenarioFile(scenario,
                                                     writeDir + "/" + scenario.name + ".yaml");
    }
    return 0;
  }
  if (waitCases > 0) return peerconf::harness::explore::waitShare(waitCases, seed);
  if (!handshakePaths.empty()) {
    return peerconf::harness::explore::handshakeTimes(handshakePaths, repeat);
  }
  // Google Benchmark's own flags: the program name and what CLI11 left.
  std::vector<std::string> rest = app.remaining();
  std::vector<char*> args{argv[0]};
  for (std::string& arg : rest) args.push_back(arg.data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
