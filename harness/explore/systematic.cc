// `peerconf explore --systematic`: a depth-first walk of a scenario's scheduling choices with a
// preemption bound, each execution judged as a suite run.
#include "explore/systematic.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "explore/case_runner.h"
#include "judge/judgement.h"
#include "launch/interrupt.h"
#include "launch/thread_launcher.h"
#include "model/run_record.h"
#include "scenario/load.h"

namespace peerconf::harness::explore {

int PrefixChooser::pick(int holder, const std::vector<int>& runnable) {
  // Option 0 is the default: the holder going on, else the lowest runnable id; then the others in
  // ascending order.
  const bool holderRuns = std::find(runnable.begin(), runnable.end(), holder) != runnable.end();
  std::vector<int> options;
  options.reserve(runnable.size());
  if (holderRuns) options.push_back(holder);
  for (const int r : runnable) {
    if (r != holder) options.push_back(r);
  }
  const std::size_t at = choices_.size();
  int taken = at < prefix_.size() ? prefix_[at] : 0;
  if (taken < 0 || taken >= static_cast<int>(options.size())) {
    diverged_ = true;
    taken = 0;
  }
  const int picked = options[static_cast<std::size_t>(taken)];
  choices_.push_back(Choice{static_cast<int>(options.size()), taken, holderRuns, false,
                            holderRuns ? holder : -1, picked});
  return picked;
}

int PrefixChooser::choose(int options) {
  const std::size_t at = choices_.size();
  int taken = at < prefix_.size() ? prefix_[at] : 0;
  if (taken < 0 || taken >= options) {
    diverged_ = true;
    taken = 0;
  }
  choices_.push_back(Choice{options, taken, false, true});
  return taken;
}

int preemptionsMade(const std::vector<Choice>& choices) {
  return static_cast<int>(std::count_if(choices.begin(), choices.end(), [](const Choice& c) {
    return !c.memory && c.holder >= 0 && c.picked != c.holder;
  }));
}

int olderReadsMade(const std::vector<Choice>& choices) {
  return static_cast<int>(std::count_if(choices.begin(), choices.end(),
                                        [](const Choice& c) { return c.memory && c.taken != 0; }));
}

bool nextPrefix(const std::vector<Choice>& choices, int preemptions, std::vector<int>& prefix,
                int olderReads) {
  // Preemptions and older reads taken before choice i.
  std::vector<int> before(choices.size() + 1, 0);
  std::vector<int> older(choices.size() + 1, 0);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const bool deviates = choices[i].taken != 0;
    before[i + 1] = before[i] + (choices[i].preemptive && deviates ? 1 : 0);
    older[i + 1] = older[i] + (choices[i].memory && deviates ? 1 : 0);
  }
  for (std::size_t i = choices.size(); i-- > 0;) {
    const Choice& c = choices[i];
    const int alt = c.taken + 1;
    if (alt >= c.options) continue;
    if (before[i] + (c.preemptive ? 1 : 0) > preemptions) continue;
    if (older[i] + (c.memory ? 1 : 0) > olderReads) continue;
    prefix.clear();
    for (std::size_t j = 0; j < i; ++j) prefix.push_back(choices[j].taken);
    prefix.push_back(alt);
    return true;
  }
  return false;
}

namespace {

std::string scheduleText(const SystematicOptions& options, std::uint64_t seed,
                         const std::vector<Choice>& choices) {
  std::ostringstream text;
  text << "# " << model::programName() << " systematic schedule: " << options.file << ", seed "
       << seed << ", preemption bound " << options.preemptions << ", older-read bound "
       << options.olderReads << "; replay: " << model::programName() << " explore "
       << "--systematic " << options.file << " --seed " << seed << " --replay THIS_FILE\n"
       << "# one choice a line: the option taken (0: the default) of how many\n";
  for (const Choice& c : choices) text << c.taken << ' ' << c.options << '\n';
  return text.str();
}

std::vector<int> readSchedule(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read the schedule " + path);
  std::vector<int> prefix;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    int taken = -1;
    int options = 0;
    if (!(fields >> taken >> options) || taken < 0 || taken >= options) {
      throw std::invalid_argument(path + ":" + std::to_string(number) +
                                  ": a choice is two numbers, TAKEN < OPTIONS");
    }
    prefix.push_back(taken);
  }
  return prefix;
}

// One execution along `prefix`: the run judged, and the choices it made.
CaseRun execute(const model::Scenario& scenario, std::uint64_t seed, PrefixChooser& chooser,
                launch::Engine engine) {
  launch::LaunchOptions launch;
  launch.clock = launch::ClockMode::kSim;
  launch.engine = engine;
  launch.chooser = &chooser;
  CaseRun run;
  run.record = launch::runThreads(scenario, seed, launch);
  run.judgement = judge::judgeRun(run.record);
  return run;
}

}  // namespace

