// Suite driver: load and filter scenario files, run each through the chosen launcher, check,
// report, and account for which fault sites fired.
#include "driver/suite.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dataplane/engine_check.h"
#include "dataplane/runtime_check.h"
#include "driver/verdicts.h"
#include "expectation/compare.h"
#include "judge/judgement.h"
#include "launch/interrupt.h"
#include "launch/isolation.h"
#include "launch/thread_launcher.h"
#include "model/scenario.h"
#include "mpirun/mpi_launcher.h"
#include "mpirun/mpirun_child.h"
#include "mpirun/supervisor.h"
#include "reports/console.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/trace.h"
#include "scenario/load.h"
#include "scenario/refusal.h"
#include "scenario/rules.h"

namespace peerconf::harness::driver {

using launch::ChildWorker;
using launch::CoreRegistry;
using launch::LaunchFunction;
using launch::LaunchOptions;
using launch::runThreads;
using launch::Runtime;
using model::Fault;
using model::plannedBound;
using model::RunRecord;
using model::Scenario;
using model::shellQuote;
using model::toString;
using mpirun::MpiJob;
using mpirun::MpiSession;
using mpirun::Supervisor;
using mpirun::SupervisorOptions;
using mpirun::underMpirun;
using scenario::expandScenarioPaths;
using scenario::loadScenario;

namespace {

bool matches(const std::string& glob, const Scenario& scenario) {
  if (glob.empty()) return true;
  return fnmatch(glob.c_str(), scenario.name.c_str(), 0) == 0 ||
         fnmatch(glob.c_str(), scenario.file.c_str(), 0) == 0;
}

// Why `scenario` does not run on this suite's launcher (its `launchers:`), or "" when it does.
std::string launcherMismatch(const Scenario& scenario, const SuiteOptions& options) {
  if (scenario.ranksPerGpu > 0 && options.launcher != "threads") {
    return "sets ranks_per_gpu: mocked GPUs shared by the ranks of one process (--launcher "
           "threads)";
  }
  const auto& only = scenario.launchers;
  if (only.empty() || std::find(only.begin(), only.end(), options.launcher) != only.end()) {
    return "";
  }
  return "written for --launcher " + only.front() + (only.size() > 1 ? " (and others)" : "");
}

// Why `scenario` does not run on this suite's clock (its `clock:`), or "" when it does.
std::string clockMismatch(const Scenario& scenario, const SuiteOptions& options) {
  if (scenario.clock.empty()) return "";
  const std::string clock = options.launcher == "threads" ? toString(options.clock) : "real";
  if (scenario.clock == clock) return "";
  return "written for --clock " + scenario.clock +
         (options.launcher == "threads" ? "" : " (--launcher threads)");
}

// Why `scenario` does not run on this suite's runtime (its `device_memory:` is the mocked
// runtime's), or "" when it does.
std::string runtimeMismatch(const Scenario& scenario, const SuiteOptions& options) {
  if (options.runtime == Runtime::kGpu) {
    // With a data plane per buffer, each buffer's (its kernels run over that registration's
    // peers, run_data_plane.cc, as the one buffer's do).
    const std::string why = dataplane::gpuSkipReason(scenario);
    if (!why.empty()) return "data plane: " + why;
  }
  if (scenario.deviceMemory.empty() || options.runtime == Runtime::kMock) return "";
  return "sets device_memory, which only the mocked runtime has (--runtime mock)";
}

// A scenario left out before the list runs, and why.
struct Skip {
  std::string file;
  std::string name;
  std::string reason;
};

// What set a step cap, for the lines that say it: "set by PEERCONF_MAX_DATAPLANE_STEPS=N",
// "set by PEERCONF_SLICED_STEP_RATE=445 (GPUS=1, SECONDS=2)".
std::string stepCapSource(const model::StepCapOptions& cap) {
  std::string source;
  if (cap.maxSteps > 0) source = "PEERCONF_MAX_DATAPLANE_STEPS=" + std::to_string(cap.maxSteps);
  if (cap.slicedRate > 0) {
    std::ostringstream sliced;
    sliced << "PEERCONF_SLICED_STEP_RATE=" << cap.slicedRate << " (GPUS=" << cap.slicedGpus
           << ", SECONDS=" << static_cast<double>(cap.slicedTarget.count()) / 1000 << ")";
    source += (source.empty() ? "" : ", ") + sliced.str();
  }
  return "set by " + source;
}

// A file whose outcome the draw of its chance faults decides says so (`outcome: as-drawn`):
// refused at load like any invalid file, at its outcome (expectation::outcomeDependsOnDraw).
void checkOutcomeDraw(const Scenario& scenario) {
  const expectation::Derivation derived = expectation::derivation(scenario);
  if (!derived.notDerived.empty()) return;
  const std::string why = expectation::outcomeDependsOnDraw(scenario, derived.draws);
  if (!why.empty()) throw model::ScenarioError(scenario.file, scenario.expect.marks.outcome, why);
}

// Loads every scenario; on the first invalid file prints FILE:LINE:COL and returns nothing.
// `skips` (when given) receives each scenario left out for its launchers, clock, runtime or a
// step cap it cannot fit; `capped` (when given) each file whose data plane runs capped, with its
// own steps (a "CAP FILE: ..." line says so on `err`).
std::optional<std::vector<Scenario>> loadAll(
    const SuiteOptions& options, std::ostream& err, bool quiet, std::vector<Skip>* skips = nullptr,
    std::map<std::string, std::uint64_t>* capped = nullptr) {
  std::vector<Scenario> scenarios;
  const model::StepCapOptions stepCap = dataPlaneStepCap();
  try {
    for (const auto& path : expandScenarioPaths(options.paths)) {
      Scenario scenario = loadScenario(path);
      const model::StepCap cap = capDataPlaneSteps(scenario, stepCap);
      options.cores.check(scenario);
      dataplane::checkDataPlaneRuntime(scenario, options.runtime);
      checkOutcomeDraw(scenario);
      if (!matches(options.filter, scenario)) continue;
      std::string skip = launcherMismatch(scenario, options);
      if (skip.empty()) skip = clockMismatch(scenario, options);
      if (skip.empty()) skip = runtimeMismatch(scenario, options);
      if (skip.empty() && cap.result == model::StepCap::Result::kSkipped) {
        skip = "data plane: " + cap.why + "; " + stepCapSource(stepCap);
      }
      if (!skip.empty()) {
        if (!quiet) err << "SKIP " << scenario.name << ": " << skip << "\n";
        if (skips != nullptr) skips->push_back({scenario.file, scenario.name, skip});
        continue;
      }
      if (cap.result == model::StepCap::Result::kCapped) {
        if (!quiet) {
          err << "CAP " << scenario.file << ": " << cap.why << "; " << stepCapSource(stepCap)
              << "\n";
        }
        if (capped != nullptr) (*capped)[scenario.file] = cap.fileSteps;
      }
      scenarios.push_back(std::move(scenario));
    }
  } catch (const std::exception& e) {
    if (!quiet) err << e.what() << "\n";
    return std::nullopt;
  }
  return scenarios;
}

// `peerconf run --launcher mpi` outside mpirun: run the same command under one mpirun, a child of
// this process (mpirun_child.h: an interrupt reaches the ranks, which stop after their round).
int runUnderMpirun(int np, std::chrono::milliseconds bound, int argc, char** argv,
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
  err << "peerconf: starting one mpirun for the whole list: mpirun -np " << np << " ...\n";
  return mpirun::runMpirunChild(args, err);
}

// Writes a report through a temporary name beside `path`, so that `path` is whole or absent: a
// second interrupt (interrupt.h) removes the temporary file and leaves no half-written report.
// A path that is there and not a regular file (a pipe, /dev/stdout) is written as it is.
template <typename Report>
void writeWhole(const Report& report, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return report.writeFile(path);
  const std::string partial = path + ".partial." + std::to_string(::getpid());
  launch::holdPath(partial);
  try {
    report.writeFile(partial);
  } catch (...) {
    ::unlink(partial.c_str());
    launch::releasePath(partial);
    throw;
  }
  const bool renamed = ::rename(partial.c_str(), path.c_str()) == 0;
  if (!renamed) ::unlink(partial.c_str());
  launch::releasePath(partial);
  if (!renamed) throw std::runtime_error("cannot write " + path);
}

// `peerconf run --launcher mpi` outside mpirun: how many ranks to start (the most a scenario needs,
// or --np) and how long the whole list may take (every run's bound).
struct MpirunSize {
  int np = 1;
  std::chrono::milliseconds bound{0};
};

MpirunSize mpirunSize(const std::vector<Scenario>& scenarios, const SuiteOptions& options) {
  MpirunSize size;
  for (const auto& s : scenarios) {
    size.np = std::max(size.np, s.ranks);
    size.bound += plannedBound(s) * options.repeat;
  }
  if (options.np > 0) size.np = options.np;
  return size;
}

// Options that contradict each other; prints why and returns true.
bool rejectOptions(const SuiteOptions& options, bool mpi, bool signal, std::ostream& err) {
  if (options.runtime == Runtime::kGpu && !mpi) {
    err << "peerconf: --runtime gpu needs --launcher mpi (one process and one GPU a rank: CUDA "
           "and HIP cannot open IPC handles within one process)\n";
    return true;
  }
  if (signal && !mpi) {
    err << "peerconf: --kill-mode signal needs --launcher mpi (threads cannot be killed alone)\n";
    return true;
  }
  if (!options.runDir.empty() && !underMpirun()) {
    err << "peerconf: --run-dir is set by the supervisor for the ranks it starts under mpirun\n";
    return true;
  }
  return false;
}

// The HTML report's header: the command that made it and when (UTC).
reports::HtmlOptions htmlHeader(int* argc, char*** argv) {
  reports::HtmlOptions htmlOptions;
  htmlOptions.title = model::programName() + " report";  // the team's executable, as it ran
  for (int i = 0; argc != nullptr && argv != nullptr && i < *argc; ++i) {
    htmlOptions.command +=
        (i == 0 ? "" : " ") + shellQuote(i == 0 ? model::programName() : (*argv)[i]);
  }
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::tm utc{};
  if (gmtime_r(&now, &utc) != nullptr &&
      std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", &utc) > 0) {
    htmlOptions.generated = stamp;
  }
  return htmlOptions;
}

// One `peerconf run` once its list is loaded: runs it one of three ways (one mpirun, a
// supervisor's mpiruns, threads), sends every record to the reports, and accounts across runs
// for the fault sites that fired, the faults left to chance and the runs skipped.
class SuiteRun {
 public:
  SuiteRun(const SuiteOptions& options, std::size_t total, reports::HtmlOptions htmlOptions,
           bool reporter, std::ostream& out)
      : options_(options),
        total_(total),
        reporter_(reporter),
        out_(out),
        console_(out, consoleOptions(options, total, out)),
        html_(std::move(htmlOptions)),
        verdicts_(launch::toString(options.runtime), options.launcher, options.ranksPerGpu) {}

