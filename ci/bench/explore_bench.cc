// Exploration throughput: 4-rank fault scenarios per second in thread mode over the mocked HIP
// runtime (launch + checkers + judgement), its parts (validating through the writer and the
// parser, the launch alone), and one exhaustive N = 4 enumeration. ci/bench/explore_bench.sh
// runs it next to the MPI comparison; ci/bench/RESULTS.md keeps the figures.
#include <benchmark/benchmark.h>

#include <sstream>
#include <vector>

#include "checkers/checkers.h"
#include "explore/case_runner.h"
#include "explore/exhaustive.h"
#include "explore/expectation.h"
#include "judge/judgement.h"
#include "launch/launcher.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness::explore {
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

}  // namespace
}  // namespace peerconf::harness::explore

// `--write-scenarios=DIR`: write the 4-rank fault scenarios as files (the list the MPI comparison
// of explore_bench.sh runs) and exit; otherwise the benchmarks, with Google Benchmark's flags.
int main(int argc, char** argv) {
  const std::string flag = "--write-scenarios=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(flag, 0) != 0) continue;
    const std::string dir = arg.substr(flag.size());
    for (const auto& scenario : peerconf::harness::explore::fourRankFaultScenarios()) {
      peerconf::harness::writeScenarioFile(scenario, dir + "/" + scenario.name + ".yaml");
    }
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
