// What every launcher takes: the runtime, the clock and the core under test of a run (the thread
// launcher is thread_launcher.h, the MPI session mpirun/mpi_launcher.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "backend_factory.h"
#include "clock.h"
#include "launch/core_registry.h"
#include "model/core_under_test.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

// The device runtime: the mocked HIP runtime, or the GPU backend (src/backend_factory.h).
using Runtime = peerconf::Runtime;

// The clock of a thread run (clock.h): real (the steady clock; ranks interleave as the OS
// schedules them) or simulated (sim_clock.h: virtual time, one rank at a time in an order drawn
// from the run's seed). The MPI and GPU launchers always run on real time.
enum class ClockMode { kReal, kSim };
std::string toString(ClockMode mode);  // "real" | "sim"
// "real" or "sim"; throws std::invalid_argument otherwise.
ClockMode clockModeFromString(const std::string& name);
// What runs the ranks of a thread run on simulated time: fibers (the default: every rank a fiber of
// one OS thread; a hand-off is a user-space switch) or threads (a thread a rank, handing the turn
// over through the scheduler's lock; kept to compare). Real time always runs a thread a rank.
enum class Engine { kFibers, kThreads };
std::string toString(Engine engine);  // "fibers" | "threads"
// "fibers" or "threads"; throws std::invalid_argument otherwise.
Engine engineFromString(const std::string& name);

// The mocked runtime's device memory on simulated time (--mock-memory): the in-process arena (the
// default: mock_hip::DeviceMemory::kArena, no system call a run) or memfd segments, which real
// time and MPI always use (kept on simulated time to compare verdicts, and for the bench).
enum class MockMemory { kArena, kSegments };
std::string toString(MockMemory memory);  // "arena" | "segments"
// "arena" or "segments"; throws std::invalid_argument otherwise.
MockMemory mockMemoryFromString(const std::string& name);
// LaunchOptions::mockMemory's default: the command line sets it once (--mock-memory), before any
// options are made, so that every run of the command (explore's children too) takes it.
void setDefaultMockMemory(MockMemory memory);
MockMemory defaultMockMemory();

// How many run bounds of wall time a thread run may take before the launcher gives up on its
// ranks (5 s past that) and the isolating parent on its child (kChildSlack past that). On
// simulated time the bound is simulated and the wall time is the hand-offs (one rank at a time),
// which a loaded box slows many times over: the 10^6-step data plane took 33 s quiet and past
// 47 s beside two busy processes. Still a deadline on a run that never ends.
inline int wallBounds(ClockMode mode) { return mode == ClockMode::kSim ? 4 : 1; }

struct LaunchOptions {
  Runtime runtime = Runtime::kMock;
  ClockMode clock = ClockMode::kReal;                 // threads only
  Engine engine = Engine::kFibers;                    // threads on simulated time only
  MockMemory mockMemory = defaultMockMemory();        // the mock on simulated time only
  model::CoreFactory core = model::productionCore();  // the core under test
  // The runner in front of `core` (a planted runner: `--core NAME` of one registered with a
  // runner); unset, the seed's runner. A scenario's `core:` brings its own (runnerFor).
  model::RunnerDecision runner = {};
  // The planted runtime under the harness's decorators (`--core NAME` of one registered with a
  // runtime); unset, the real backend. A scenario's `core:` brings its own (runtimeFor).
  model::RuntimeDecorator plantedRuntime = {};
  // Where a scenario's `core:` is looked up (core_registry.h); a scenario that names a core the
  // registry lacks (or with no registry) has every rank missing, with the reason.
  const CoreRegistry* cores = nullptr;
  // --kill-mode signal, inside mpirun (supervisor.h): the job's run directory and this run's
  // position in the list; empty: deaths and hangs are simulated.
  std::string signalRunDir;
  std::size_t runIndex = 0;
  // How many ranks share one GPU (--ranks-per-gpu). MPI, --runtime gpu: ranks of a node; 0: one a
  // GPU while there are enough, round-robin over them when there are more ranks than GPUs. The
  // mock (threads: a scenario's ranks; MPI: a node's): mocked GPUs, round-robin as on real ones
  // (each rank keeps its own mocked device: mock_hip::placeOnGpu); 0: a GPU of its own each.
  int ranksPerGpu = 0;
  // Threads: called with every event a rank records, from that rank's thread, as it is recorded
  // (a run in a child process streams them to its parent, so a crash leaves the last ones).
  std::function<void(const model::Event&)> eventSink;
  // Threads on simulated time: makes every scheduling choice instead of the seed's priorities
  // (explore --systematic); must outlive the run. Null: the seed's PCT schedule.
  ScheduleChooser* chooser = nullptr;
};

std::string toString(Runtime runtime);

}  // namespace peerconf::harness::launch
