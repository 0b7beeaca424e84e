// The data plane's kernel over any layout written against the protocol API (layout/register.h):
// one thread a rank drives a workload (layout/workloads.h, the templates the host's sessions run)
// through the layout's rank over GpuMemOps for many steps, with the kernel-side faults (late
// readers and writers, a rank that stops) and the trace that C6/C7 judge; and
// registerLayoutKernels, which a team's .cu calls to give its registered layout these kernels under
// `--runtime gpu`:
//
//   // counter_flags.cu, compiled by nvcc (or hipcc) into the team's executable
//   #include "gpu_kernels/layout_kernel.h"
//   void registerCounterFlagsGpu() {
//     peerconf::gpu_kernels::registerLayoutKernels("myteam/counter-flags", CounterFlags{});
//   }
//
// The layout's rank (and whatever it calls) must be PEERCONF_HD. Device code: include it from .cu
// files only (gpu_api.h needs the GPU compiler). The built-in layouts' kernel
// (protocol_kernels.cu) runs the same step loop.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/protocol_kernels.h"
#include "gpu_kernels/trace.h"
#include "layout/engine.h"
#include "layout/rank_base.h"
#include "layout/wait.h"
#include "layout/workloads.h"

namespace peerconf::gpu_kernels {

namespace detail {

// Spins for `ns`, or until another rank (or the host) aborts the run.
template <class Rank>
__device__ void spinFor(const Rank& rank, std::uint64_t ns) {
  if (ns == 0) return;
  const std::uint64_t until = GpuMemOps::nowNs() + ns;
  std::uint32_t spins = 0;
  while (GpuMemOps::nowNs() < until) {
    if ((++spins & 63u) == 0 && rank.abortedBy() >= 0) return;
    GpuMemOps::pause(spins, nullptr, 0);
  }
}

// The delay of `rank`'s writer (reader) phase of `step`: the late entries that fire, added up.
__device__ inline std::uint64_t lateDelay(const ProtocolRun& run, int rank, bool reader,
                                          std::uint64_t step) {
  std::uint64_t ns = 0;
  for (int i = 0; i < run.lateCount && i < ProtocolRun::kMaxLate; ++i) {
    const Late& late = run.late[i];
    if (late.rank != rank || late.reader != reader) continue;
    const bool fires =
        step == late.step || (late.every != 0 && step != 0 && step % late.every == 0);
    if (fires) ns += late.delayNs;
  }
  return ns;
}

// The observer of a kernel: none (the benchmark's runs), or the trace.
struct NoTrace {
  using Observer = layout::NullObserver;
  __device__ static Observer make(const TraceLog&) { return Observer{}; }
  __device__ static TraceCounts counts(const Observer&) { return TraceCounts{}; }
};
struct WithTrace {
  using Observer = TraceRecorder<GpuMemOps>;
  __device__ static Observer make(const TraceLog& log) { return Observer(log); }
  __device__ static TraceCounts counts(const Observer& o) { return o.counts(); }
};

// A kernel's workloads: one kernel a family; a control runs its family's kernel with the flag the
// host's session sets (layout/register.h's RankSession).
enum class Family : std::uint8_t { kExchange, kAllReduce, kTwoInFlight, kGraphReplay };

PEERCONF_HD constexpr Family familyOf(Workload workload) {
  switch (workload) {
    case Workload::kExchange:
      return Family::kExchange;
    case Workload::kAllReduce:
      return Family::kAllReduce;
    case Workload::kTwoInFlight:
    case Workload::kTwoInFlightSharedSlots:
      return Family::kTwoInFlight;
    case Workload::kGraphReplay:
    case Workload::kGraphReplayCapturedEpoch:
      return Family::kGraphReplay;
  }
  return Family::kExchange;
}

// Workload `workload` of family F on a rank of type Rank: a step's push and read phases through
// layout/workloads.h's templates, as the host's session calls them, with the state the host's
// session keeps (the replayed graph's epoch counter: one kernel runs every replay here, so the
// counter lives in its thread, as it lives in the host's session).
template <Family F, class Rank>
struct KernelWorkload {
  bool shared = false;         // two-in-flight-shared-slots: B reuses A's epochs and slots
  layout::ReplayEpoch replay;  // graph-replay: the kernel's epoch (captured: the control)

