// The steps a data plane names and the cap that never goes below them (step_cap.h).
#include "model/step_cap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "model/fault_sites.h"

namespace peerconf::harness::model {

namespace {

constexpr std::uint64_t kEpochs = std::uint64_t{1} << 32;

std::string atLine(int line) { return line > 0 ? " (line " + std::to_string(line) + ")" : ""; }

int markLine(const Spec& spec, const std::string& key) {
  const auto it = spec.marks.find(key);
  return it == spec.marks.end() ? 0 : it->second.line;
}

double seconds(std::chrono::microseconds d) { return static_cast<double>(d.count()) / 1e6; }

// "1 s", "2.5 s", "300 ms".
std::string durationText(double secondsValue) {
  std::ostringstream out;
  if (secondsValue < 1.0) {
    out << std::llround(secondsValue * 1000) << " ms";
  } else {
    out << std::round(secondsValue * 10) / 10 << " s";
  }
  return out.str();
}

std::string gpuWord(int gpus) { return std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs"); }

// The whole steps in `steps` (a quotient of seconds), none when negative; 890 of 2 s at 445 a
// second, not the 889.99... that the quotient rounds to.
std::uint64_t wholeSteps(double steps) {
  return steps <= 0 ? 0 : static_cast<std::uint64_t>(std::floor(steps + 1e-6));
}

// The named step that needs the most steps (the first of equals).
const NamedStep* mostNeeded(const std::vector<NamedStep>& named) {
  const NamedStep* most = nullptr;
  for (const auto& n : named) {
    if (most == nullptr || n.needs > most->needs) most = &n;
  }
  return most;
}

}  // namespace

std::vector<NamedStep> namedDataPlaneSteps(const Scenario& scenario) {
  std::vector<NamedStep> out;
  if (!scenario.dataPlane) return out;
  const Spec& spec = *scenario.dataPlane;
  const auto turn = static_cast<std::uint64_t>(spec.depth);
  if (spec.stop) {
    out.push_back({spec.stop->step, spec.stop->step + 1,
                   "rank " + std::to_string(spec.stop->rank) + "'s stop at step " +
                       std::to_string(spec.stop->step) + atLine(markLine(spec, "stop"))});
  }
  const int lateLine = markLine(spec, "late");
  for (const Late& late : spec.late) {
    const std::string who = "rank " + std::to_string(late.rank) + "'s late " + toString(late.role);
    for (std::uint64_t s : late.steps) {
      out.push_back({s, s + turn + 1, who + " at step " + std::to_string(s) + atLine(lateLine)});
    }
    if (late.every > 0) {
      out.push_back({late.every, late.every + turn + 1,
                     who + " every " + std::to_string(late.every) + " steps (first at step " +
                         std::to_string(late.every) + ")" + atLine(lateLine)});
    }
  }
  for (const Fault& fault : scenario.faults) {
    if (!stopsInDataPlane(fault)) continue;
    out.push_back({fault.step, fault.step + 1,
                   "its " + toString(fault.site) + " at data-plane step " +
                       std::to_string(fault.step) + atLine(fault.mark.line)});
  }
  if (spec.startEpoch > 0) {
    const std::uint64_t wrap = kEpochs - spec.startEpoch;
    if (wrap < spec.steps) {
      out.push_back({wrap, wrap + turn + 1,
                     "the epoch wrap at step " + std::to_string(wrap) + " (start_epoch" +
                         (markLine(spec, "start_epoch") > 0
                              ? ", line " + std::to_string(markLine(spec, "start_epoch"))
                              : "") +
                         ")"});
    }
  }
  return out;
}

std::uint64_t stepsNeeded(const Scenario& scenario) {
  if (!scenario.dataPlane) return 0;
  const Spec& spec = *scenario.dataPlane;
  std::uint64_t needs = static_cast<std::uint64_t>(spec.depth) + 1;
  for (const NamedStep& n : namedDataPlaneSteps(scenario)) needs = std::max(needs, n.needs);
  return std::min(needs, spec.steps);
}

double slicedStepRate(int ranks, const StepCapOptions& options) {
  if (options.slicedRate <= 0) return 0;
  const int gpus = std::max(options.slicedGpus, 1);
  const int sharing = (ranks + gpus - 1) / gpus;
  if (sharing < 2) return 0;
  const double scale = 2.0 / sharing;
  return options.slicedRate * scale * scale;
}

namespace {

// What a data plane costs on a time-sliced GPU at `rate` steps a second: the seconds its planned
// waits take once (late delays at named steps, the timeout on a stopped rank) and the seconds a
// step takes (`every` delays grow with the steps, so they go into each step's cost).
struct SlicedCost {
  double fixed = 0;
  double perStep = 0;
};

SlicedCost slicedCost(const Scenario& scenario, double rate) {
  const Spec& spec = *scenario.dataPlane;
  SlicedCost cost;
  // A two-in-flight step runs two collectives: counted as two steps of the measured rate (its
  // own rate on a time-sliced GPU is unmeasured; the cap errs towards fewer steps).
  cost.perStep = static_cast<double>(collectivesPerStep(spec.workload)) / rate;
  for (const Late& late : spec.late) {
    cost.fixed += static_cast<double>(late.steps.size()) * seconds(late.delay);
    if (late.every > 0) cost.perStep += seconds(late.delay) / static_cast<double>(late.every);
  }
  if (spec.stop || !dataPlaneStopRanks(scenario).empty()) {
    cost.fixed += static_cast<double>(waitTimeout(spec, scenario.deadline).count()) / 1000.0;
  }
  return cost;
}

}  // namespace

StepCap stepCapFor(const Scenario& scenario, const StepCapOptions& options) {
  StepCap cap;
  if (!scenario.dataPlane) return cap;
  const Spec& spec = *scenario.dataPlane;
  cap.fileSteps = spec.steps;
  cap.steps = spec.steps;
  if (!options.any()) return cap;

  constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t hard = options.maxSteps > 0 ? options.maxSteps : kNoLimit;
  std::uint64_t soft = kNoLimit;
  std::string sized;  // how the limits came about, for kCapped and kSkipped
  std::string hardWhy =
      options.maxSteps > 0 ? "the step cap of " + std::to_string(options.maxSteps) : "";
  const double rate = slicedStepRate(scenario.ranks, options);
  if (rate > 0) {
    // The run's bound less the slack; the waits it plans (late delays, the timeout on a stopped
    // rank) come off the room; `every` delays grow with the steps, so they go into each step's
    // cost.
    const double bound = static_cast<double>(plannedBound(scenario).count()) / 1000.0;
    const double room =
        kSlicedBoundShare * (bound - static_cast<double>(kBoundSlack.count()) / 1000);
    const SlicedCost cost = slicedCost(scenario, rate);
    const double perStep = cost.perStep;
    const auto collectives = collectivesPerStep(spec.workload);
    const auto roomSteps = wholeSteps((room - cost.fixed) / perStep);
    const int gpus = std::max(options.slicedGpus, 1);
    sized = std::to_string(scenario.ranks) + " ranks time-sliced on " + gpuWord(gpus) +
            " at about " + std::to_string(std::llround(rate)) + " steps a second: its " +
            durationText(bound) + " bound has room for " + std::to_string(roomSteps) +
            (collectives > 1 ? " (two collectives a step)" : "");
    if (roomSteps < hard) {
      hard = roomSteps;
      hardWhy = "the " + std::to_string(roomSteps) + " that " + std::to_string(scenario.ranks) +
                " ranks time-sliced on " + gpuWord(gpus) + " (about " +
                std::to_string(std::llround(rate)) + " steps a second) fit in " +
                std::to_string(std::llround(kSlicedBoundShare * 100)) + " % of its " +
                durationText(bound) + " bound";
    }
    if (options.slicedTarget.count() > 0) {
      const double target = static_cast<double>(options.slicedTarget.count()) / 1000.0;
      soft = wholeSteps(target / perStep);
      sized += ", the " + durationText(target) + " aimed at for " + std::to_string(soft);
    }
  } else if (options.maxSteps > 0) {
    sized = "a cap of " + std::to_string(options.maxSteps) + " steps";
  }

  const std::uint64_t needed = stepsNeeded(scenario);
  const std::vector<NamedStep> named = namedDataPlaneSteps(scenario);
  const NamedStep* most = mostNeeded(named);
  if (needed > hard) {
    cap.result = StepCap::Result::kSkipped;
    cap.steps = 0;
    cap.why = (most != nullptr && most->needs >= needed
                   ? most->what + " needs " + std::to_string(needed) + " data-plane steps"
                   : "its data plane needs " + std::to_string(needed) +
                         " steps (one turn of its slots)") +
              ", above " + hardWhy + ": not run rather than cut short";
    return cap;
  }
  std::uint64_t steps = std::min({spec.steps, hard, soft});
  const bool raised = steps < needed;
  steps = std::max(steps, needed);
  if (steps >= spec.steps) return cap;
  cap.result = StepCap::Result::kCapped;
  cap.steps = steps;
  cap.why = "data-plane steps " + std::to_string(spec.steps) + " -> " + std::to_string(steps) +
            " (" + sized + ")";
  if (raised) {
    cap.why += "; raised to the " + std::to_string(needed) + " that " +
               (most != nullptr && most->needs >= needed ? most->what : "one turn of its slots") +
               " needs";
  }
  return cap;
}

}  // namespace peerconf::harness::model