  // A scenario left out before the list ran (its `launchers:`, `clock:`, runtime or a step cap
  // it cannot fit): the HTML and the verdicts say so.
  void onSkipped(const Skip& skip) {
    html_.onSkipped(skip.name, skip.reason);
    verdicts_.onSkipped(skip.file, skip.name, skip.reason);
    ++skippedAtLoad_;
  }
  // A file whose data plane runs capped below its own steps: its verdicts say so.
  void onCapped(const std::string& file, std::uint64_t fileSteps) {
    verdicts_.onCapped(file, fileSteps);
  }

  // One mpirun: every job packed onto TP groups within nodes, several at once.
  void runInSession(MpiSession& session, const std::vector<Scenario>& scenarios,
                    const LaunchOptions& launch) {
    std::vector<MpiJob> jobs;
    const int largest = session.largestNode();
    forEachRun(
        scenarios,
        [&](const Scenario& scenario) {
          return scenario.ranks <= largest
                     ? ""
                     : "needs " + std::to_string(scenario.ranks) +
                           " ranks on one node, the largest node of this run has " +
                           std::to_string(largest);
        },
        [&](const Scenario& scenario, std::uint64_t seed) {
          jobs.push_back({&scenario, seed});
        });
    toSkip_ = skipped_;
    if (reporter_ && session.nodes() > 1) {
      out_ << "mpi: " << session.size() << " ranks on " << session.nodes() << " nodes\n";
    }
    if (options_.runDir.empty()) {
      interrupted_ = session.runAll(
          jobs, launch, [&](std::size_t, const RunRecord& record) { onRecord(record); });
      return;
    }
    // Supervised: one scenario a round, each with its files (supervisor.h); the supervisor
    // restarts the list at `first` after a job it had to end.
    for (std::size_t i = options_.first; i < jobs.size(); ++i) {
      LaunchOptions item = launch;
      item.signalRunDir = options_.runDir;
      item.runIndex = i;
      session.runAll({jobs[i]}, item, [](std::size_t, const RunRecord&) {});
    }
  }

