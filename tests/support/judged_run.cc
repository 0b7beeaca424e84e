// Launch and judge, as the suite does.
#include "judged_run.h"

#include <algorithm>
#include <stdexcept>

#include "launch/thread_launcher.h"

namespace peerconf::harness::testing {

const model::Verdict& JudgedRun::verdict(model::Property property) const {
  const auto& verdicts = judgement.verdicts;
  auto it = std::find_if(verdicts.begin(), verdicts.end(),
                         [&](const model::Verdict& v) { return v.property == property; });
  if (it == verdicts.end()) throw std::logic_error("no verdict for " + toString(property));
  return *it;
}

std::string JudgedRun::story() const { return judge::story(record, judgement); }

std::string JudgedRun::failures() const {
  std::string out;
  for (const judge::Failure& failure : judgement.failures) {
    out += failure.title + ": " + failure.summary + "\n";
  }
  return out;
}

JudgedRun runAndJudge(const model::Scenario& scenario, const launch::LaunchOptions& options,
                      bool requireCoverage) {
  JudgedRun run;
  run.record = launch::runThreads(scenario, scenario.seed, options);
  run.record.requireCoverage = requireCoverage;
  run.judgement = judge::judgeRun(run.record);
  return run;
}

}  // namespace peerconf::harness::testing
