// Process isolation (harness/isolation.h): a core that crashes fails its scenario, the suite goes
// on and every report is complete. The control is the planted core CrashesOnOpen
// (tests/planted/): SIGSEGV on the last rank's first open, PeerBuffer otherwise.
#include "launch/isolation.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "driver/suite.h"
#include "explore/case_runner.h"
#include "explore/explorer.h"
#include "launch/interrupt.h"
#include "launch/thread_launcher.h"
#include "mock_hip/control.h"
#include "model/core_under_test.h"
#include "model/scenario.h"
#include "planted/crashes_on_open.h"
#include "scenario/load.h"

namespace peerconf::harness {

using driver::runSuite;
using driver::SuiteOptions;
using launch::ChildWorker;
using launch::ClockMode;
using launch::LaunchFunction;
using launch::LaunchOptions;
using launch::runInChild;
using launch::runThreads;
using model::CoreFactory;
using model::coreFactoryOf;
using model::Event;
using model::EventKind;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using scenario::loadScenario;
namespace {

namespace fs = std::filesystem;

CoreFactory crashesOnOpen() { return coreFactoryOf<planted::CrashesOnOpen>(); }

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The /dev/shm segments of the mocked runtime that exist now.
std::set<std::string> segments() {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("peerconf.", 0) == 0) out.insert(name);
  }
  return out;
}

class Isolation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("peerconf_isolation_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "suite");
    // Listed in name order: a passing scenario, the one whose open crashes, two passing after.
    write("a-one-rank.yaml", "ranks: 1\nbuffer: 4KiB\ndeadline: 1s\nexpect: {outcome: success}\n");
    write("b-two-ranks.yaml", "ranks: 2\nbuffer: 4KiB\ndeadline: 1s\nexpect: {outcome: success}\n");
    write("c-one-rank-alloc-fails.yaml",
          "ranks: 1\nbuffer: 4KiB\ndeadline: 1s\n"
          "faults: [{site: alloc, rank: 0}]\n"
          "expect: {outcome: raise, messages: {0: {text: \"alloc failed on rank 0\"}}}\n");
    write("d-one-rank.yaml", "ranks: 1\nbuffer: 64KiB\ndeadline: 1s\nexpect: {outcome: success}\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "suite" / name) << text;
  }

  struct Ran {
    int code = -1;
    std::string out;
    std::string err;
  };
  Ran runSuite(SuiteOptions options) {
    std::ostringstream out;
    std::ostringstream err;
    options.paths = {(dir_ / "suite").string()};
    Ran ran;
    ran.code = harness::driver::runSuite(options, nullptr, nullptr, out, err);
    ran.out = out.str();
    ran.err = err.str();
    return ran;
  }

  fs::path dir_;
};