  // The supervisor's mpiruns, one run after another; an interrupt ends the job under way and
  // the list (supervisor.h).
  void runSupervised(Supervisor& supervisor, const std::vector<Scenario>& scenarios) {
    for (const auto& scenario : scenarios) {
      if (scenario.ranks > supervisor.np()) toSkip_ += options_.repeat;
    }
    try {
      forEachRun(
          scenarios,
          [&](const Scenario& scenario) {
            return scenario.ranks <= supervisor.np()
                       ? ""
                       : "needs " + std::to_string(scenario.ranks) + " ranks, --np is " +
                             std::to_string(supervisor.np());
          },
          [&](const Scenario& scenario, std::uint64_t seed) {
            onRecord(supervisor.run(scenario, seed, options_.runtime));
          });
    } catch (const launch::Interrupted& stop) {
      interrupted_ = stop.signal;
    }
  }

  // Threads: in a forked child (isolation.h), so a crash of the core is this scenario's FAIL. One
  // child runs case after case (a fork a scenario cost a quarter of the suite's time); it is
  // replaced after a run that ended it (a crash, a hang past the bound) or left a rank behind.
  // An interrupt ends the list: with the fork, the child of the run under way is killed and that
  // run abandoned (isolation.h); without it (--no-fork), the run under way ends first.
  void runInThreads(const std::vector<Scenario>& scenarios, const LaunchOptions& launch) {
    std::unique_ptr<ChildWorker> worker;
    if (options_.fork) {
      worker = std::make_unique<ChildWorker>(launch, [] { return LaunchFunction(runThreads); });
    }
    try {
      forEachRun(
          scenarios, [](const Scenario&) { return std::string(); },
          [&](const Scenario& scenario, std::uint64_t seed) {
            launch::throwIfInterrupted();
            onRecord(worker ? worker->run(scenario, seed) : runThreads(scenario, seed, launch));
          });
    } catch (const launch::Interrupted& stop) {
      interrupted_ = stop.signal;
    }
  }

