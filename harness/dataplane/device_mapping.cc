// The data plane on GPUs: spec -> ProtocolRun, and kernel outcome and trace -> Result.
#include "dataplane/device_mapping.h"

#include <algorithm>
#include <stdexcept>

#include "dataplane/driver.h"
#include "dataplane/recorder.h"
#include "layout/engine.h"
#include "layout/layout_names.h"
#include "layout/payload.h"

namespace peerconf::harness::dataplane {

using model::DataplaneEvent;
using model::DataplaneEventKind;
using model::DataplaneOutcome;
using model::Late;
using model::makeLayout;
using model::Result;
using model::Role;
using model::Spec;

// The device trace's kinds are the host history's, one for one.
static_assert(static_cast<int>(gpu_kernels::TraceKind::kPush) ==
              static_cast<int>(DataplaneEventKind::kPush));
static_assert(static_cast<int>(gpu_kernels::TraceKind::kRead) ==
              static_cast<int>(DataplaneEventKind::kRead));
static_assert(static_cast<int>(gpu_kernels::TraceKind::kOverwriteSeen) ==
              static_cast<int>(DataplaneEventKind::kOverwriteSeen));
static_assert(static_cast<int>(gpu_kernels::TraceKind::kZero) ==
              static_cast<int>(DataplaneEventKind::kZero));
static_assert(static_cast<int>(gpu_kernels::TraceKind::kReduced) ==
              static_cast<int>(DataplaneEventKind::kReduced));
static_assert(static_cast<int>(gpu_kernels::TraceKind::kAck) ==
              static_cast<int>(DataplaneEventKind::kAck));
static_assert(static_cast<int>(gpu_kernels::TraceKind::kRearm) ==
              static_cast<int>(DataplaneEventKind::kRearm));

namespace {

using gpu_kernels::ProtocolOutcome;
using gpu_kernels::ProtocolRun;
using gpu_kernels::TraceEvent;
using gpu_kernels::TraceKind;

// The kernel entries of one spec late entry (see toProtocolRun).
std::vector<gpu_kernels::Late> kernelLates(const Late& late) {
  std::vector<gpu_kernels::Late> out;
  gpu_kernels::Late base;
  base.rank = late.rank;
  base.reader = late.role == Role::kReader;
  base.delayNs = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(late.delay).count());
  if (late.every > 0) {
    gpu_kernels::Late every = base;
    every.every = late.every;
    out.push_back(every);
  }
  std::vector<std::uint64_t> steps = late.steps;
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  for (std::uint64_t step : steps) {
    if (late.every > 0 && step > 0 && step % late.every == 0) continue;
    gpu_kernels::Late one = base;
    one.step = step;
    out.push_back(one);
  }
  return out;
}

std::size_t kernelLateCount(const Spec& spec) {
  std::size_t n = 0;
  for (const Late& late : spec.late) n += kernelLates(late).size();
  return n;
}

// A registered layout's (not one of the reference family's): its kernels record its
// acknowledgements; the host adds the reference family's.
bool registered(const Spec& spec) { return !layout::layoutKindFromName(spec.layout).has_value(); }

// The events of one of the driver's steps: of each collective it runs (two under two-in-flight).
std::uint64_t eventsPerStep(const Spec& spec, int ranks) {
  // rearm-before-read records a re-arm per peer a step, as a registered layout may.
  return model::collectivesPerStep(spec.workload) *
         gpu_kernels::traceEventsPerStep(ranks, model::readsAllReduceInputs(spec.workload),
                                         registered(spec) || spec.layout == "rearm-before-read");
}

std::uint64_t eventsFor(const Spec& spec, int ranks) {
  const std::uint64_t steps = std::min(spec.history, spec.steps);
  // Plus the first step's zeroing (zero-then-push): one event a peer.
  return steps * eventsPerStep(spec, ranks) + static_cast<std::uint64_t>(ranks > 1 ? ranks - 1 : 0);
}

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

std::vector<Unsupported> gpuUnsupported(const Spec& spec, int ranks) {
  std::vector<Unsupported> out;
  if (ranks > gpu_kernels::kMaxRanks) {
    out.push_back({"", "the GPU data plane runs at most " + std::to_string(gpu_kernels::kMaxRanks) +
                           " ranks (one kernel's peer table), the scenario has " +
                           std::to_string(ranks)});
  }
  if (registered(spec)) {
    const layout::Registered* entry = layout::findLayout(spec.layout);
    if (entry == nullptr || !entry->gpuLaunch) {
      out.push_back({"layout", "layout " + spec.layout +
                                   " has no GPU kernels in this executable: a .cu of its team's "
                                   "build registers them with gpu_kernels::registerLayoutKernels "
                                   "(gpu_kernels/layout_kernel.h); until then it runs on the host "
                                   "launchers (threads, MPI)"});
    }
  }
  if (spec.layout == "ack-before-read") {
    out.push_back({"layout",
                   "ack-before-read is caught from the order of a rank's acknowledgements and "
                   "reads, and the GPU trace does not record acknowledgements (the host adds the "
                   "reference family's, after each read)"});
  }
  if (spec.layout == "device-scope-fence") {
    out.push_back({"layout",
                   "device-scope-fence is a control for simulated weak memory (--clock sim), "
                   "which gives scopes their meaning: the GPU kernels run every fence at system "
                   "scope, so on a GPU its fence orders the payload as a correct one would"});
  }
  if (spec.layout == "reader-without-acquire") {
    out.push_back({"layout",
                   "reader-without-acquire is a control for simulated weak memory (--clock sim): "
                   "on a GPU whether its payload loads are satisfied before its tag's is the "
                   "hardware's and the compiler's choice, so it cannot be made to fail every run"});
  }
  if (spec.layout == "relaxed-tag") {
    out.push_back({"layout",
                   "relaxed-tag is a control for simulated weak memory (--clock sim): on a GPU "
                   "whether its tag overtakes its payload is the hardware's choice, so it cannot "
                   "be made to fail every run"});
  }
  const std::size_t lates = kernelLateCount(spec);
  if (lates > static_cast<std::size_t>(ProtocolRun::kMaxLate)) {
    out.push_back({"late", "the GPU data plane takes at most " +
                               std::to_string(ProtocolRun::kMaxLate) +
                               " late entries (each `every` and each listed step counts one), "
                               "this one has " +
                               std::to_string(lates)});
  }
  const std::uint64_t events = eventsFor(spec, ranks);
  if (events > kMaxDeviceTraceEvents) {
    const std::uint64_t perStep = eventsPerStep(spec, ranks);
    out.push_back(
        {"history", "the GPU data plane records at most " + std::to_string(kMaxDeviceTraceEvents) +
                        " events a rank in device memory; " + std::to_string(spec.history) +
                        " history steps of " + std::to_string(perStep) + " events need " +
                        std::to_string(events) + ": lower 'history' to " +
                        std::to_string((kMaxDeviceTraceEvents -
                                        static_cast<std::uint64_t>(ranks > 1 ? ranks - 1 : 0)) /
                                       perStep) +
                        " or less"});
  }
  return out;
}

ProtocolRun toProtocolRun(const Spec& spec, int ranks, std::chrono::milliseconds timeout) {
  const auto problems = gpuUnsupported(spec, ranks);
  if (!problems.empty()) throw std::invalid_argument(problems.front().message);
  ProtocolRun run;
  run.layout = registered(spec)
                   ? layout::Layout::of(layout::LayoutKind::kReference, model::shapeOf(spec, ranks))
                   : makeLayout(spec, ranks);
  run.workload = model::engineWorkload(spec.workload);
  run.values = model::shapeOf(spec, ranks).values;
  run.steps = spec.steps;
  run.startEpoch = spec.startEpoch;
  run.generation = 0;
  run.timeoutNs = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count());
  run.lateCount = 0;
  for (const Late& late : spec.late) {
    for (const gpu_kernels::Late& entry : kernelLates(late)) run.late[run.lateCount++] = entry;
  }
  if (spec.stop) {
    run.stopRank = spec.stop->rank;
    run.stopStep = spec.stop->step;
  }
  return run;
}

