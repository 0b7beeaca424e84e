// `peerconf run --verdicts FILE`: each run's verdicts as JSON, for a program to compare (the GPU
// nightly sets a GPU run beside a mocked one, ci/divergence.py). The console, JUnit and HTML
// reports are for people; this one has a fixed shape:
//   {"format": "peerconf-verdicts/1", "runtime": "gpu", "launcher": "mpi", "ranks_per_gpu": 16,
//    "runs": [{"file": ..., "name": ..., "seed": 1, "ranks": 2, "passed": false,
//              "properties": {"C1": "pass", ..., "C8": "n/a"},   // pass | fail | n/a
//              "expected_violations": ["C6"],                    // the control's properties
//              "coverage": "pass",                               // pass | fail | n/a
//              "failures": ["C3 cleanup: ..."],                  // judge's, in its order
//              "dataplane_steps": 890, "dataplane_file_steps": 100000}],  // when it has one;
//                                                                // file_steps only when capped
//    "skipped": [{"file": ..., "name": ..., "reason": ...}]}
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "judge/judgement.h"
#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::driver {

class VerdictsReport {
 public:
  // What the whole file ran on: "gpu" | "mock", "threads" | "mpi", --ranks-per-gpu (0: default).
  VerdictsReport(std::string runtime, std::string launcher, int ranksPerGpu);

  // One run, as the judge judged it (judge::judgeRun: its verdicts and its judgement).
  void onScenario(const model::RunRecord& record, const judge::Judgement& judgement);
  // A scenario the run left out (its launcher, clock or runtime, its size, a cap it cannot fit).
  void onSkipped(const std::string& file, const std::string& name, const std::string& reason);
  // `file`'s data plane runs capped, below its own `fileSteps` (said in each of its runs).
  void onCapped(const std::string& file, std::uint64_t fileSteps);

  nlohmann::json json() const;
  // Writes to `path`; throws std::runtime_error naming the path when it cannot.
  void writeFile(const std::string& path) const;

 private:
  std::string runtime_;
  std::string launcher_;
  int ranksPerGpu_ = 0;
  std::map<std::string, std::uint64_t> capped_;  // file -> its own steps
  nlohmann::json runs_ = nlohmann::json::array();
  nlohmann::json skipped_ = nlohmann::json::array();
};

// "pass", "fail", "n/a": coverage of `record`'s certain faults (n/a: none, or not required).
std::string coverageStatus(const model::RunRecord& record);

}  // namespace peerconf::harness::driver