  // The signal that ended the list early, or 0.
  int interrupted() const noexcept { return interrupted_; }

  // The reporter's closing lines and report files; the exit code (0, 1 a failure, 2 a report
  // that could not be written, 128 + the signal of an interrupt). Prints nothing on other ranks.
  int finish(std::ostream& err) {
    if (!reporter_) return interrupted_ != 0 ? launch::interruptedExitCode(interrupted_) : 0;
    if (interrupted_ != 0) {
      // Of the runs the list would have reported (those too big for this run are not).
      const std::size_t done = console_.passed() + console_.failed();
      const std::size_t runs = total_ - static_cast<std::size_t>(toSkip_);
      const std::string line = "interrupted after " + std::to_string(done) + " of " +
                               std::to_string(runs) + " scenarios (" +
                               launch::signalName(interrupted_) + ")";
      out_ << "peerconf: " << line
           << ": the run under way was ended and is not reported, the rest did not run\n";
      junit_.onInterrupted(line);
      html_.onInterrupted(line);
    }
    out_ << "fault sites fired:";
    for (const auto& s : fired_) out_ << " " << s;
    out_ << "\n";
    printChances();
    if (skipped_ > 0) out_ << skipped_ << " skipped (more ranks than this run has)\n";
    console_.finish();
    // Said after the summary line, which the nightly reads (ci/nightly-lib.sh judge_suite: a run
    // that passed nothing fails the night even when it exits 0).
    if (skippedAtLoad_ > 0) {
      out_ << skippedAtLoad_ << " skipped at load, each for the reason its SKIP line gives "
           << "(launchers, clock, runtime or a step cap)\n";
    }
    int code = console_.failed() > 0 ? 1 : 0;
    try {
      if (!options_.junit.empty()) writeWhole(junit_, options_.junit);
      if (!options_.trace.empty()) writeWhole(trace_, options_.trace);
      if (!options_.html.empty()) writeWhole(html_, options_.html);
      if (!options_.verdicts.empty()) writeWhole(verdicts_, options_.verdicts);
    } catch (const std::exception& e) {
      err << "peerconf: " << e.what() << "\n";
      code = 2;
    }
    return interrupted_ != 0 ? launch::interruptedExitCode(interrupted_) : code;
  }

