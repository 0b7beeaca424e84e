// The data plane on GPUs, the parts that need no GPU: how a scenario's `dataplane:` spec becomes
// the kernels' ProtocolRun (and what the kernels cannot run), and how a kernel's outcome and
// device trace become the same Result (outcome, in-band findings, event history) the host driver
// reports, so that C6/C7/C8 judge both alike. Pure functions, built in every configuration (the
// kernels' header is plain C++; nothing here calls into them).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_kernels/protocol_kernels.h"
#include "gpu_kernels/trace.h"
#include "layout/layout.h"
#include "model/dataplane_result.h"
#include "model/dataplane_spec.h"

namespace peerconf::harness::dataplane {

// The most events one rank's device trace may hold (`history` x events a step; 64 bytes each).
inline constexpr std::uint64_t kMaxDeviceTraceEvents = 1u << 20;
// Failed in-band checks a kernel keeps, enough for Result::kMaxFindings findings (at most every
// other note is a wrong sum that an earlier bad pair of its step already explains).
inline constexpr std::uint32_t kDeviceTraceNotes = 2 * model::Result::kMaxFindings;

// Why the GPU data plane cannot run `spec` with `ranks` ranks: one entry a problem, each naming
// the key at fault. Empty when it can.
struct Unsupported {
  std::string key;  // "late", "history", or "" (the scenario's ranks)
  std::string message;
};
std::vector<Unsupported> gpuUnsupported(const model::Spec& spec, int ranks);

// The kernels' run of `spec` for `ranks` ranks with waits bounded by `timeout` (generation 0:
// the caller sets the agreed one). Every late entry becomes one kernel entry for `every` and one
// for each listed step (a listed step `every` already covers is left out: the host fires a late
// entry once a step). Throws std::invalid_argument for what gpuUnsupported names.
gpu_kernels::ProtocolRun toProtocolRun(const model::Spec& spec, int ranks,
                                       std::chrono::milliseconds timeout);

// The trace to request for `spec` with `ranks` ranks: the history's steps and room for all their
// events, and kDeviceTraceNotes notes.
gpu_kernels::Trace traceRequest(const model::Spec& spec, int ranks);

// Fills `result`'s history (the events of steps below result.historySteps, as the host's Recorder
// writes them) and in-band findings (the notes replayed through a host Recorder, so their text is
// the host's) from a kernel's trace. `result` already names layout, generation and rank; `counts`
// says how much the kernel saw (a trace that overflowed its arrays adds a note to the detail).
// `builtIn`: the reference family's layout that ran, whose acknowledgements (one after each read
// or overwrite seen) the host adds; null for a registered layout, whose kernel traced its own.
void applyTrace(const layout::Layout* builtIn, int rank, const gpu_kernels::TraceCounts& counts,
                const std::vector<gpu_kernels::TraceEvent>& events,
                const std::vector<gpu_kernels::TraceEvent>& notes, model::Result& result);

// Fills `result`'s outcome, detail, wait fields, steps and tallies from a kernel's outcome, as
// the host driver words them (a timeout names rank, peer, slot and epoch). `hostBound` is what
// runProtocol was given (for the text of kHostAborted and kHostTimeout).
void applyOutcome(const gpu_kernels::ProtocolOutcome& outcome, const model::Spec& spec, int rank,
                  std::chrono::milliseconds timeout, std::chrono::milliseconds hostBound,
                  model::Result& result);

// The clock domain of events recorded on `device` of this host: GPU clocks are not compared
// between devices, so every device is a domain of its own.
std::uint64_t deviceClockDomain(int device);

}  // namespace peerconf::harness::dataplane
