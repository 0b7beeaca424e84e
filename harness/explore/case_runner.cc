// CaseRunner: launch, check, judge.
#include "explore/case_runner.h"

#include "checkers/checkers.h"
#include "explore/rank_pool.h"
#include "launcher.h"

namespace peerconf::harness::explore {

std::string CaseRun::failureSummary() const {
  std::string out;
  for (const reports::Failure& failure : judgement.failures) {
    if (!out.empty()) out += "; ";
    out += failure.title + ": " + failure.summary;
  }
  return out;
}

std::vector<const Verdict*> CaseRun::unexpectedFailures() const {
  std::vector<const Verdict*> out;
  for (const Verdict& verdict : verdicts) {
    if (!verdict.acceptable()) out.push_back(&verdict);
  }
  return out;
}

CaseRunner::CaseRunner(CoreFactory core, bool reuseThreads)
    : core_(std::move(core)), pool_(reuseThreads ? std::make_unique<RankPool>() : nullptr) {}

CaseRunner::~CaseRunner() = default;

RunRecord CaseRunner::launch(const Scenario& scenario, std::uint64_t seed) {
  LaunchOptions options;
  options.core = core_;
  return pool_ ? pool_->run(scenario, seed, options) : runThreads(scenario, seed, options);
}

CaseRun CaseRunner::run(const Scenario& scenario, std::uint64_t seed) {
  CaseRun run;
  run.record = launch(scenario, seed);
  run.verdicts = checkers::checkRun(run.record);
  run.judgement = reports::judge(run.record, run.verdicts);
  return run;
}

}  // namespace peerconf::harness::explore