 private:
  // A fault that may or may not fire (probability < 1): in how many runs it fired, per file.
  struct Chance {
    std::string file;
    std::size_t fault = 0;
    Fault declared;
    int runs = 0;
    int fired = 0;
  };

  static reports::ConsoleOptions consoleOptions(const SuiteOptions& options, std::size_t total,
                                                const std::ostream& out) {
    reports::ConsoleOptions console;
    console.progress = options.progress || reports::isTerminal(out);
    console.total = total;
    return console;
  }

  // Every run of the list in order: each scenario --repeat times, seeds S, S+1, ... A scenario
  // for which `tooBig` gives a reason (it needs more ranks than the run has) is skipped, said
  // once a run; every other run goes to `run(scenario, seed)`.
  template <typename TooBig, typename Run>
  void forEachRun(const std::vector<Scenario>& scenarios, TooBig tooBig, Run run) {
    for (const auto& scenario : scenarios) {
      for (int rep = 0; rep < options_.repeat; ++rep) {
        const std::uint64_t seed =
            options_.seed.value_or(scenario.seed) + static_cast<unsigned>(rep);
        const std::string skip = tooBig(scenario);
        if (!skip.empty()) {
          if (reporter_) {
            out_ << "SKIP " << scenario.name << ": " << skip << "\n";
            html_.onSkipped(scenario.name, skip);
            verdicts_.onSkipped(scenario.file, scenario.name, skip);
          }
          ++skipped_;
          continue;
        }
        run(scenario, seed);
      }
    }
  }

  void onRecord(const RunRecord& ran) {
    RunRecord record = ran;
    record.requireCoverage = options_.requireCoverage;
    // The core that ran, for the reproduce line: the scenario's `core:` wins over --core.
    const std::string& core =
        record.scenario.core.empty() ? options_.coreName : record.scenario.core;
    record.core = core == "production" ? "" : core;
    fired_.insert(record.firedSites.begin(), record.firedSites.end());
    countChances(record);
    const judge::Judgement judgement = judge::judgeRun(record);
    if (record.scenario.expect.asDrawn) countDrawn(record, judgement);
    console_.onScenario(record, judgement);
    if (!options_.junit.empty()) junit_.onScenario(record, judgement);
    if (!options_.trace.empty()) trace_.onScenario(record, judgement);
    if (!options_.html.empty()) html_.onScenario(record, judgement);
    if (!options_.verdicts.empty()) verdicts_.onScenario(record, judgement);
  }