TEST_F(Isolation, ACrashingCoreFailsItsScenarioAndTheSuiteGoesOn) {
  SuiteOptions options;
  options.core = crashesOnOpen();
  options.junit = (dir_ / "report.xml").string();
  options.trace = (dir_ / "trace.json").string();
  const Ran ran = runSuite(options);
  SCOPED_TRACE(ran.out + ran.err);

  EXPECT_EQ(ran.code, 1);
  // The crash is b's FAIL, naming the signal and every rank's last event.
  EXPECT_NE(ran.out.find("FAIL b-two-ranks"), std::string::npos);
  EXPECT_NE(ran.out.find("killed by SIGSEGV"), std::string::npos);
  EXPECT_TRUE(std::regex_search(ran.out, std::regex("last events: rank 0: [a-z]+ .*; rank 1: ")));
  // The others ran, before and after it, and passed.
  EXPECT_NE(ran.out.find("PASS a-one-rank"), std::string::npos);
  EXPECT_NE(ran.out.find("PASS c-one-rank-alloc-fails"), std::string::npos);
  EXPECT_NE(ran.out.find("PASS d-one-rank"), std::string::npos);
  EXPECT_EQ(count(ran.out, "PASS "), 3u);

  // JUnit: every scenario, one failure (the crash), well-formed and valid against the schema.
  const std::string junit = slurp(options.junit);
  EXPECT_NE(junit.find("tests=\"4\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;
  EXPECT_EQ(count(junit, "<testcase "), 4u) << junit;
  EXPECT_NE(junit.find("SIGSEGV"), std::string::npos) << junit;
  const std::string xmllint = PEERCONF_XMLLINT;
  if (!xmllint.empty()) {
    const std::string schema = std::string(PEERCONF_TEST_DATA_DIR) + "/junit.xsd";
    const std::string valid = xmllint + " --noout --schema " + schema + " " + options.junit;
    EXPECT_EQ(std::system(valid.c_str()), 0) << valid;
  }
  // The trace: valid JSON, with the crashed run's streamed events in it.
  const nlohmann::json trace = nlohmann::json::parse(slurp(options.trace));
  EXPECT_NE(trace.dump().find("b-two-ranks"), std::string::npos);

  // The crashed child left no segment (they are memfds, released with the process): no file in
  // /dev/shm names its pid (other processes may have files of older builds).
  std::smatch pid;
  ASSERT_TRUE(std::regex_search(ran.out, pid, std::regex("process \\(pid ([0-9]+)\\) was killed")));
  for (const auto& name : segments()) {
    EXPECT_EQ(name.find("." + pid[1].str() + "."), std::string::npos) << "left behind: " << name;
  }
}

// An interrupt (launch/interrupt.h) while a worker's child runs a case: the run is abandoned
// (Interrupted, no record), the child killed and reaped; the next run throws at once.
TEST_F(Isolation, AnInterruptEndsTheRunUnderWayAndItsChild) {
  const Scenario one = loadScenario((dir_ / "suite" / "a-one-rank.yaml").string());
  int started[2];
  ASSERT_EQ(::pipe(started), 0);
  const pid_t tester = ::fork();
  ASSERT_GE(tester, 0);
  if (tester == 0) {
    ::close(started[0]);
    launch::catchInterrupts();
    ChildWorker worker(LaunchOptions{}, [&]() -> LaunchFunction {
      return [&](const Scenario&, std::uint64_t, const LaunchOptions&) -> RunRecord {
        const pid_t self = ::getpid();
        (void)!::write(started[1], &self, sizeof self);
        for (;;) ::pause();  // a run that never ends by itself
      };
    });
    int code = 0;
    try {
      (void)worker.run(one, one.seed);
      code = 10;
    } catch (const launch::Interrupted& stop) {
      code = stop.signal == SIGINT ? 0 : 11;
    }
    try {
      (void)worker.run(one, one.seed);
      code = code == 0 ? 12 : code;
    } catch (const launch::Interrupted&) {
    }
    if (code == 0 && worker.childrenStarted() != 1) code = 13;
    ::_exit(code);
  }
  ::close(started[1]);
  pid_t child = -1;
  ASSERT_EQ(::read(started[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(started[0]);
  ASSERT_EQ(::kill(tester, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(tester, &status, 0), tester);
  ASSERT_TRUE(WIFEXITED(status)) << "the interrupted process died of it";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: the run returned, 11: another signal, 12: the next "
                                       "run started, 13: another child started";
  EXPECT_NE(::kill(child, 0), 0) << "the worker's child " << child << " is left";
}

TEST_F(Isolation, TheCrashRecordKeepsEachRanksStreamedEvents) {
  const Scenario scenario = loadScenario((dir_ / "suite" / "b-two-ranks.yaml").string());
  LaunchOptions options;
  options.core = crashesOnOpen();
  const RunRecord record = runInChild(scenario, scenario.seed, options);
  ASSERT_EQ(record.ranks.size(), 2u);
  ASSERT_EQ(record.harnessErrors.size(), 1u);
  EXPECT_NE(record.harnessErrors[0].find("was killed by SIGSEGV (Segmentation fault)"),
            std::string::npos)
      << record.harnessErrors[0];
  for (const RankResult& rank : record.ranks) {
    EXPECT_EQ(rank.status, RankStatus::kMissing);
    // Both ranks called the exchange (its gather returns to neither before both called it)
    // before rank 1's open crashed the process.
    EXPECT_FALSE(rank.events.empty()) << "rank " << rank.rank;
    bool exchanged = false;
    for (const Event& e : rank.events) {
      exchanged |= e.kind == EventKind::kCall && e.what == "allGather";
    }
    EXPECT_TRUE(exchanged) << "rank " << rank.rank;
  }
}

// A crash on simulated time is replayed on simulated time: the record the parent makes of the
// crash names the run's clock (it named real, the record's default), and the suite's reproduce
// line names the planted core that crashed.
TEST_F(Isolation, TheCrashRecordKeepsTheRunsClockAndCore) {
  const Scenario scenario = loadScenario((dir_ / "suite" / "b-two-ranks.yaml").string());
  LaunchOptions options;
  options.core = crashesOnOpen();
  options.clock = ClockMode::kSim;
  const RunRecord record = runInChild(scenario, scenario.seed, options);
  ASSERT_EQ(record.harnessErrors.size(), 1u);
  EXPECT_EQ(record.clock, "sim");
  EXPECT_NE(reproduceCommand(record).find("--clock sim"), std::string::npos);

  SuiteOptions suite;
  suite.core = crashesOnOpen();
  suite.coreName = "crashes-on-open";
  suite.clock = ClockMode::kSim;
  const Ran ran = runSuite(suite);
  EXPECT_NE(ran.out.find("--launcher threads --core crashes-on-open --clock sim"),
            std::string::npos)
      << ran.out;
}

TEST_F(Isolation, TheProductionCorePassesTheSameSuiteForkedAndNot) {
  for (const bool fork : {true, false}) {
    SuiteOptions options;
    options.fork = fork;
    const Ran ran = runSuite(options);
    EXPECT_EQ(ran.code, 0) << "fork " << fork << "\n" << ran.out << ran.err;
    EXPECT_EQ(count(ran.out, "PASS "), 4u) << ran.out;
  }
}

// A child that hangs past the run's bound + slack is killed; one that exits without a record is
// named by its exit status. Both are a record with every rank missing, never a hang or a throw.
TEST_F(Isolation, AChildThatHangsIsKilledAndOneThatExitsIsNamed) {
  const Scenario one = loadScenario((dir_ / "suite" / "a-one-rank.yaml").string());
  const LaunchFunction hangs = [](const Scenario&, std::uint64_t,
                                  const LaunchOptions&) -> RunRecord {
    for (;;) ::pause();  // no signal comes: only the parent's SIGKILL ends it
  };
  const RunRecord hung =
      runInChild(one, one.seed, LaunchOptions{}, hangs, std::chrono::milliseconds(200));
  ASSERT_EQ(hung.harnessErrors.size(), 1u);
  EXPECT_NE(hung.harnessErrors[0].find("did not report within the run's bound + slack"),
            std::string::npos)
      << hung.harnessErrors[0];
  EXPECT_NE(hung.harnessErrors[0].find("killed (SIGKILL)"), std::string::npos);
  EXPECT_EQ(hung.ranks.at(0).status, RankStatus::kMissing);

  const LaunchFunction exits = [](const Scenario&, std::uint64_t,
                                  const LaunchOptions&) -> RunRecord { std::_Exit(7); };
  const RunRecord exited = runInChild(one, one.seed, LaunchOptions{}, exits);
  ASSERT_EQ(exited.harnessErrors.size(), 1u);
  EXPECT_NE(exited.harnessErrors[0].find("exited with status 7 without a record"),
            std::string::npos)
      << exited.harnessErrors[0];
}

// Exploration keeps one child for case after case and replaces it after a crash.
TEST_F(Isolation, AnExplorationWorkerIsReplacedAfterACrashOnly) {
  const Scenario one = loadScenario((dir_ / "suite" / "a-one-rank.yaml").string());
  const Scenario two = loadScenario((dir_ / "suite" / "b-two-ranks.yaml").string());
  LaunchOptions options;
  options.core = crashesOnOpen();
  ChildWorker worker(options, [] { return LaunchFunction(runThreads); });
  for (int i = 0; i < 3; ++i) {
    const RunRecord record = worker.run(one, one.seed);
    EXPECT_TRUE(record.harnessErrors.empty());
    EXPECT_EQ(record.ranks.at(0).status, RankStatus::kOk);
  }
  EXPECT_EQ(worker.childrenStarted(), 1);
  const RunRecord crashed = worker.run(two, two.seed);
  ASSERT_EQ(crashed.harnessErrors.size(), 1u);
  EXPECT_NE(crashed.harnessErrors[0].find("SIGSEGV"), std::string::npos);
  const RunRecord after = worker.run(one, one.seed);
  EXPECT_EQ(after.ranks.at(0).status, RankStatus::kOk);
  EXPECT_EQ(worker.childrenStarted(), 2);
}

// The ring the child streams into keeps the newest events when a long run fills it, and a
// crash in the middle of that leaves whole events only: 200 000 events of ~100 bytes (about
// 20 MiB, the ring holds 8 MiB), then SIGSEGV.
TEST_F(Isolation, AFullRingKeepsTheNewestWholeEvents) {
  const Scenario one = loadScenario((dir_ / "suite" / "a-one-rank.yaml").string());
  constexpr int kEvents = 200'000;
  const LaunchFunction floods = [](const Scenario&, std::uint64_t,
                                   const LaunchOptions& options) -> RunRecord {
    for (int i = 0; i < kEvents; ++i) {
      options.eventSink(Event{i, 0, EventKind::kFault, "call" + std::to_string(i), i % 5,
                              std::string(80, static_cast<char>('a' + i % 26)), i % 7});
    }
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    std::abort();
  };
  const RunRecord record = runInChild(one, one.seed, LaunchOptions{}, floods);
  ASSERT_EQ(record.harnessErrors.size(), 1u);
  EXPECT_NE(record.harnessErrors[0].find("SIGSEGV"), std::string::npos);
  const std::vector<Event>& events = record.ranks.at(0).events;
  ASSERT_GT(events.size(), 10'000u);
  ASSERT_LT(events.size(), static_cast<std::size_t>(kEvents));
  // The newest ones, in order, none missing between, none torn.
  EXPECT_EQ(events.back().what, "call" + std::to_string(kEvents - 1));
  const auto first = static_cast<int>(kEvents - events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    const int n = first + static_cast<int>(i);
    ASSERT_EQ(events[i].tNs, n);
    ASSERT_EQ(events[i].what, "call" + std::to_string(n));
    ASSERT_EQ(events[i].detail, std::string(80, static_cast<char>('a' + n % 26)));
    ASSERT_EQ(events[i].kind, EventKind::kFault);
    ASSERT_EQ(events[i].peer, n % 5);
    ASSERT_EQ(events[i].fault, n % 7);
  }
}

// The search treats a crash as a failing case: it shrinks it (to two ranks: one rank never
// opens) and writes it, and the search itself survives.
TEST_F(Isolation, TheSearchFindsAndShrinksACrashingCore) {
  explore::ExploreOptions options;
  options.cases = 100;
  options.seed = 20240611;
  options.outDir = (dir_ / "explore").string();
  options.core = crashesOnOpen();
  options.coreName = "crashes-on-open";
  options.recheckFraction = 0;
  options.generator.maxRanks = 4;
  std::ostringstream log;
  const explore::ExploreResult result = explore::explore(options, log);
  ASSERT_TRUE(result.failure.has_value()) << log.str();
  EXPECT_NE(result.failure->summary.find("SIGSEGV"), std::string::npos) << result.failure->summary;
  EXPECT_EQ(result.failure->scenario.ranks, 2) << result.failure->text;
  EXPECT_TRUE(result.failure->reproduced) << log.str();
}

// The control of the control: without the fork the planted core does take the process down.
TEST_F(Isolation, WithoutTheForkThePlantedCoreKillsTheProcess) {
  const Scenario two = loadScenario((dir_ / "suite" / "b-two-ranks.yaml").string());
  // The death test's child allocates under a job of its own: nothing of that job is left after it.
  const std::uint64_t job = mock_hip::job();
  const std::uint64_t childJob = job ^ 0x5eed5eed5eed5eedULL;
  mock_hip::setJob(childJob);
  EXPECT_EXIT(
      {
        LaunchOptions options;
        options.core = crashesOnOpen();
        runThreads(two, two.seed, options);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
  mock_hip::setJob(job);
  char prefix[40];
  std::snprintf(prefix, sizeof prefix, "peerconf.%016llx.",
                static_cast<unsigned long long>(childJob));
  for (const auto& name : segments()) {
    EXPECT_FALSE(name.starts_with(prefix)) << "left behind: " << name;
  }
  EXPECT_EQ(mock_hip::sweepStaleSegments(childJob), 0u) << "there was nothing to sweep";
}

}  // namespace
}  // namespace peerconf::harness