gpu_kernels::Trace traceRequest(const Spec& spec, int ranks) {
  gpu_kernels::Trace trace;
  // The trace's steps are the layout's: collectives, two a step under two-in-flight (as the host
  // driver's history, describeRun).
  trace.historySteps =
      std::min(spec.history, spec.steps) * model::collectivesPerStep(spec.workload);
  trace.eventCapacity =
      static_cast<std::uint32_t>(std::min(eventsFor(spec, ranks), kMaxDeviceTraceEvents));
  trace.noteCapacity = kDeviceTraceNotes;
  trace.recordAcks = registered(spec);
  return trace;
}

void applyTrace(const layout::Layout* builtIn, int rank, const gpu_kernels::TraceCounts& counts,
                const std::vector<TraceEvent>& events, const std::vector<TraceEvent>& notes,
                Result& result) {
  result.history.reserve(result.history.size() + events.size());
  for (const TraceEvent& t : events) {
    if (t.step >= result.historySteps) continue;
    DataplaneEvent e;
    e.kind = static_cast<DataplaneEventKind>(t.kind);
    e.peer = t.peer;
    e.slot = t.slot;
    e.step = t.step;
    e.epoch = t.epoch;
    e.tag = t.tag;
    e.aux = t.aux;
    e.tNs = static_cast<std::int64_t>(t.tNs);
    e.t2Ns = static_cast<std::int64_t>(t.t2Ns);
    e.check = t.check;
    if (e.kind == DataplaneEventKind::kRead) e.want = t.expected;
    e.source = t.source;
    e.tagless = t.tagless != 0;
    result.history.push_back(e);
    if (builtIn != nullptr &&
        (e.kind == DataplaneEventKind::kRead || e.kind == DataplaneEventKind::kOverwriteSeen)) {
      // The reference family acknowledges every pair it read or found overwritten, with the
      // step's tag (protocol.h); the kernels do not trace it, the host knows it.
      DataplaneEvent ack;
      ack.kind = DataplaneEventKind::kAck;
      ack.peer = e.peer;
      ack.step = e.step;
      ack.epoch = e.epoch;
      ack.tag = builtIn->tag(result.generation, e.epoch);
      ack.tNs = e.tNs;
      result.history.push_back(ack);
    }
  }
  // The findings: the failed checks replayed, in order, through the host's own observer, which
  // records no history here (0 steps) and words each finding as it does on the host.
  Recorder recorder(rank, 0, result);
  for (const TraceEvent& t : notes) {
    switch (t.kind) {
      case TraceKind::kRead:
        recorder.readPair(t.peer, t.step, t.epoch, t.slot,
                          layout::Taken{t.tag, t.aux, t.expected, t.later != 0, t.tagless != 0},
                          static_cast<layout::PairCheck>(t.check));
        break;
      case TraceKind::kOverwriteSeen:
        recorder.overwriteSeen(t.peer, t.step, t.epoch, t.slot, t.tag);
        break;
      case TraceKind::kReduced:
        recorder.reduced(t.step, t.epoch, t.check != 0);
        break;
      case TraceKind::kPush:
      case TraceKind::kZero:
      case TraceKind::kAck:
      case TraceKind::kRearm:
        break;
    }
  }
  std::string lost;
  if (counts.events > events.size()) {
    lost = std::to_string(counts.events - events.size()) + " history events";
  }
  if (counts.notes > notes.size() && result.findings.size() < Result::kMaxFindings) {
    lost += (lost.empty() ? "" : " and ") + std::to_string(counts.notes - notes.size()) +
            " failed checks";
  }
  if (!lost.empty()) {
    result.detail += (result.detail.empty() ? "" : "; ") + std::string("the device trace lost ") +
                     lost + " (its arrays were full)";
  }
}

