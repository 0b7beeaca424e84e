// Suite driver: load and filter scenario files, run each through the chosen launcher, check,
// report, and account for which fault sites fired.
#include "driver/suite.h"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "checkers/checkers.h"
#include "dataplane/runtime_check.h"
#include "judge/judgement.h"
#include "launch/isolation.h"
#include "launch/thread_launcher.h"
#include "model/scenario.h"
#include "mpirun/mpi_launcher.h"
#include "mpirun/supervisor.h"
#include "reports/console.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/trace.h"
#include "scenario/load.h"
#include "scenario/rules.h"

namespace peerconf::harness {

namespace {

bool matches(const std::string& glob, const Scenario& scenario) {
  if (glob.empty()) return true;
  return fnmatch(glob.c_str(), scenario.name.c_str(), 0) == 0 ||
         fnmatch(glob.c_str(), scenario.file.c_str(), 0) == 0;
}

// Why `scenario` does not run on this suite's clock (its `clock:`), or "" when it does.
std::string clockMismatch(const Scenario& scenario, const SuiteOptions& options) {
  if (scenario.clock.empty()) return "";
  const std::string clock = options.launcher == "threads" ? toString(options.clock) : "real";
  if (scenario.clock == clock) return "";
  return "written for --clock " + scenario.clock +
         (options.launcher == "threads" ? "" : " (--launcher threads)");
}

// Loads every scenario; on the first invalid file prints FILE:LINE:COL and returns nothing.
// `skips` (when given) receives each scenario left out for its launchers: name, why.
std::optional<std::vector<Scenario>> loadAll(
    const SuiteOptions& options, std::ostream& err, bool quiet,
    std::vector<std::pair<std::string, std::string>>* skips = nullptr) {
  std::vector<Scenario> scenarios;
  const std::uint64_t stepCap = dataPlaneStepCap();
  bool saidCap = false;
  try {
    for (const auto& path : expandScenarioPaths(options.paths)) {
      Scenario scenario = loadScenario(path);
      if (capDataPlaneSteps(scenario, stepCap) && !quiet && !saidCap) {
        err << "note: data-plane steps capped at " << stepCap
            << " (PEERCONF_MAX_DATAPLANE_STEPS)\n";
        saidCap = true;
      }
      options.cores.check(scenario);
      dataplane::checkDataPlaneRuntime(scenario, options.runtime);
      if (!matches(options.filter, scenario)) continue;
      const auto& only = scenario.launchers;
      if (!only.empty() && std::find(only.begin(), only.end(), options.launcher) == only.end()) {
        if (!quiet) {
          err << "SKIP " << scenario.name << ": written for --launcher " << only.front()
              << (only.size() > 1 ? " (and others)" : "") << "\n";
        }
        if (skips != nullptr) {
          skips->emplace_back(scenario.name, "written for --launcher " + only.front() +
                                                 (only.size() > 1 ? " (and others)" : ""));
        }
        continue;
      }
      const std::string clockSkip = clockMismatch(scenario, options);
      if (!clockSkip.empty()) {
        if (!quiet) err << "SKIP " << scenario.name << ": " << clockSkip << "\n";
        if (skips != nullptr) skips->emplace_back(scenario.name, clockSkip);
        continue;
      }
      scenarios.push_back(std::move(scenario));
    }
  } catch (const std::exception& e) {
    if (!quiet) err << e.what() << "\n";
    return std::nullopt;
  }
  return scenarios;
}

// `peerconf run --launcher mpi` outside mpirun: run the same command under one mpirun.
int execUnderMpirun(int np, std::chrono::milliseconds bound, int argc, char** argv,
                    std::ostream& err) {
  std::vector<std::string> args = {"mpirun",           "-np",
                                   std::to_string(np), "--oversubscribe",
                                   "--timeout",        std::to_string(bound.count() / 1000 + 60)};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    err << "peerconf: cannot find its own executable to start under mpirun\n";
    return 2;
  }
  self[n] = '\0';
  args.emplace_back(self);
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  err << "peerconf: starting one mpirun for the whole list: mpirun -np " << np << " ...\n";
  std::cout.flush();
  execvp("mpirun", raw.data());
  err << "peerconf: could not start mpirun (is openmpi-bin installed?)\n";
  return 2;
}

}  // namespace

int validateFiles(const std::vector<std::string>& paths, std::ostream& out, std::ostream& err,
                  const CoreRegistry& cores, Runtime runtime) {
  std::vector<std::string> files;
  if (!expandScenarioPaths(paths, files, err)) return 2;
  int bad = 0;
  int warned = 0;
  for (const auto& file : files) {
    try {
      const Scenario scenario = loadScenario(file);
      cores.check(scenario);
      dataplane::checkDataPlaneRuntime(scenario, runtime);
      for (const auto& warning : scenario_rules::warnings(scenario)) {
        err << file << ':' << warning.mark.line << ':' << warning.mark.column
            << ": warning: " << warning.message << "\n";
        ++warned;
      }
    } catch (const std::exception& e) {
      err << e.what() << "\n";
      ++bad;
    }
  }
  out << files.size() - static_cast<std::size_t>(bad) << " valid, " << bad << " invalid";
  if (warned > 0) out << ", " << warned << (warned == 1 ? " warning" : " warnings");
  out << "\n";
  return bad == 0 ? 0 : 2;
}

