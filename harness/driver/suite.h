// Suite: runs a list of scenario files through a launcher, checks every run, and reports.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "model/step_cap.h"

namespace peerconf::harness::driver {

struct SuiteOptions {
  std::vector<std::string> paths;    // FILES|DIRS
  std::string launcher = "threads";  // threads | mpi
  launch::Runtime runtime = launch::Runtime::kMock;
  launch::ClockMode clock =
      launch::ClockMode::kReal;                     // threads: real or simulated time (launcher.h)
  launch::Engine engine = launch::Engine::kFibers;  // threads on sim: fibers or threads
  std::string filter;                 // glob on the scenario name or path; empty = all
  std::optional<std::uint64_t> seed;  // overrides every scenario's seed
  int repeat = 1;                     // runs per scenario, seeds seed, seed+1, ...
  std::string junit;                  // JUnit XML file, or empty
  std::string trace;                  // trace-event JSON file, or empty
  std::string html;                   // self-contained HTML report, or empty
  std::string verdicts;               // per-run verdicts JSON (driver/verdicts.h), or empty
  bool progress = false;              // "[i/n]" before each line
  bool requireCoverage = true;  // fail a run in which a certain fault never fired (judgement.h)
  int simulatedNodes = 0;       // mpi: treat the box as K nodes (blocks of ranks); 0 = real nodes
  int np = 0;                   // mpi outside mpirun: ranks to start (0 = most a scenario needs)
  int ranksPerGpu = 0;          // ranks a GPU (LaunchOptions::ranksPerGpu; 0 = the default)
  std::string killMode = "simulate";  // mpi: simulate | signal (real SIGKILL/SIGSTOP, supervisor.h)
  std::string runDir;     // signal mode, inside mpirun (set by the supervisor): its run directory
  std::size_t first = 0;  // signal mode, inside mpirun (set by the supervisor): items to skip
  launch::CoreRegistry
      cores;  // the cores a scenario's `core:` may name (main adds the planted ones)
  // Threads: the runs in a forked child (isolation.h's ChildWorker: one for run after run,
  // replaced after a run that ended it or left a rank behind), so a crashing core fails its
  // scenario and the suite goes on; false (--no-fork): in this process, to debug.
  bool fork = true;
  // The core under test (tests: a planted core without the scenario files' registry).
  model::CoreFactory core = model::productionCore();
  // The planted runner in front of it, when --core names a core registered with one.
  model::RunnerDecision runner = {};
  // The planted runtime under the harness, when --core names a core registered with one.
  model::RuntimeDecorator plantedRuntime = {};
  // Its name when `--core` chose it (empty or "production": the production core), for the
  // reproduce lines.
  std::string coreName;
};

// Exit codes: 0 every scenario passed, 1 a scenario failed (or, on simulated time, the
// simulator's self-check did: dataplane/engine_check.h; nothing is judged then), 2 usage or input
// error.
int runSuite(const SuiteOptions& options, int* argc, char*** argv, std::ostream& out,
             std::ostream& err);

// The data-plane step cap from the environment (0s when unset: nothing changes):
//   PEERCONF_MAX_DATAPLANE_STEPS=N  every data plane at most N steps (the sanitizer presets and
//     ctest's scenario runs set it: the 10^6-step files are sized for GPUs; under ASan/TSan, or two
//     ranks sharing one core, they take longer than their bound allows);
//   PEERCONF_SLICED_STEP_RATE=S     the ranks are time-sliced on shared GPUs (no MPS): S steps a
//     second for 2 ranks on one GPU; each file is capped to what fits its bound (model/step_cap.h);
//   PEERCONF_SLICED_GPUS=G          the GPUs a group's ranks spread over (default 1);
//   PEERCONF_SLICED_SECONDS=T       the data-plane time a time-sliced run aims at (default: what
//     its bound allows).
// A run under a cap never goes below a step its file names (a stop, a late step, a stop at
// `at: dataplane`, the epoch wrap): a file that cannot reach them within the cap is skipped.
model::StepCapOptions dataPlaneStepCap();
// Caps `scenario`'s data-plane steps under `options` (model::stepCapFor): kCapped lowers its steps
// (and its history with them); kSkipped leaves it as it is and says why it cannot run.
model::StepCap capDataPlaneSteps(model::Scenario& scenario, const model::StepCapOptions& options);

// `peerconf validate`: 0 when every file validates, 2 otherwise (one FILE:LINE:COL line each;
// `core:` names are checked against `cores`). Warnings (scenario::warnings) are printed as
// FILE:LINE:COL: warning: ... and do not change the exit status. With `runtime` kGpu, what the
// GPU data plane cannot run is an error too (dataplane/runtime_check.h).
int validateFiles(const std::vector<std::string>& paths, std::ostream& out, std::ostream& err,
                  const launch::CoreRegistry& cores = launch::CoreRegistry(),
                  launch::Runtime runtime = launch::Runtime::kMock);

// `peerconf validate --refused`: every file must be refused as its first line says ("#
// expect-error: LINE:COL: fragment", scenario/refusal.h), by the same checks as validateFiles. 0
// when each was, 1 when one was accepted or refused otherwise (one line each), 2 for a file without
// that header or a path that names no file.
int checkRefusals(const std::vector<std::string>& paths, std::ostream& out, std::ostream& err,
                  const launch::CoreRegistry& cores = launch::CoreRegistry(),
                  launch::Runtime runtime = launch::Runtime::kMock);

}  // namespace peerconf::harness::driver
