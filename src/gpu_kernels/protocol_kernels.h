// The data-plane protocol (src/layout) run as GPU kernels: one thread a rank drives a workload
// (layout/workloads.h: the exchange, the one-shot all-reduce, two all-reduces in flight, the
// exchange as a replayed graph) through a layout's rank over GpuMemOps for many steps, with the
// kernel-side faults (late readers and writers, a rank that stops, stale tags pre-filled) and the
// in-band checks. The built-in layouts' kernels are this library's (runProtocol); a registered
// layout's are compiled in its team's .cu from layout_kernel.h and run by runLayout. Plain C++
// header: callers need no GPU headers.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_kernels/trace.h"
#include "layout/engine.h"
#include "layout/layout.h"
#include "layout/payload.h"
#include "layout/wait.h"
#include "layout/workloads.h"

namespace peerconf::gpu_kernels {

// Ranks one kernel can address (the peer table travels as a kernel argument).
inline constexpr int kMaxRanks = 8;

// What the kernels run: the host's workloads (layout/engine.h), every one of them, through the
// templates of layout/workloads.h that the host's sessions run (layout_kernel.h's KernelWorkload).
using Workload = layout::Workload;

enum class Prefill : std::uint8_t {
  kNone,
  kStaleEpochs,    // slots and acknowledgements hold this buffer's pairs of earlier epochs
  kEarlierBuffer,  // slots hold another generation's pairs for the epochs this run uses first
};

// A late rank: before its push (writer) or read (reader) phase of step `step`, or of every
// `every`-th step, it spins for `delayNs` (the delays of every entry that fires add up).
struct Late {
  int rank = -1;
  bool reader = true;
  std::uint64_t every = 0;     // 0: only `step`
  std::uint64_t step = ~0ULL;  // unused when ~0
  std::uint64_t delayNs = 0;
};

struct ProtocolRun {
  static constexpr int kMaxLate = 16;
  // The reference family's layout; for a registered layout only its shape (layout.shape()) and
  // ranks count.
  layout::Layout layout;
  // What the payload carries (a scenario's `dataplane.values`): the shape's, for every layout.
  layout::PayloadDomain values;
  Workload workload = Workload::kExchange;
  std::uint64_t steps = 1000;
  std::uint32_t startEpoch = 0;
  std::uint32_t generation = 1;
  std::uint64_t timeoutNs = 5'000'000'000ULL;  // each wait
  Late late[kMaxLate];
  int lateCount = 0;
  int stopRank = -1;  // this rank stops (writes and reads nothing more) at `stopStep`
  std::uint64_t stopStep = 0;
};

// What one rank's kernel reported. Trivially copyable: it travels through an all-gather.
struct ProtocolOutcome {
  enum class End : std::uint8_t {
    kCompleted,
    kStopped,      // the planted stop
    kWait,         // a wait ended early: `wait` says how (timeout, aborted, overwritten)
    kHostTimeout,  // the kernel did not end even after the host aborted it (it still runs)
    kError,        // the runtime refused a call (detail in `code`)
    kHostAborted,  // the kernel ran past the host's bound; the host wrote the abort word into
                   // every buffer and the kernel ended (`wait`: where it stopped)
  };
  End end = End::kError;
  int code = 0;
  layout::Wait wait;
  std::uint64_t stepsDone = 0;
  layout::Tally tally;
  std::uint64_t kernelNs = 0;  // device clock, first step to last
  std::uint64_t hostNs = 0;    // launch to completion, host clock
  TraceCounts trace;           // what the trace recorded (runProtocol with a Trace)
};

// A trace to record during runProtocol: what to record, and (out) what was recorded.
struct Trace {
  std::uint64_t historySteps = 0;
  std::uint32_t eventCapacity = 0;
  std::uint32_t noteCapacity = 0;
  bool recordAcks = false;         // a registered layout's acknowledgements (TraceLog)
  std::vector<TraceEvent> events;  // out: min(counts.events, eventCapacity) events
  std::vector<TraceEvent> notes;   // out: min(counts.notes, noteCapacity) notes
};

std::string toString(ProtocolOutcome::End end);

// Every rank's buffer as this rank maps it (device pointers).
struct Peers {
  layout::Word* at[kMaxRanks];
};

// What one rank's kernel is launched with (the kernels take its fields one by one).
struct KernelArgs {
  ProtocolRun run;
  int rank = 0;
  Peers peers{};
  TraceLog log;
  bool traced = false;             // record into `log` (else no observer)
  ProtocolOutcome* out = nullptr;  // device memory
};

// Pre-fills this rank's buffer at `ownBuffer` (a device pointer) with the stale tags and payloads
// of `prefill`, tagged with `generation` (kStaleEpochs: this run's; kEarlierBuffer: another's),
// by a kernel. Synchronous.
void prefill(const ProtocolRun& run, int rank, std::uint64_t ownBuffer, Prefill prefill,
             std::uint32_t generation);

// Runs the protocol on the current device: `buffers[r]` is rank r's buffer as this rank maps it.
// Every wait and every late delay of the kernel watches the abort word, and the step loop reads
// it every 256 steps. Waits for the kernel for at most `hostBound`; past it, writes this rank's
// abort word (run.generation) into every buffer from a second kernel, so that every rank's
// kernel ends (kHostAborted), and waits `grace` more; a kernel that still runs is kHostTimeout
// (the caller must end the process: its buffer cannot be freed under it). With `trace`, the
// kernel records into device memory and the trace is copied back after the run. Never throws
// for what the protocol reports.
ProtocolOutcome runProtocol(const ProtocolRun& run, int rank,
                            const std::vector<std::int64_t>& buffers,
                            std::chrono::milliseconds hostBound, Trace* trace = nullptr,
                            std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

// runProtocol for a registered layout: its kernel launched through `launch` (layout::Registered::
// gpuLaunch, registered by layout_kernel.h's registerLayoutKernels), with the same bounds, abort
// and trace.
ProtocolOutcome runLayout(const layout::GpuLaunch& launch, const ProtocolRun& run, int rank,
                          const std::vector<std::int64_t>& buffers,
                          std::chrono::milliseconds hostBound, Trace* trace = nullptr,
                          std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

// Once per process and device, before a caller takes its first device-memory baseline: allocates
// for good the device arrays of a run (its outcome, a trace of up to `eventCapacity` events and
// `noteCapacity` notes), launches every kernel of runProtocol once with no steps (lazy module
// loading, local-memory reservation), the registered layouts' kernels too, and takes the host's
// abort path once with a kernel that runs (the runtime keeps 2 MiB a process the first time a
// kernel is launched beside one still running), so that later runs allocate no device memory a
// free-memory comparison could see. False when the runtime refused (runs then allocate their own
// arrays).
bool warmUp(std::uint32_t eventCapacity, std::uint32_t noteCapacity);

// Gives the built-in layouts written against the protocol API (layout/low_latency.h: low-latency
// and its control) their kernels in the registry (CUDA builds: low_latency.cu). Called once, at
// start-up, by the GPU data plane (harness/dataplane/device_gpu.cc).
void registerBuiltinLayoutKernels();

// The number of devices the runtime reports (0 when none or when it refuses).
int deviceCount();
// hipSetDevice; false when refused.
bool setDevice(int device);
// hipGetDevice: the current device, or -1 when refused.
int currentDevice();
// Free and total bytes of the current device (hipMemGetInfo); false when refused.
bool memInfo(std::size_t* freeBytes, std::size_t* totalBytes);
// "cuda" or "hip": the dialect this library was compiled in.
const char* dialect();

}  // namespace peerconf::gpu_kernels
