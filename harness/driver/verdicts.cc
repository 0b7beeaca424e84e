// `--verdicts FILE`: each run's verdicts per property, coverage and pass/fail as JSON (verdicts.h).
#include "driver/verdicts.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "judge/judgement.h"
#include "model/record_json.h"

namespace peerconf::harness::driver {

using model::kPropertyNames;
using model::kVerdictStatusNames;
using model::RunRecord;
using model::Verdict;

VerdictsReport::VerdictsReport(std::string runtime, std::string launcher, int ranksPerGpu)
    : runtime_(std::move(runtime)), launcher_(std::move(launcher)), ranksPerGpu_(ranksPerGpu) {}

std::string coverageStatus(const RunRecord& record) {
  const auto& faults = record.scenario.faults;
  const bool certain = std::any_of(faults.begin(), faults.end(),
                                   [](const auto& fault) { return fault.probability >= 1.0; });
  if (!record.requireCoverage || !certain) return "n/a";
  return judge::coverageMisses(record).empty() ? "pass" : "fail";
}

void VerdictsReport::onScenario(const RunRecord& record, const judge::Judgement& judgement) {
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json expected = nlohmann::json::array();
  nlohmann::json may = nlohmann::json::array();  // `appear: may`: it may fail, or pass
  for (const Verdict& verdict : judgement.verdicts) {
    const std::string name(kPropertyNames.name(verdict.property));
    properties[name] = std::string(kVerdictStatusNames.name(verdict.status));
    if (verdict.expectedViolation) expected.push_back(name);
    if (verdict.mayFail) may.push_back(name);
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const judge::Failure& failure : judgement.failures) {
    failures.push_back(failure.title + ": " + failure.summary);
  }
  nlohmann::json run = {{"file", record.scenario.file},
                        {"name", record.scenario.name},
                        {"seed", record.seed},
                        {"ranks", record.scenario.ranks},
                        {"passed", judgement.passed},
                        {"properties", std::move(properties)},
                        {"expected_violations", std::move(expected)},
                        {"may_violations", std::move(may)},
                        {"coverage", coverageStatus(record)},
                        {"failures", std::move(failures)}};
  if (record.scenario.dataPlane) {
    run["dataplane_steps"] = record.scenario.dataPlane->steps;
    const auto it = capped_.find(record.scenario.file);
    if (it != capped_.end()) run["dataplane_file_steps"] = it->second;
  }
  runs_.push_back(std::move(run));
}

void VerdictsReport::onSkipped(const std::string& file, const std::string& name,
                               const std::string& reason) {
  skipped_.push_back({{"file", file}, {"name", name}, {"reason", reason}});
}

void VerdictsReport::onCapped(const std::string& file, std::uint64_t fileSteps) {
  capped_[file] = fileSteps;
}

nlohmann::json VerdictsReport::json() const {
  return {{"format", "peerconf-verdicts/1"}, {"runtime", runtime_}, {"launcher", launcher_},
          {"ranks_per_gpu", ranksPerGpu_},   {"runs", runs_},       {"skipped", skipped_}};
}

void VerdictsReport::writeFile(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write the verdicts to " + path);
  file << model::dumpJson(json(), 1) << '\n';
  file.flush();
  if (!file) throw std::runtime_error("failed while writing the verdicts to " + path);
}

}  // namespace peerconf::harness::driver