std::uint64_t dataPlaneStepCap() {
  const char* text = std::getenv("PEERCONF_MAX_DATAPLANE_STEPS");
  return text == nullptr ? 0 : std::strtoull(text, nullptr, 10);
}

bool capDataPlaneSteps(Scenario& scenario, std::uint64_t cap) {
  if (cap == 0 || !scenario.dataPlane || scenario.dataPlane->steps <= cap) return false;
  scenario.dataPlane->steps = cap;
  return true;
}

int runSuite(const SuiteOptions& options, int* argc, char*** argv, std::ostream& out,
             std::ostream& err) {
  const bool mpi = options.launcher == "mpi";
  if (options.runtime == Runtime::kGpu && !mpi) {
    err << "peerconf: --runtime gpu needs --launcher mpi (one process and one GPU a rank: CUDA "
           "and HIP cannot open IPC handles within one process)\n";
    return 2;
  }

  const bool signal = options.killMode == "signal";
  if (signal && !mpi) {
    err << "peerconf: --kill-mode signal needs --launcher mpi (threads cannot be killed alone)\n";
    return 2;
  }
  if (!options.runDir.empty() && !underMpirun()) {
    err << "peerconf: --run-dir is set by the supervisor for the ranks it starts under mpirun\n";
    return 2;
  }

  // --kill-mode signal outside mpirun: this process supervises one mpirun after another.
  std::unique_ptr<Supervisor> supervisor;
  if (mpi && !underMpirun()) {
    auto scenarios = loadAll(options, err, false);
    if (!scenarios) return 2;
    int np = 1;
    std::chrono::milliseconds bound{0};
    for (const auto& s : *scenarios) {
      np = std::max(np, s.ranks);
      bound += plannedBound(s) * options.repeat;
    }
    if (options.np > 0) np = options.np;
    if (!signal) return execUnderMpirun(np, bound, *argc, *argv, err);
    SupervisorOptions supervised{np, 0, {*argv + 1, *argv + *argc}, bound};
    for (const auto& s : *scenarios) {
      if (s.ranks <= np) supervised.total += static_cast<std::size_t>(options.repeat);
    }
    supervisor = std::make_unique<Supervisor>(std::move(supervised), err);
  }

  std::unique_ptr<MpiSession> session;
  if (mpi && !supervisor) {
    session = std::make_unique<MpiSession>(argc, argv, options.simulatedNodes);
  }
  // Ranks of a supervised job write files for the supervisor, which reports.
  const bool reporter = (!session || session->rank() == 0) && options.runDir.empty();
  auto finish = [&](int code) { return session ? session->agreeExitCode(code) : code; };

  // A supervisor has loaded (and said what it skips) once already.
  std::vector<std::pair<std::string, std::string>> launcherSkips;
  auto scenarios = loadAll(options, err, !reporter || supervisor != nullptr,
                           reporter ? &launcherSkips : nullptr);
  if (!scenarios) return finish(2);
  if (scenarios->empty()) {
    if (reporter) err << "peerconf: no scenario matched\n";
    return finish(2);
  }

  const std::size_t total = scenarios->size() * static_cast<std::size_t>(options.repeat);
  reports::ConsoleOptions consoleOptions;
  consoleOptions.progress = options.progress || reports::isTerminal(out);
  consoleOptions.total = total;
  reports::ConsoleReport console(out, consoleOptions);
  reports::JUnitReport junit;
  reports::TraceReport trace;
  reports::HtmlOptions htmlOptions;
  for (int i = 0; argc != nullptr && argv != nullptr && i < *argc; ++i) {
    htmlOptions.command += (i == 0 ? "" : " ") + shellQuote(i == 0 ? "peerconf" : (*argv)[i]);
  }
  {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::tm utc{};
    if (gmtime_r(&now, &utc) != nullptr &&
        std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", &utc) > 0) {
      htmlOptions.generated = stamp;
    }
  }
  reports::HtmlReport html(htmlOptions);
  for (const auto& [name, reason] : launcherSkips) html.onSkipped(name, reason);
  std::set<std::string> fired;
  // Faults that may or may not fire (probability < 1): in how many runs each fired, per file.
  struct Chance {
    std::string file;
    std::size_t fault = 0;
    Fault declared;
    int runs = 0;
    int fired = 0;
  };
  std::map<std::pair<std::string, std::size_t>, Chance> chances;
  int skipped = 0;
  LaunchOptions launch{options.runtime};
  if (!mpi) launch.clock = options.clock;  // MPI and GPU runs keep real time
  launch.cores = &options.cores;
  launch.core = options.core;  // the default core: a scenario's `core:` names another

  auto onRecord = [&](const RunRecord& ran) {
    RunRecord record = ran;
    record.requireCoverage = options.requireCoverage;
    fired.insert(record.firedSites.begin(), record.firedSites.end());
    const auto firedFaults = reports::firedFaults(record);
    for (std::size_t i = 0; i < record.scenario.faults.size(); ++i) {
      const Fault& fault = record.scenario.faults[i];
      if (fault.probability >= 1.0) continue;
      Chance& chance = chances[{record.scenario.file, i}];
      chance.file = record.scenario.file;
      chance.fault = i;
      chance.declared = fault;
      chance.runs += 1;
      const bool any = std::any_of(fault.ranks.begin(), fault.ranks.end(), [&](int rank) {
        return firedFaults.count({i, rank}) != 0;
      });
      chance.fired += any ? 1 : 0;
    }
    const auto verdicts = checkers::checkRun(record);
    console.onScenario(record, verdicts);
    if (!options.junit.empty()) junit.onScenario(record, verdicts);
    if (!options.trace.empty()) trace.onScenario(record, verdicts);
    if (!options.html.empty()) html.onScenario(record, verdicts);
  };

  if (session) {
    // One mpirun: every job packed onto TP groups within nodes, several at once.
    std::vector<MpiJob> jobs;
    for (const auto& scenario : *scenarios) {
      for (int rep = 0; rep < options.repeat; ++rep) {
        const std::uint64_t seed =
            options.seed.value_or(scenario.seed) + static_cast<unsigned>(rep);
        if (scenario.ranks > session->largestNode()) {
          if (reporter) {
            out << "SKIP " << scenario.name << ": needs " << scenario.ranks
                << " ranks on one node, the largest node of this run has " << session->largestNode()
                << "\n";
            html.onSkipped(scenario.name, "needs " + std::to_string(scenario.ranks) +
                                              " ranks on one node, the largest node of this run "
                                              "has " +
                                              std::to_string(session->largestNode()));
          }
          ++skipped;
          continue;
        }
        jobs.push_back({&scenario, seed});
      }
    }
    if (reporter && session->nodes() > 1) {
      out << "mpi: " << session->size() << " ranks on " << session->nodes() << " nodes\n";
    }
    if (options.runDir.empty()) {
      session->runAll(jobs, launch,
                      [&](std::size_t, const RunRecord& record) { onRecord(record); });
    } else {
      // Supervised: one scenario a round, each with its files (supervisor.h); the supervisor
      // restarts the list at `first` after a job it had to end.
      for (std::size_t i = options.first; i < jobs.size(); ++i) {
        LaunchOptions item = launch;
        item.signalRunDir = options.runDir;
        item.runIndex = i;
        session->runAll({jobs[i]}, item, [](std::size_t, const RunRecord&) {});
      }
    }
  } else if (supervisor) {
    for (const auto& scenario : *scenarios) {
      for (int rep = 0; rep < options.repeat; ++rep) {
        const std::uint64_t seed =
            options.seed.value_or(scenario.seed) + static_cast<unsigned>(rep);
        if (scenario.ranks > supervisor->np()) {
          out << "SKIP " << scenario.name << ": needs " << scenario.ranks << " ranks, --np is "
              << supervisor->np() << "\n";
          html.onSkipped(scenario.name, "needs " + std::to_string(scenario.ranks) +
                                            " ranks, --np is " + std::to_string(supervisor->np()));
          ++skipped;
          continue;
        }
        onRecord(supervisor->run(scenario, seed, options.runtime));
      }
    }
  } else {
    for (const auto& scenario : *scenarios) {
      for (int rep = 0; rep < options.repeat; ++rep) {
        const std::uint64_t seed =
            options.seed.value_or(scenario.seed) + static_cast<unsigned>(rep);
        // A forked child a run (isolation.h): a crash of the core is this scenario's FAIL.
        onRecord(options.fork ? runInChild(scenario, seed, launch)
                              : runThreads(scenario, seed, launch));
      }
    }
  }

  int code = 0;
  if (reporter) {
    out << "fault sites fired:";
    for (const auto& s : fired) out << " " << s;
    out << "\n";
    // Certain faults are judged per run (a miss fails that scenario: "coverage"); faults left to
    // chance are counted here, over --repeat and seeds, and never fail the suite.
    for (const auto& [key, chance] : chances) {
      const Fault& fault = chance.declared;
      out << "chance: " << chance.file << ":" << fault.mark.line << ":" << fault.mark.column
          << " fault #" << chance.fault << " (" << toString(fault.site) << ", probability "
          << fault.probability << ") fired in " << chance.fired << " of " << chance.runs
          << (chance.runs == 1 ? " run" : " runs") << (chance.fired == 0 ? " (never)" : "") << "\n";
    }
    if (skipped > 0) out << skipped << " skipped (more ranks than this run has)\n";
    console.finish();
    try {
      if (!options.junit.empty()) junit.writeFile(options.junit);
      if (!options.trace.empty()) trace.writeFile(options.trace);
      if (!options.html.empty()) html.writeFile(options.html);
    } catch (const std::exception& e) {
      err << "peerconf: " << e.what() << "\n";
      return finish(2);
    }
    code = console.failed() > 0 ? 1 : 0;
  }
  return finish(code);
}

}  // namespace peerconf::harness
