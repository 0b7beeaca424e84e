// The steps a scenario's data plane names (a stop, a late step, an `at: dataplane` stop, the epoch
// wrap) and a cap on its steps that never cuts a run below them: a run that cannot reach them
// within what the cap allows is skipped with the reason, never shortened into a silent pass.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::model {

// A step the data plane names, and the steps a run needs to show what happens there.
struct NamedStep {
  std::uint64_t step = 0;
  // The step itself for a stop (the others block on it and report it); for a late step and the
  // wrap also one turn of the slots after it (`depth` steps), where what the step did is read
  // again: a late reader's writer runs ahead up to the depth, a wrapped epoch reuses each slot.
  std::uint64_t needs = 0;
  std::string what;  // "its stop at step 1000 (line 17)", "the epoch wrap at step 300", ...
};

// Every step `scenario`'s data plane names, in the order written (the wrap last); empty without a
// data plane. A late `every: k` names its first late step, k.
std::vector<NamedStep> namedDataPlaneSteps(const Scenario& scenario);

// The steps a capped run of `scenario` needs: the most any named step needs, or one turn of the
// slots (depth + 1) with none; never more than the file's own steps. 0 without a data plane.
std::uint64_t stepsNeeded(const Scenario& scenario);

// What caps a data plane. A time-sliced GPU (its group's ranks share GPUs without MPS, so the
// kernels take turns) runs `slicedRate` steps a second for 2 ranks on one GPU (measured: about 445
// on one H200, ci/bench/RESULTS.md); s ranks sharing each GPU (ceil(ranks / slicedGpus)) run
// slicedRate x (2/s)^2: a step needs a time slice of each of the s ranks, and each slice takes
// longer as more contexts share the GPU (4 ranks on one H200 did not reach 2,000 steps in 12 s:
// slower than the 222 a second that 1/s predicts, faster than the 111 of (2/s)^2).
struct StepCapOptions {
  std::uint64_t maxSteps = 0;  // a hard cap on every data plane (0: none)
  double slicedRate = 0;       // steps a second of 2 ranks time-sliced on one GPU (0: none)
  int slicedGpus = 1;          // the GPUs a group's ranks spread over, round-robin
  // The data-plane time a time-sliced run aims at (0: as much as its bound allows); raised to the
  // steps it needs while its bound holds them.
  std::chrono::milliseconds slicedTarget{0};

  bool any() const noexcept { return maxSteps > 0 || slicedRate > 0; }
};

// The share of a run's bound (less kBoundSlack) that a time-sliced data plane may take; the rest
// is the handshake's and the rate's spread. The run is held to its bound (C8), and a host abort
// of kernels past it costs more than the run (ci/bench/RESULTS.md).
inline constexpr double kSlicedBoundShare = 0.75;

struct StepCap {
  enum class Result {
    kUnchanged,  // no cap applies, or the file's steps are within it
    kCapped,     // run `steps` instead of the file's
    kSkipped,    // the steps it names cannot be reached within what the cap allows: `why`
  };
  Result result = Result::kUnchanged;
  std::uint64_t fileSteps = 0;  // the file's own steps (0: no data plane)
  std::uint64_t steps = 0;      // the steps to run (kUnchanged: the file's)
  std::string why;              // kCapped: how it was sized; kSkipped: why it cannot run
};

// The cap `options` put on `scenario`'s data plane: the least of the file's steps, maxSteps and,
// when its ranks are time-sliced, what fits kSlicedBoundShare of its bound at the rate (less the
// waits it plans: late delays, a stopped rank's timeout) and the target; raised to stepsNeeded()
// where that is within maxSteps and the bound's room, kSkipped otherwise.
StepCap stepCapFor(const Scenario& scenario, const StepCapOptions& options);

// The steps a second `ranks` ranks of one group run time-sliced under `options` (0: not
// time-sliced, every rank on a GPU of its own, or no rate given).
double slicedStepRate(int ranks, const StepCapOptions& options);

}  // namespace peerconf::harness::model
