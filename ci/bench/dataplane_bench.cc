// The data plane's benchmark: steps per second of the reference layout's workloads on the host
// driver (ranks as threads over host memory, every in-band check on), the bare protocol, and one
// clean run of 10^6 steps whose history is replayed by the C6/C7 checkers. ci/bench/RESULTS.md
// keeps the figures, the machine and the command.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane/driver.h"
#include "dataplane_test_support.h"
#include "layout/exchange.h"
#include "layout/host_mem_ops.h"
#include "layout/protocol.h"
#include "model/run_record.h"
#include "thread/run_ranks.h"

namespace peerconf::harness::dataplane {

using checkers::checkBoundedWithDataPlane;
using model::DataplaneOutcome;
using model::makeLayout;
using model::Result;
using model::RunRecord;
using model::Spec;
using model::Verdict;
using model::Workload;
namespace {

using namespace std::chrono_literals;

struct Memory {
  Memory(const layout::Layout& layout, int ranks)
      : words(layout.words()), storage(static_cast<std::size_t>(ranks)) {
    std::mt19937_64 random(7);
    for (auto& buffer : storage) {
      buffer.resize(words);
      for (auto& w : buffer) w = random();  // never zeroed
      pointers.push_back(buffer.data());
    }
  }
  std::size_t words;
  std::vector<std::vector<layout::Word>> storage;
  std::vector<layout::Word*> pointers;
};

std::vector<Result> runDriver(const Spec& spec, int ranks) {
  const layout::Layout shape = makeLayout(spec, ranks);
  Memory memory(shape, ranks);
  std::vector<Result> results(static_cast<std::size_t>(ranks));
  const auto outcomes = thread::runRanks(ranks, 60s, [&](int rank, Group& group) {
    RankMemory view{rank, memory.pointers, memory.words * sizeof(layout::Word)};
    results[static_cast<std::size_t>(rank)] = runRank(spec, view, &group, 10s);
  });
  for (const auto& o : outcomes) {
    if (!o.ok()) throw std::runtime_error(o.message);
  }
  return results;
}

// Steps of the host driver per second: what a scenario's data plane costs.
void driverSteps(benchmark::State& state, Workload workload) {
  const int ranks = static_cast<int>(state.range(0));
  Spec spec;
  spec.workload = workload;
  spec.steps = static_cast<std::uint64_t>(state.range(1));
  spec.history = 0;
  std::uint64_t steps = 0;
  std::uint64_t problems = 0;
  for (auto _ : state) {
    for (const Result& r : runDriver(spec, ranks)) {
      problems +=
          r.overwrites + r.stale + r.wrongResults + (r.outcome != DataplaneOutcome::kCompleted);
    }
    steps += spec.steps;
  }
  if (problems > 0) state.SkipWithError("the reference layout reported a problem");
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  // Seconds per step (shown with an SI prefix: 1.2u = 1.2 us).
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_ExchangeDriver(benchmark::State& state) { driverSteps(state, Workload::kExchange); }
void BM_AllReduceDriver(benchmark::State& state) { driverSteps(state, Workload::kAllReduce); }

BENCHMARK(BM_ExchangeDriver)
    ->ArgNames({"ranks", "steps"})
    ->Args({2, 200000})
    ->Args({4, 20000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_AllReduceDriver)
    ->ArgNames({"ranks", "steps"})
    ->Args({2, 200000})
    ->Args({4, 20000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The bare protocol (no recorder, no driver): two threads exchanging pairs, HostMemOps.
void BM_ExchangeProtocol(benchmark::State& state) {
  layout::Layout shape;
  shape.ranks = 2;
  Memory memory(shape, 2);
  const std::uint64_t steps = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t total = 0;
  std::uint64_t bad = 0;
  std::uint32_t generation = 1;
  for (auto _ : state) {
    ++generation;  // a fresh buffer generation each round: the memory holds the last one's tags
    std::atomic<std::uint64_t> genuine{0};
    auto rank = [&](int r) {
      layout::NullObserver observer;
      layout::Protocol<layout::HostMemOps> p(shape, r, generation, memory.pointers.data(),
                                             10'000'000'000ULL, observer);
      layout::Tally tally;
      for (std::uint64_t step = 0; step < steps; ++step) {
        const auto epoch = static_cast<std::uint32_t>(step);
        if (!layout::Exchange<layout::HostMemOps>::pushPhase(p, step, epoch).ok()) break;
        if (!layout::Exchange<layout::HostMemOps>::readPhase(p, step, epoch, tally).ok()) break;
      }
      genuine += tally.genuine;
    };
    std::thread other(rank, 1);
    rank(0);
    other.join();
    bad += 2 * steps - genuine.load();
    total += steps;
  }
  if (bad > 0) state.SkipWithError("pairs failed their checks");
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ExchangeProtocol)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The evidence for "the reference layout runs clean over at least 10^6 steps": every step's
// pairs checked in-band, the first `history` steps replayed by the C6 and C7 checkers.
void cleanMillion(benchmark::State& state, Workload workload) {
  const int ranks = static_cast<int>(state.range(0));
  Spec spec;
  spec.workload = workload;
  spec.steps = 1000000;
  spec.history = static_cast<std::uint64_t>(state.range(1));
  spec.startEpoch = 0xfff80000u;  // the epoch field wraps at step 524288
  for (auto _ : state) {
    const auto results = runDriver(spec, ranks);
    state.PauseTiming();
    std::uint64_t genuine = 0;
    std::uint64_t pairs = 0;
    std::uint64_t steps = 0;
    std::uint64_t problems = 0;
    for (const Result& r : results) {
      genuine += r.pairsGenuine;
      pairs += r.pairsRead;
      steps = std::max(steps, r.stepsDone);
      problems +=
          r.overwrites + r.stale + r.wrongResults + (r.outcome != DataplaneOutcome::kCompleted);
    }
    const RunRecord record = testing::recordOf(results);
    const Verdict c6 = checkers::checkNoOverwrite(record);
    const Verdict c7 = checkers::checkNoStale(record);
    const Verdict c8 = checkBoundedWithDataPlane(record);
    state.counters["steps"] = static_cast<double>(steps);
    state.counters["pairs"] = static_cast<double>(pairs);
    state.counters["genuine"] = static_cast<double>(genuine);
    state.counters["inband_problems"] = static_cast<double>(problems);
    state.counters["C6_pass"] = c6.status == Verdict::Status::kPass ? 1 : 0;
    state.counters["C7_pass"] = c7.status == Verdict::Status::kPass ? 1 : 0;
    state.counters["C8_pass"] = c8.status == Verdict::Status::kPass ? 1 : 0;
    if (problems > 0 || genuine != pairs || steps != spec.steps || c6.failed() || c7.failed() ||
        c8.failed()) {
      state.SkipWithError(("not clean: " + c6.summary + " / " + c7.summary).c_str());
    }
    state.ResumeTiming();
  }
}

void BM_ReferenceCleanMillionExchange(benchmark::State& state) {
  cleanMillion(state, Workload::kExchange);
}
void BM_ReferenceCleanMillionAllReduce(benchmark::State& state) {
  cleanMillion(state, Workload::kAllReduce);
}
BENCHMARK(BM_ReferenceCleanMillionExchange)
    ->ArgNames({"ranks", "history"})
    ->Args({2, 100000})
    ->Args({4, 20000})
    ->Args({8, 5000})  // needs 8 idle cores; filter it out on small machines
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
BENCHMARK(BM_ReferenceCleanMillionAllReduce)
    ->ArgNames({"ranks", "history"})
    ->Args({2, 100000})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
}  // namespace peerconf::harness::dataplane

BENCHMARK_MAIN();