  // Counts, for each fault of `record` left to chance, this run and whether it fired.
  void countChances(const RunRecord& record) {
    const auto firedFaults = judge::firedFaults(record);
    for (std::size_t i = 0; i < record.scenario.faults.size(); ++i) {
      const Fault& fault = record.scenario.faults[i];
      if (fault.probability >= 1.0) continue;
      Chance& chance = chances_[{record.scenario.file, i}];
      chance.file = record.scenario.file;
      chance.fault = i;
      chance.declared = fault;
      chance.runs += 1;
      const bool any = std::any_of(fault.ranks.begin(), fault.ranks.end(), [&](int rank) {
        return firedFaults.count({i, rank}) != 0;
      });
      chance.fired += any ? 1 : 0;
    }
  }

  // `outcome: as-drawn`: how the draws fell over --repeat and seeds, outcome by outcome (each run
  // was judged against its own draw).
  void countDrawn(const RunRecord& record, const judge::Judgement& judgement) {
    Drawn& drawn = drawn_[record.scenario.file];
    drawn.mark = record.scenario.expect.marks.outcome;
    drawn.runs += 1;
    drawn.outcomes[judgement.drawnOutcome ? toString(*judgement.drawnOutcome) : "not judged"] += 1;
  }

  // Certain faults are judged per run (a miss fails that scenario: "coverage"); faults left to
  // chance are counted here, over --repeat and seeds, and never fail the suite.
  void printChances() {
    for (const auto& [file, drawn] : drawn_) {
      out_ << "drawn: " << file << ":" << drawn.mark.line << ":" << drawn.mark.column
           << " outcome as-drawn:";
      const char* sep = " ";
      for (const auto& [outcome, n] : drawn.outcomes) {
        out_ << sep << outcome << " in " << n;
        sep = ", ";
      }
      out_ << " of " << drawn.runs << (drawn.runs == 1 ? " run" : " runs") << "\n";
    }
    for (const auto& [key, chance] : chances_) {
      const Fault& fault = chance.declared;
      out_ << "chance: " << chance.file << ":" << fault.mark.line << ":" << fault.mark.column
           << " fault #" << chance.fault << " (" << toString(fault.site) << ", probability "
           << fault.probability << ") fired in " << chance.fired << " of " << chance.runs
           << (chance.runs == 1 ? " run" : " runs") << (chance.fired == 0 ? " (never)" : "")
           << "\n";
    }
  }

