// CaseRunner: launch, check, judge.
#include "explore/case_runner.h"

#include <chrono>

#include "launch/isolation.h"
#include "launch/launcher.h"
#include "launch/rank_pool.h"
#include "launch/thread_launcher.h"

namespace peerconf::harness::explore {

using launch::ChildWorker;
using launch::ClockMode;
using launch::LaunchFunction;
using launch::LaunchOptions;
using launch::RankPool;
using launch::runThreads;
using model::CoreFactory;
using model::RunRecord;
using model::Scenario;
using model::Verdict;

std::string CaseRun::failureSummary() const {
  std::string out;
  for (const judge::Failure& failure : judgement.failures) {
    if (!out.empty()) out += "; ";
    out += failure.title + ": " + failure.summary;
  }
  return out;
}

std::vector<const Verdict*> CaseRun::unexpectedFailures() const {
  std::vector<const Verdict*> out;
  for (const Verdict& verdict : judgement.verdicts) {
    if (!verdict.acceptable()) out.push_back(&verdict);
  }
  return out;
}

CaseRunner::CaseRunner(CoreFactory core, bool reuseThreads, bool isolate, ClockMode clock,
                       launch::Engine engine)
    : core_(std::move(core)), clock_(clock), engine_(engine) {
  if (!isolate) {
    if (reuseThreads) pool_ = std::make_unique<RankPool>();
    return;
  }
  LaunchOptions options;
  options.core = core_;
  options.clock = clock_;
  options.engine = engine_;
  // The pool (its threads) is built in the child, after the fork.
  child_ = std::make_unique<ChildWorker>(options, [reuseThreads]() -> LaunchFunction {
    if (!reuseThreads) return runThreads;
    auto pool = std::make_shared<RankPool>();
    return [pool](const Scenario& scenario, std::uint64_t seed, const LaunchOptions& launch) {
      return pool->run(scenario, seed, launch);
    };
  });
}

CaseRunner::~CaseRunner() = default;

RunRecord CaseRunner::launch(const Scenario& scenario, std::uint64_t seed) {
  LaunchOptions options;
  options.core = core_;
  options.clock = clock_;
  options.engine = engine_;
  RunRecord record = child_  ? child_->run(scenario, seed)
                     : pool_ ? pool_->run(scenario, seed, options)
                             : runThreads(scenario, seed, options);
  const launch::RunPhases phases = launch::lastRunPhases();
  breakdown_.setupNs += phases.setupNs;
  breakdown_.runNs += phases.runNs;
  breakdown_.recordNs += phases.recordNs;
  ++breakdown_.launches;
  return record;
}

CaseRun CaseRunner::run(const Scenario& scenario, std::uint64_t seed) {
  CaseRun run;
  run.record = launch(scenario, seed);
  const auto judging = std::chrono::steady_clock::now();
  run.judgement = judge::judgeRun(run.record);
  breakdown_.checkersNs += std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - judging)
                               .count();
  return run;
}

}  // namespace peerconf::harness::explore
