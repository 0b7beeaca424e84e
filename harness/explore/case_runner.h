// CaseRunner: one scenario through the thread launcher, the checkers and the judgement — the
// unit of work of every exploration mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "judge/judgement.h"
#include "launch/isolation.h"
#include "launch/launcher.h"
#include "launch/rank_pool.h"
#include "model/core_under_test.h"
#include "model/run_record.h"
#include "model/scenario.h"
#include "model/verdict.h"

namespace peerconf::harness::explore {

struct CaseRun {
  model::RunRecord record;
  judge::Judgement judgement;  // judge::judgeRun's, with the checkers' verdicts

  bool passed() const { return judgement.passed; }
  // "C1 uniform outcome: mixed outcome: 1 ok, 1 raised [rank 1: ok (expected to raise)]; ..."
  std::string failureSummary() const;
  // The verdicts that failed and were not expected to (what a finding is about).
  std::vector<const model::Verdict*> unexpectedFailures() const;
};

// Runs cases one after another in this process (the mocked HIP runtime's ledgers are
// process-wide, so two runs must not overlap). Ranks run as threads over the mocked runtime,
// exactly as runThreads runs them; with `reuseThreads` the rank threads are kept between cases
// (launch::RankPool) instead of being started and joined for each one. With `isolate` the cases run
// in a child process (isolation.h: one child for case after case, replaced after a case that
// crashed it), so that a core that crashes is a failing case, not a crashed search.
class CaseRunner {
 public:
  // `clock`: the cases' clock (real, or simulated time with the interleaving drawn from each
  // case's seed); `engine`: what runs the ranks on simulated time (launch/launcher.h).
  explicit CaseRunner(model::CoreFactory core = model::productionCore(), bool reuseThreads = true,
                      bool isolate = false, launch::ClockMode clock = launch::ClockMode::kReal,
                      launch::Engine engine = launch::Engine::kFibers);
  ~CaseRunner();
  CaseRunner(const CaseRunner&) = delete;
  CaseRunner& operator=(const CaseRunner&) = delete;

  CaseRun run(const model::Scenario& scenario, std::uint64_t seed);
  // The launcher alone (no checkers): for determinism re-runs.
  model::RunRecord launch(const model::Scenario& scenario, std::uint64_t seed);

  // Where the runs' wall time went so far (the bench's breakdown, explore --breakdown): each
  // launch's phases (launch::RunPhases: setup, the ranks, the record's way back) and the
  // judgements (checkers). `setupNs` also takes what a caller adds (addSetup: generating a case).
  struct Breakdown {
    std::int64_t setupNs = 0;
    std::int64_t runNs = 0;
    std::int64_t checkersNs = 0;
    std::int64_t recordNs = 0;
    int launches = 0;
  };
  const Breakdown& breakdown() const noexcept { return breakdown_; }
  void addSetup(std::int64_t ns) noexcept { breakdown_.setupNs += ns; }

 private:
  Breakdown breakdown_;
  model::CoreFactory core_;
  launch::ClockMode clock_;
  launch::Engine engine_;
  std::unique_ptr<launch::RankPool> pool_;
  std::unique_ptr<launch::ChildWorker> child_;
};

}  // namespace peerconf::harness::explore
