// `--verdicts FILE` (driver/verdicts.h): each run's properties, coverage and pass/fail as a program
// reads them — a clean run, a control whose expected violation is recorded as such, a run whose
// certain fault never fired (coverage fail), a capped data plane's steps, the skipped scenarios.
#include "driver/verdicts.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "judge/judgement.h"
#include "launch/core_registry.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "planted/registry.h"
#include "scenario/load.h"

namespace peerconf::harness::driver {
namespace {

using model::RunRecord;
using scenario::parseScenario;

RunRecord run(const std::string& yaml) {
  static const launch::CoreRegistry registry = planted::plantedRegistry();
  const model::Scenario scenario = parseScenario(yaml, "dir/inline.yaml");
  registry.check(scenario);
  launch::LaunchOptions options;
  options.cores = &registry;
  options.clock = launch::ClockMode::kSim;
  RunRecord record = launch::runThreads(scenario, scenario.seed, options);
  record.requireCoverage = true;
  return record;
}

TEST(Verdicts, ACleanRunEveryPropertyByName) {
  VerdictsReport report("mock", "threads", 0);
  const RunRecord record =
      run("ranks: 2\nbuffer: 64KiB\ndeadline: 1s\nseed: 7\n"
          "dataplane: {layout: reference, workload: exchange, steps: 40}\n"
          "expect: {outcome: success}\n");
  report.onScenario(record, judge::judgeRun(record));
  const nlohmann::json j = report.json();
  EXPECT_EQ(j["format"], "peerconf-verdicts/1");
  EXPECT_EQ(j["runtime"], "mock");
  EXPECT_EQ(j["launcher"], "threads");
  ASSERT_EQ(j["runs"].size(), 1u);
  const nlohmann::json& r = j["runs"][0];
  EXPECT_EQ(r["file"], "dir/inline.yaml");
  EXPECT_EQ(r["seed"], 7);
  EXPECT_EQ(r["ranks"], 2);
  EXPECT_EQ(r["passed"], true);
  for (const char* property : {"C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"}) {
    ASSERT_TRUE(r["properties"].contains(property)) << property;
    EXPECT_NE(r["properties"][property], "fail") << property;
  }
  EXPECT_EQ(r["properties"]["C6"], "pass");
  EXPECT_EQ(r["coverage"], "n/a") << "no certain fault";
  EXPECT_EQ(r["dataplane_steps"], 40);
  EXPECT_FALSE(r.contains("dataplane_file_steps")) << "not capped";
  EXPECT_TRUE(r["failures"].empty());
}

TEST(Verdicts, AControlRecordsItsFailureAsExpected) {
  VerdictsReport report("mock", "threads", 0);
  const RunRecord record =
      run("ranks: 2\nbuffer: 64KiB\ndeadline: 2s\ncore: closes-mappings-twice\n"
          "faults: [{site: close, rank: 1, peer: 0}]\n"
          "expect: {outcome: success, violations: [{property: C3, finding: \"closed twice\"}]}\n");
  report.onScenario(record, judge::judgeRun(record));
  const nlohmann::json j = report.json();
  const nlohmann::json& r = j["runs"][0];
  EXPECT_EQ(r["properties"]["C3"], "fail");
  EXPECT_EQ(r["expected_violations"], nlohmann::json::array({"C3"}));
  EXPECT_EQ(r["coverage"], "pass");
  EXPECT_EQ(r["passed"], true);
}

TEST(Verdicts, ACertainFaultThatNeverFiredFailsCoverage) {
  VerdictsReport report("gpu", "mpi", 16);
  // The delay is at `close` on rank 1, which the run never reaches: the open of peer 0 fails.
  RunRecord record =
      run("ranks: 2\nbuffer: 64KiB\ndeadline: 1s\n"
          "faults: [{site: open, rank: 1, peer: 0}]\n"
          "expect: {outcome: raise}\n");
  model::Fault never;
  never.site = model::FaultSite::kDelay;
  never.ranks = {0};
  never.at = model::Point::kClose;
  never.delay = std::chrono::milliseconds(1);
  record.scenario.faults.push_back(never);
  report.onScenario(record, judge::judgeRun(record));
  const nlohmann::json j = report.json();
  EXPECT_EQ(j["runtime"], "gpu");
  EXPECT_EQ(j["ranks_per_gpu"], 16);
  const nlohmann::json& r = j["runs"][0];
  EXPECT_EQ(r["coverage"], "fail");
  EXPECT_EQ(r["passed"], false);
  ASSERT_FALSE(r["failures"].empty());
  EXPECT_EQ(r["failures"][0].get<std::string>().rfind("coverage: ", 0), 0u) << r["failures"];
  record.requireCoverage = false;
  EXPECT_EQ(coverageStatus(record), "n/a");
}

TEST(Verdicts, CappedStepsAndSkipsAndTheFile) {
  VerdictsReport report("mock", "mpi", 2);
  report.onCapped("dir/inline.yaml", 100000);
  const RunRecord record =
      run("ranks: 2\nbuffer: 64KiB\ndeadline: 1s\n"
          "dataplane: {layout: reference, workload: exchange, steps: 30}\nexpect: {outcome: "
          "success}\n");
  report.onScenario(record, judge::judgeRun(record));
  report.onSkipped("scenarios/x.yaml", "x", "written for --clock sim");
  const std::string path = ::testing::TempDir() + "verdicts-test.json";
  report.writeFile(path);
  std::ifstream file(path);
  const nlohmann::json j = nlohmann::json::parse(file);
  EXPECT_EQ(j["runs"][0]["dataplane_steps"], 30);
  EXPECT_EQ(j["runs"][0]["dataplane_file_steps"], 100000);
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["file"], "scenarios/x.yaml");
  EXPECT_EQ(j["skipped"][0]["reason"], "written for --clock sim");
  EXPECT_THROW(report.writeFile("/nonexistent-dir/verdicts.json"), std::runtime_error);
}

}  // namespace
}  // namespace peerconf::harness::driver