  const SuiteOptions& options_;
  const std::size_t total_;  // runs the list asks for (scenarios x --repeat)
  int interrupted_ = 0;
  int skippedAtLoad_ = 0;  // files left out before the list ran (onSkipped)      // the signal that
                           // ended the list early (interrupt.h), or 0
  const bool reporter_;    // prints and writes the reports (rank 0, not a supervised rank)
  std::ostream& out_;
  reports::ConsoleReport console_;
  reports::JUnitReport junit_;
  reports::TraceReport trace_;
  reports::HtmlReport html_;
  VerdictsReport verdicts_;
  std::set<std::string> fired_;
  std::map<std::pair<std::string, std::size_t>, Chance> chances_;
  struct Drawn {
    model::Mark mark;  // the file's `outcome: as-drawn`
    int runs = 0;
    std::map<std::string, int> outcomes;  // "raise" -> runs whose draw raised
  };
  std::map<std::string, Drawn> drawn_;
  int skipped_ = 0;
  int toSkip_ = 0;  // runs the list skips as too big for this run, counted before it runs
};

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
      checkOutcomeDraw(scenario);
      for (const auto& warning : scenario::warnings(scenario)) {
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

int checkRefusals(const std::vector<std::string>& paths, std::ostream& out, std::ostream& err,
                  const CoreRegistry& cores, Runtime runtime) {
  std::vector<std::string> files;
  if (!expandScenarioPaths(paths, files, err)) return 2;
  int wrong = 0;
  int unmarked = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::optional<scenario::ExpectedRefusal> expected = scenario::expectedRefusal(text);
    if (!expected) {
      err << file
          << ":1:1: a file that must be refused opens with \"# expect-error: LINE:COL: "
             "fragment\" (where, and a part of the message)\n";
      ++unmarked;
      continue;
    }
    std::optional<model::ScenarioError> error;
    try {
      const Scenario scenario = loadScenario(file);
      cores.check(scenario);
      dataplane::checkDataPlaneRuntime(scenario, runtime);
      checkOutcomeDraw(scenario);
    } catch (const model::ScenarioError& e) {
      error = e;
    } catch (const std::exception& e) {
      error = model::ScenarioError(file, {}, e.what());
    }
    const std::string problem = scenario::refusalProblem(file, *expected, error);
    if (!problem.empty()) {
      err << problem << "\n";
      ++wrong;
    }
  }
  out << files.size() - static_cast<std::size_t>(wrong + unmarked) << " refused as stated, "
      << wrong << " not";
  if (unmarked > 0) out << ", " << unmarked << " without an expect-error line";
  out << "\n";
  if (unmarked > 0) return 2;
  return wrong == 0 ? 0 : 1;
}

model::StepCapOptions dataPlaneStepCap() {
  auto read = [](const char* name) -> const char* {
    const char* text = std::getenv(name);
    return text == nullptr || *text == '\0' ? nullptr : text;
  };
  model::StepCapOptions cap;
  if (const char* text = read("PEERCONF_MAX_DATAPLANE_STEPS")) {
    cap.maxSteps = std::strtoull(text, nullptr, 10);
  }
  if (const char* text = read("PEERCONF_SLICED_STEP_RATE"))
    cap.slicedRate = std::strtod(text, nullptr);
  if (const char* text = read("PEERCONF_SLICED_GPUS")) {
    cap.slicedGpus = std::max(1, static_cast<int>(std::strtol(text, nullptr, 10)));
  }
  if (const char* text = read("PEERCONF_SLICED_SECONDS")) {
    cap.slicedTarget =
        std::chrono::milliseconds(std::llround(std::max(0.0, std::strtod(text, nullptr)) * 1000));
  }
  return cap;
}

model::StepCap capDataPlaneSteps(Scenario& scenario, const model::StepCapOptions& options) {
  model::StepCap cap = model::stepCapFor(scenario, options);
  if (cap.result == model::StepCap::Result::kCapped) {
    scenario.dataPlane->steps = cap.steps;
    scenario.dataPlane->history = std::min(scenario.dataPlane->history, cap.steps);
  }
  // A buffer's own data plane (model::dataPlaneOf) is capped as the scenario's would be; the
  // cap said and recorded (verdicts) is the scenario's.
  for (std::size_t number = 0; number < scenario.buffers.size(); ++number) {
    if (!scenario.buffers[number].dataPlane) continue;
    const model::StepCap own =
        model::stepCapFor(model::dataPlaneScenarioOf(scenario, number), options);
    if (own.result != model::StepCap::Result::kCapped) continue;
    model::Spec& spec = *scenario.buffers[number].dataPlane;
    spec.steps = own.steps;
    spec.history = std::min(spec.history, own.steps);
  }
  return cap;
}

namespace {

// The simulator's self-check before a run on simulated time; false (said on `err`) on a failure.
bool simulatorChecksItself(const SuiteOptions& options, std::ostream& err) {
  const dataplane::EngineCheck check =
      dataplane::checkEngine(options.engine == launch::Engine::kFibers);
  if (check.ok()) return true;
  err << "peerconf: the simulator failed its self-check, so nothing is judged on simulated time ("
      << check.litmusTests << " litmus tests against RC11/PTX, the scheduler's use of the seed on "
      << launch::toString(options.engine) << "):\n";
  for (const std::string& problem : check.problems) err << "  " << problem << "\n";
  err << "peerconf: every verdict on --clock sim rests on this simulator; fix it, or run --clock "
         "real\n";
  return false;
}

// A list with nothing to run: every file was skipped at load for a stated reason (its
// `launchers:`, `clock:`, runtime or a step cap: exit 0, the reports say so), or none matched
// (exit 2: a filter or paths that name nothing to run are a usage error).
int nothingToRun(const SuiteOptions& options, const std::vector<Skip>& skips, int* argc,
                 char*** argv, std::ostream& out, std::ostream& err) {
  if (skips.empty()) {
    err << "peerconf: no scenario matched\n";
    return 2;
  }
  SuiteRun run(options, 0, htmlHeader(argc, argv), true, out);
  for (const Skip& skip : skips) run.onSkipped(skip);
  return run.finish(err);
}

}  // namespace

int runSuite(const SuiteOptions& options, int* argc, char*** argv, std::ostream& out,
             std::ostream& err) {
  const bool mpi = options.launcher == "mpi";
  const bool signal = options.killMode == "signal";
  if (rejectOptions(options, mpi, signal, err)) return 2;

  // --kill-mode signal outside mpirun: this process supervises one mpirun after another.
  std::unique_ptr<Supervisor> supervisor;
  if (mpi && !underMpirun()) {
    std::vector<Skip> skips;
    auto scenarios = loadAll(options, err, false, &skips);
    if (!scenarios) return 2;
    // Nothing left to run: no mpirun is started (the ranks would load the same empty list).
    if (scenarios->empty()) return nothingToRun(options, skips, argc, argv, out, err);
    const MpirunSize size = mpirunSize(*scenarios, options);
    if (!signal) return runUnderMpirun(size.np, size.bound, *argc, *argv, err);
    SupervisorOptions supervised{size.np, 0, {*argv + 1, *argv + *argc}, size.bound};
    for (const auto& s : *scenarios) {
      if (s.ranks <= size.np) supervised.total += static_cast<std::size_t>(options.repeat);
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
  std::vector<Skip> launcherSkips;
  std::map<std::string, std::uint64_t> capped;
  auto scenarios =
      loadAll(options, err, !reporter || supervisor != nullptr, &launcherSkips, &capped);
  if (!scenarios) return finish(2);
  if (scenarios->empty()) {
    if (!reporter) return finish(launcherSkips.empty() ? 2 : 0);
    return finish(nothingToRun(options, launcherSkips, argc, argv, out, err));
  }

  // Simulated time: the simulator every verdict will rest on checks itself first (its weak
  // memory against the litmus table's model, its scheduler's use of the seed), and a failure
  // refuses the whole run (exit 1) before anything is judged.
  if (!mpi && options.clock == launch::ClockMode::kSim && !simulatorChecksItself(options, err)) {
    return finish(1);
  }

  const std::size_t total = scenarios->size() * static_cast<std::size_t>(options.repeat);
  SuiteRun run(options, total, htmlHeader(argc, argv), reporter, out);
  for (const Skip& skip : launcherSkips) run.onSkipped(skip);
  for (const auto& [file, fileSteps] : capped) run.onCapped(file, fileSteps);
  LaunchOptions launch{options.runtime};
  if (!mpi) launch.clock = options.clock;  // MPI and GPU runs keep real time
  launch.engine = options.engine;
  launch.cores = &options.cores;
  launch.core = options.core;  // the default core: a scenario's `core:` names another
  launch.runner = options.runner;
  launch.plantedRuntime = options.plantedRuntime;
  launch.ranksPerGpu = options.ranksPerGpu;

  if (session) {
    try {
      run.runInSession(*session, *scenarios, launch);
    } catch (const std::runtime_error& e) {
      // A topology the launcher refuses (every rank throws it, after agreeing).
      if (reporter) err << "peerconf: " << e.what() << "\n";
      return finish(2);
    }
  } else if (supervisor) {
    run.runSupervised(*supervisor, *scenarios);
  } else {
    run.runInThreads(*scenarios, launch);
  }
  const int code = run.finish(err);
  // Ranks that an interrupt stopped (their parent's, mpirun_child.h) leave quietly: that parent
  // exits with 128 + the signal itself, and mpirun would call the ordered stop a failure.
  return finish(session && run.interrupted() != 0 ? 0 : code);
}

}  // namespace peerconf::harness::driver
