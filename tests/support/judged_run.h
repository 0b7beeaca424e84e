// A scenario run on threads and judged the way `peerconf run` judges it (judge::judgeRun: the
// checkers, the oracle's differences of the file, the rules): the one helper of the tests that
// launch a scenario and read its judgement.
#pragma once

#include <string>

#include "judge/judgement.h"
#include "launch/launcher.h"
#include "model/run_record.h"
#include "model/scenario.h"
#include "model/verdict.h"

namespace peerconf::harness::testing {

struct JudgedRun {
  model::RunRecord record;
  judge::Judgement judgement;

  bool passed() const { return judgement.passed; }
  // The checkers' verdict on `property`; throws std::logic_error when none ran.
  const model::Verdict& verdict(model::Property property) const;
  // Everything the harness said (judge::story), for failure messages.
  std::string story() const;
  // "title: summary", a line each failure.
  std::string failures() const;
};

// Runs `scenario` with its own seed on threads (launch::runThreads with `options`) and judges it;
// `requireCoverage` as `peerconf run` sets it (on by default there, `--no-coverage`).
JudgedRun runAndJudge(const model::Scenario& scenario, const launch::LaunchOptions& options = {},
                      bool requireCoverage = false);

}  // namespace peerconf::harness::testing