SystematicResult exploreSystematic(const SystematicOptions& options, std::ostream& out) {
  if (options.preemptions < 0) throw std::invalid_argument("--preemptions must be >= 0");
  if (options.olderReads < 0) throw std::invalid_argument("--older-reads must be >= 0");
  const model::Scenario scenario = scenario::loadScenario(options.file);
  if (!scenario.launchers.empty() && std::find(scenario.launchers.begin(), scenario.launchers.end(),
                                               "threads") == scenario.launchers.end()) {
    throw std::invalid_argument(options.file + " is not written for the thread launcher");
  }
  if (scenario.clock == "real") {
    throw std::invalid_argument(options.file +
                                " is written for --clock real; the walk runs on simulated time");
  }
  const std::uint64_t seed = options.seed != 0 ? options.seed : scenario.seed;
  SystematicResult result;
  std::vector<int> prefix;
  if (!options.replay.empty()) prefix = readSchedule(options.replay);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // An interrupt (launch/interrupt.h) ends the walk between executions (each is short).
    if (launch::interrupted()) {
      result.interrupted = launch::interruptSignal();
      return result;
    }
    PrefixChooser chooser(prefix);
    const CaseRun run = execute(scenario, seed, chooser, options.engine);
    ++result.executions;
    result.longest = std::max(result.longest, chooser.choices().size());
    if (chooser.diverged()) result.nondeterministic = true;
    // The self-check: every execution of the walk within its bounds, recounted from the ranks.
    const int preempted = preemptionsMade(chooser.choices());
    const int older = olderReadsMade(chooser.choices());
    if (options.replay.empty() && (preempted > options.preemptions || older > options.olderReads)) {
      result.outOfBounds =
          "execution " + std::to_string(result.executions) + " made " + std::to_string(preempted) +
          " preemption(s) and " + std::to_string(older) +
          " older read(s) (recounted from the ranks it "
          "ran and the values it read), above the walk's bounds of " +
          std::to_string(options.preemptions) + " and " + std::to_string(options.olderReads);
      return result;
    }
    if (!run.passed() || !options.replay.empty()) {
      result.failed = !run.passed();
      result.failure = run.passed() ? "" : run.failureSummary();
      if (result.failed && options.replay.empty()) {
        result.schedulePath =
            options.scheduleOut.empty()
                ? std::filesystem::path(options.file).stem().string() + ".schedule"
                : options.scheduleOut;
        std::ofstream(result.schedulePath) << scheduleText(options, seed, chooser.choices());
      }
      if (!options.replay.empty()) {
        out << "replayed " << options.replay << ": " << chooser.choices().size() << " choices, "
            << (run.passed() ? "PASS" : "FAIL: " + result.failure) << "\n";
      }
      return result;
    }
    if (result.nondeterministic) return result;
    if (!nextPrefix(chooser.choices(), options.preemptions, prefix, options.olderReads)) {
      result.exhausted = true;
      return result;
    }
    if (result.executions >= options.maxExecutions) return result;
    if (!options.quiet && result.executions % 1000 == 0) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      out << "  " << result.executions << " executions, " << s << " s\n" << std::flush;
    }
  }
}

int printSystematic(const SystematicResult& result, const SystematicOptions& options,
                    std::ostream& out) {
  if (!options.replay.empty()) return result.failed || result.nondeterministic ? 1 : 0;
  out << "systematic: " << options.file << ": " << result.executions
      << " executions, preemption bound " << options.preemptions << ", older-read bound "
      << options.olderReads << ", longest " << result.longest << " choices\n"
      << "  choice points: each data-plane memory operation where another rank could run, each "
         "block of the rank holding the turn, and each load that could read an older value (a "
         "store that could land before a newer one); call points (seam and group calls) run on "
         "without a choice\n";
  if (result.nondeterministic) {
    out << "  NOT DETERMINISTIC: a replayed prefix offered other choices; the walk stopped\n";
    return 1;
  }
  if (!result.outOfBounds.empty()) {
    out << "  SELF-CHECK FAILED: " << result.outOfBounds
        << ": the explorer is wrong, not the core; the walk stopped\n";
    return 1;
  }
  if (result.interrupted != 0) {
    out << "  interrupted after " << result.executions << " executions ("
        << launch::signalName(result.interrupted) << "), all passed; NOT exhausted\n";
    return launch::interruptedExitCode(result.interrupted);
  }
  if (result.failed) {
    out << "  FAIL after " << result.executions << " executions: " << result.failure << "\n"
        << "  schedule: " << result.schedulePath << " (replay: " << model::programName()
        << " explore --systematic " << options.file << " --replay " << result.schedulePath << ")\n";
    return 1;
  }
  if (result.exhausted && options.preemptions >= 2) {
    out << "  space exhausted: every execution with at most " << options.preemptions
        << " preemptions and " << options.olderReads << " older read(s) ran and passed\n";
  } else if (result.exhausted) {
    out << "  every execution with at most " << options.preemptions << " preemption(s) and "
        << options.olderReads
        << " older read(s) ran and passed; a preemption bound below 2 exhausts nothing\n";
  } else {
    out << "  bound reached: stopped at --max-executions " << options.maxExecutions
        << ", NOT exhausted (all passed)\n";
  }
  return 0;
}

}  // namespace peerconf::harness::explore