  __device__ explicit KernelWorkload(Workload workload)
      : shared(workload == Workload::kTwoInFlightSharedSlots) {
    replay.capturedEpoch = workload == Workload::kGraphReplayCapturedEpoch;
  }
  __device__ layout::Wait pushPhase(Rank& rank, std::uint64_t step, std::uint32_t epoch) {
    if constexpr (F == Family::kExchange) {
      return layout::ExchangeOf<Rank>::pushPhase(rank, step, epoch);
    } else if constexpr (F == Family::kAllReduce) {
      return layout::AllReduceOf<Rank>::pushPhase(rank, step, epoch);
    } else if constexpr (F == Family::kTwoInFlight) {
      return layout::TwoInFlightOf<Rank>::pushPhase(rank, step, epoch, shared);
    } else {
      return layout::GraphReplayOf<Rank>::pushPhase(rank, step, epoch, replay);
    }
  }
  __device__ layout::Wait readPhase(Rank& rank, std::uint64_t step, std::uint32_t epoch,
                                    layout::Tally& tally) {
    if constexpr (F == Family::kExchange) {
      return layout::ExchangeOf<Rank>::readPhase(rank, step, epoch, tally);
    } else if constexpr (F == Family::kAllReduce) {
      return layout::AllReduceOf<Rank>::readPhase(rank, step, epoch, tally);
    } else if constexpr (F == Family::kTwoInFlight) {
      return layout::TwoInFlightOf<Rank>::readPhase(rank, step, epoch, tally, shared);
    } else {
      return layout::GraphReplayOf<Rank>::readPhase(rank, step, epoch, tally, replay);
    }
  }
};

// The run's steps through `workload` (a KernelWorkload) on `rank`, this kernel's rank `me`, as the
// host driver loops them (harness/dataplane/driver.cc): `step` and `epoch` are the driver's (the
// late delays, the stop and stepsDone count them; under two-in-flight the layout, the trace and a
// wait see collectives, two a step); writes every field of `out` but the trace's counts.
template <class W, class Rank>
__device__ void runSteps(W& workload, Rank& rank, const ProtocolRun& run, int me,
                         ProtocolOutcome& out) {
  layout::Tally tally;
  layout::Wait wait;
  ProtocolOutcome::End end = ProtocolOutcome::End::kCompleted;
  std::uint64_t done = 0;
  const std::uint64_t start = GpuMemOps::nowNs();
  for (std::uint64_t step = 0; step < run.steps; ++step) {
    if (me == run.stopRank && step == run.stopStep) {
      end = ProtocolOutcome::End::kStopped;
      break;
    }
    const std::uint32_t epoch = run.startEpoch + static_cast<std::uint32_t>(step);
    // A run that never waits (a rank far ahead) still hears an abort.
    if ((step & 255u) == 0) {
      const int by = rank.abortedBy();
      if (by >= 0) {
        wait.status = layout::Status::kAborted;
        wait.abortedBy = by;
        wait.rank = me;
        wait.step = step;
        wait.epoch = epoch;
        break;
      }
    }
    spinFor(rank, lateDelay(run, me, false, step));
    wait = workload.pushPhase(rank, step, epoch);
    if (!wait.ok()) break;
    spinFor(rank, lateDelay(run, me, true, step));
    wait = workload.readPhase(rank, step, epoch, tally);
    if (!wait.ok()) break;
    ++done;
  }
  if (!wait.ok()) {
    end = ProtocolOutcome::End::kWait;
    // A rank that gave up says so, so that no peer waits out its own deadline for it.
    if (wait.status != layout::Status::kAborted) rank.abort();
  }
  out.end = end;
  out.code = 0;
  out.wait = wait;
  out.stepsDone = done;
  out.tally = tally;
  out.kernelNs = GpuMemOps::nowNs() - start;
}

// One rank of layout L (the value `value`) running run's workload. The arguments one by one (as
// protocol_kernels.cu's kernel takes them): a by-value KernelArgs holding the peer table whose
// address the rank takes costs hipcc's AMDGPU back end minutes.
template <class L, Family F, class Tracing>
__global__ void layoutKernel(L value, ProtocolRun run, int me, Peers peers, TraceLog log,
                             ProtocolOutcome* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  using Observer = typename Tracing::Observer;
  using Rank = typename L::template Rank<GpuMemOps, Observer>;
  Observer observer = Tracing::make(log);
  layout::Context context;
  context.shape = run.layout.shape();
  context.shape.values = run.values;
  context.shape.startEpoch = run.startEpoch;
  context.rank = me;
  context.generation = run.generation;
  context.buffers = peers.at;
  context.timeoutNs = run.timeoutNs;
  Rank rank(value, context, observer);
  KernelWorkload<F, Rank> workload(run.workload);
  runSteps(workload, rank, run, me, *out);
  out->trace = Tracing::counts(observer);
}

template <class L, Family F>
int launch(const L& value, hipStream_t stream, const KernelArgs& args) {
  if (args.traced) {
    layoutKernel<L, F, WithTrace>
        <<<1, 1, 0, stream>>>(value, args.run, args.rank, args.peers, args.log, args.out);
  } else {
    layoutKernel<L, F, NoTrace>
        <<<1, 1, 0, stream>>>(value, args.run, args.rank, args.peers, args.log, args.out);
  }
  return static_cast<int>(hipGetLastError());
}

}  // namespace detail

// Gives the registered layout `name` (layout::registerLayout first) its kernels for
// `--runtime gpu`: every workload (the exchange, the all-reduce, two-in-flight, graph-replay and
// their controls), traced and not, over layout type L with the value `layout`. A workload the
// layout does not support is refused before any launch (Engine::invalidReason). Throws
// std::invalid_argument when no layout has that name.
template <class L>
void registerLayoutKernels(std::string_view name, L layout) {
  static_assert(std::is_trivially_copyable_v<L>,
                "a layout is a kernel argument: trivially copyable");
  layout::registerGpuLaunch(name, [layout](void* stream, const void* raw) -> int {
    const KernelArgs& args = *static_cast<const KernelArgs*>(raw);
    const auto s = static_cast<hipStream_t>(stream);
    switch (detail::familyOf(args.run.workload)) {
      case detail::Family::kExchange:
        break;
      case detail::Family::kAllReduce:
        return detail::launch<L, detail::Family::kAllReduce>(layout, s, args);
      case detail::Family::kTwoInFlight:
        return detail::launch<L, detail::Family::kTwoInFlight>(layout, s, args);
      case detail::Family::kGraphReplay:
        return detail::launch<L, detail::Family::kGraphReplay>(layout, s, args);
    }
    return detail::launch<L, detail::Family::kExchange>(layout, s, args);
  });
}

}  // namespace peerconf::gpu_kernels