void applyOutcome(const ProtocolOutcome& outcome, const Spec& spec, int rank,
                  std::chrono::milliseconds timeout, std::chrono::milliseconds hostBound,
                  Result& result) {
  result.stepsDone = outcome.stepsDone;
  result.pairsRead = outcome.tally.pairs;
  result.pairsGenuine = outcome.tally.genuine;
  result.overwrites = outcome.tally.overwritten;
  result.stale = outcome.tally.stale;
  result.wrongResults = outcome.tally.wrongResults;
  const std::string me = "rank " + std::to_string(rank);
  switch (outcome.end) {
    case ProtocolOutcome::End::kCompleted:
      result.outcome = DataplaneOutcome::kCompleted;
      result.detail.clear();
      break;
    case ProtocolOutcome::End::kStopped:
      result.outcome = DataplaneOutcome::kStopped;
      result.detail = stopDetail(rank, spec.stop ? spec.stop->step : outcome.stepsDone);
      break;
    case ProtocolOutcome::End::kWait:
      describeWait(outcome.wait, spec, timeout, result);
      break;
    case ProtocolOutcome::End::kHostAborted:
      result.outcome = DataplaneOutcome::kTimeout;
      result.waitWhat = "host-bound";
      result.waitStep = outcome.stepsDone;
      result.detail = me + "'s kernel ran past the host's bound of " + ms(hostBound) + " (step " +
                      std::to_string(outcome.stepsDone) + " of " + std::to_string(spec.steps) +
                      "): the host aborted the data plane on every rank";
      break;
    case ProtocolOutcome::End::kHostTimeout:
      result.outcome = DataplaneOutcome::kTimeout;
      result.waitWhat = "host-bound";
      result.detail =
          me + "'s kernel still ran after the host's bound of " + ms(hostBound) + " and its abort";
      break;
    case ProtocolOutcome::End::kError:
      result.outcome = DataplaneOutcome::kError;
      result.detail = "the GPU runtime refused the data plane's kernel on " + me + " (error " +
                      std::to_string(outcome.code) + ")";
      break;
  }
}

std::uint64_t deviceClockDomain(int device) {
  return clockDomain() ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(device + 2));
}

}  // namespace peerconf::harness::dataplane
