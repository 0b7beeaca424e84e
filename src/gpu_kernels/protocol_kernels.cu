// The data-plane protocol as GPU kernels: the workloads of layout/workloads.h (exchange,
// all-reduce, two-in-flight, graph-replay and their controls) over the reference family's rank
// instantiated over GpuMemOps (system-scope acquire/release), one thread a rank, every wait bounded
// by the device clock (layout_kernel.h's step loop); and the host side of every data-plane kernel,
// the built-in layouts' and the registered ones' (runLayout): bounds, abort, trace. Written with
// HIP names; nvcc builds it through gpu_api.h, hipcc as it is.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/layout_kernel.h"
#include "gpu_kernels/protocol_kernels.h"
#include "layout/payload.h"
#include "layout/protocol.h"

namespace peerconf::gpu_kernels {

namespace {

using layout::Word;

using detail::Family;
using detail::NoTrace;
using detail::WithTrace;

// A rank of the built-in layouts: layout::Protocol (the reference family, every kind). The
// arguments one by one, not as a KernelArgs: hipcc's AMDGPU back end takes minutes (more than 40
// here) over a kernel whose by-value struct argument holds the peer table it takes the address
// of; nvcc does not mind.
template <detail::Family F, class Tracing>
__global__ void protocolKernel(ProtocolRun run, int rank, Peers peers, TraceLog log,
                               ProtocolOutcome* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  using Observer = typename Tracing::Observer;
  Observer observer = Tracing::make(log);
  layout::Context context;
  context.shape = run.layout.shape();
  context.shape.values = run.values;
  context.shape.startEpoch = run.startEpoch;
  context.rank = rank;
  context.generation = run.generation;
  context.buffers = peers.at;
  context.timeoutNs = run.timeoutNs;
  using Rank = layout::Protocol<GpuMemOps, Observer>;
  Rank proto(run.layout, context, observer);
  detail::KernelWorkload<F, Rank> workload(run.workload);
  detail::runSteps(workload, proto, run, rank, *out);
  out->trace = Tracing::counts(observer);
}

// The host's abort: `word` into the abort word of every buffer, as Protocol::abort() stores it.
__global__ void abortKernel(Peers peers, int ranks, std::size_t abortWord, Word word) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  for (int r = 0; r < ranks; ++r) GpuMemOps::storeRelease(peers.at[r] + abortWord, word);
}

// Rank `writer`'s payload word `i` of `epoch` for `reader`, as the workload writes it (the
// all-reduces' inputs name no reader; as the host's prefill, two-in-flight's are A's).
__device__ Word payloadOf(const ProtocolRun& run, std::uint32_t generation, int writer, int reader,
                          std::uint32_t epoch, int i) {
  const bool inputs = run.workload == Workload::kAllReduce ||
                      run.workload == Workload::kTwoInFlight ||
                      run.workload == Workload::kTwoInFlightSharedSlots;
  return run.values.natural(generation, writer, inputs ? layout::kAnyReader : reader, epoch, i);
}

// One thread a (slot, source) pair of this rank's buffer.
__global__ void prefillKernel(ProtocolRun run, int rank, Word* own, Prefill prefill,
                              std::uint32_t generation) {
  const layout::Layout& l = run.layout;
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index < l.ranks) {
    // kStaleEpochs: acknowledgements of an epoch before the run's first.
    if (prefill == Prefill::kStaleEpochs && index != rank) {
      GpuMemOps::storeRelaxed(own + l.ackWord(index), l.tag(generation, run.startEpoch - 1));
    }
  }
  if (index >= l.slots() * l.ranks) return;
  const int slotIndex = index / l.ranks;
  const int source = index % l.ranks;
  if (source == rank) return;
  // The epoch that lands in this slot: the last one before the run (stale epochs), or the first
  // one of the run (an earlier buffer's pair for the very epoch this run will use).
  std::uint32_t epoch = 0;
  for (std::uint32_t j = 1; j <= static_cast<std::uint32_t>(l.slots()); ++j) {
    const std::uint32_t e =
        prefill == Prefill::kStaleEpochs ? run.startEpoch - j : run.startEpoch + j - 1;
    if (l.slotOf(e) == slotIndex) epoch = e;
  }
  Word* pair = own + l.pairWord(slotIndex, source);
  for (int i = 0; i < l.payloadWords; ++i) {
    GpuMemOps::storeRelaxed(pair + l.payloadAt(i),
                            payloadOf(run, generation, source, rank, epoch, i));
  }
  for (int c = 0; c < l.chunks(); ++c) {
    GpuMemOps::storeRelease(pair + l.chunkTagWord(c), l.tag(generation, epoch));
  }
}

// The built-in layouts' kernel of family F, traced or not, on `stream`.
template <Family F>
void launchProtocol(hipStream_t stream, const KernelArgs& args) {
  if (args.traced) {
    protocolKernel<F, WithTrace>
        <<<1, 1, 0, stream>>>(args.run, args.rank, args.peers, args.log, args.out);
  } else {
    protocolKernel<F, NoTrace>
        <<<1, 1, 0, stream>>>(args.run, args.rank, args.peers, args.log, args.out);
  }
}

bool check(hipError_t error, ProtocolOutcome& out) {
  if (error == hipSuccess) return true;
  out.end = ProtocolOutcome::End::kError;
  out.code = static_cast<int>(error);
  (void)hipGetLastError();
  return false;
}

}  // namespace

std::string toString(ProtocolOutcome::End end) {
  switch (end) {
    case ProtocolOutcome::End::kCompleted:
      return "completed";
    case ProtocolOutcome::End::kStopped:
      return "stopped";
    case ProtocolOutcome::End::kWait:
      return "wait";
    case ProtocolOutcome::End::kHostTimeout:
      return "host-timeout";
    case ProtocolOutcome::End::kError:
      return "error";
    case ProtocolOutcome::End::kHostAborted:
      return "host-aborted";
  }
  return "unknown";
}

void prefill(const ProtocolRun& run, int rank, std::uint64_t ownBuffer, Prefill kind,
             std::uint32_t generation) {
  if (kind == Prefill::kNone) return;
  const int threads = run.layout.slots() * run.layout.ranks;
  const int count = threads > run.layout.ranks ? threads : run.layout.ranks;
  prefillKernel<<<(count + 127) / 128, 128>>>(run, rank, reinterpret_cast<Word*>(ownBuffer), kind,
                                              generation);
  (void)hipDeviceSynchronize();
}

namespace {

// Device memory of one run: the outcome and the trace's arrays. Borrowed from the device's
// persistent arrays (warmUp) when they are large enough, else allocated and freed with the object.
struct DeviceArrays {
  ProtocolOutcome* outcome = nullptr;
  TraceEvent* events = nullptr;
  TraceEvent* notes = nullptr;
  bool owned = true;
  ~DeviceArrays() {
    if (!owned) return;
    for (void* p :
         {static_cast<void*>(outcome), static_cast<void*>(events), static_cast<void*>(notes)}) {
      if (p != nullptr) (void)hipFree(p);
    }
  }
};

// Per device: the arrays warmUp allocated for good (one rank a process runs one run at a time).
struct Persistent {
  ProtocolOutcome* outcome = nullptr;
  TraceEvent* events = nullptr;
  std::uint32_t eventCapacity = 0;
  TraceEvent* notes = nullptr;
  std::uint32_t noteCapacity = 0;
};
std::mutex persistentMutex;
std::map<int, Persistent> persistentArrays;

// The device's persistent arrays when they hold `log`'s capacities; false otherwise.
bool borrow(const TraceLog& log, DeviceArrays& arrays) {
  int device = -1;
  if (hipGetDevice(&device) != hipSuccess) {
    (void)hipGetLastError();
    return false;
  }
  std::lock_guard lock(persistentMutex);
  const auto it = persistentArrays.find(device);
  if (it == persistentArrays.end() || it->second.outcome == nullptr ||
      log.eventCapacity > it->second.eventCapacity || log.noteCapacity > it->second.noteCapacity) {
    return false;
  }
  arrays.outcome = it->second.outcome;
  arrays.events = it->second.events;
  arrays.notes = it->second.notes;
  arrays.owned = false;
  return true;
}

std::uint64_t nsSince(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

// Polls `stream` until it is done or `bound` (from `start`) has passed; the stream's state.
hipError_t waitFor(hipStream_t stream, std::chrono::steady_clock::time_point start,
                   std::chrono::milliseconds bound) {
  hipError_t state = hipErrorNotReady;
  while ((state = hipStreamQuery(stream)) == hipErrorNotReady) {
    if (std::chrono::steady_clock::now() - start > bound) return state;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return state;
}

// Launches one rank's kernel on a stream with its arguments: the runtime's error code.
using Launch = std::function<hipError_t(hipStream_t, const KernelArgs&)>;

// The host side of every data-plane kernel: the device arrays, the launch, the host's bound and
// abort, the trace copied back.
ProtocolOutcome runKernel(const Launch& launch, const ProtocolRun& run, int rank,
                          const std::vector<std::int64_t>& buffers,
                          std::chrono::milliseconds hostBound, Trace* trace,
                          std::chrono::milliseconds grace) {
  ProtocolOutcome out;
  if (buffers.size() > static_cast<std::size_t>(kMaxRanks) ||
      buffers.size() != static_cast<std::size_t>(run.layout.ranks)) {
    out.code = -1;
    return out;
  }
  Peers peers{};
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    peers.at[r] = reinterpret_cast<Word*>(static_cast<std::uintptr_t>(buffers[r]));
  }
  DeviceArrays device;
  TraceLog log;
  if (trace != nullptr) {
    log.historySteps = trace->historySteps;
    log.eventCapacity = trace->eventCapacity;
    log.noteCapacity = trace->noteCapacity;
    log.recordAcks = trace->recordAcks;
  }
  if (!borrow(log, device)) {
    if (!check(hipMalloc(reinterpret_cast<void**>(&device.outcome), sizeof(ProtocolOutcome)),
               out)) {
      return out;
    }
    if (log.eventCapacity > 0 && !check(hipMalloc(reinterpret_cast<void**>(&device.events),
                                                  sizeof(TraceEvent) * log.eventCapacity),
                                        out)) {
      return out;
    }
    if (log.noteCapacity > 0 && !check(hipMalloc(reinterpret_cast<void**>(&device.notes),
                                                 sizeof(TraceEvent) * log.noteCapacity),
                                       out)) {
      return out;
    }
  }
  if (trace != nullptr) {
    log.events = device.events;
    log.notes = device.notes;
  }
  hipStream_t stream = nullptr;
  if (!check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), out)) return out;
  // The outcome reads as an error until the kernel writes it (a borrowed array holds the last).
  const ProtocolOutcome unset;
  if (!check(hipMemcpy(device.outcome, &unset, sizeof unset, hipMemcpyHostToDevice), out)) {
    (void)hipStreamDestroy(stream);
    return out;
  }
  KernelArgs args;
  args.run = run;
  args.rank = rank;
  args.peers = peers;
  args.log = log;
  args.traced = trace != nullptr;
  args.out = device.outcome;
  const auto start = std::chrono::steady_clock::now();
  if (!check(launch(stream, args), out)) {
    (void)hipStreamDestroy(stream);
    return out;
  }
  // Bounded on the host too: a kernel past the bound is told to stop through the abort word,
  // from a second kernel on a stream of its own (the first one occupies one thread of one SM).
  hipError_t state = waitFor(stream, start, hostBound);
  bool aborted = false;
  if (state == hipErrorNotReady) {
    aborted = true;
    const Word word =
        layout::makeTag(run.generation, layout::kAbortBit | static_cast<std::uint32_t>(rank));
    hipStream_t side = nullptr;
    if (hipStreamCreateWithFlags(&side, hipStreamNonBlocking) == hipSuccess) {
      abortKernel<<<1, 1, 0, side>>>(peers, run.layout.ranks, layout::kAbortWord, word);
      (void)hipStreamSynchronize(side);
      (void)hipStreamDestroy(side);
    }
    (void)hipGetLastError();
    state = waitFor(stream, start, hostBound + grace);
    if (state == hipErrorNotReady) {
      out.end = ProtocolOutcome::End::kHostTimeout;
      out.hostNs = nsSince(start);
      // The kernel still runs on the device memory: neither it nor the stream can be released.
      device.owned = false;
      return out;
    }
  }
  const std::uint64_t hostNs = nsSince(start);
  if (check(state, out) &&
      check(hipMemcpy(&out, device.outcome, sizeof out, hipMemcpyDeviceToHost), out)) {
    out.hostNs = hostNs;
    if (aborted) out.end = ProtocolOutcome::End::kHostAborted;
    if (trace != nullptr) {
      const auto events = static_cast<std::size_t>(
          out.trace.events < log.eventCapacity ? out.trace.events : log.eventCapacity);
      const auto notes = static_cast<std::size_t>(
          out.trace.notes < log.noteCapacity ? out.trace.notes : log.noteCapacity);
      trace->events.resize(events);
      trace->notes.resize(notes);
      if ((events > 0 && !check(hipMemcpy(trace->events.data(), device.events,
                                          sizeof(TraceEvent) * events, hipMemcpyDeviceToHost),
                                out)) ||
          (notes > 0 && !check(hipMemcpy(trace->notes.data(), device.notes,
                                         sizeof(TraceEvent) * notes, hipMemcpyDeviceToHost),
                               out))) {
        trace->events.clear();
        trace->notes.clear();
      }
    }
  }
  (void)hipStreamDestroy(stream);
  return out;
}

}  // namespace

ProtocolOutcome runProtocol(const ProtocolRun& run, int rank,
                            const std::vector<std::int64_t>& buffers,
                            std::chrono::milliseconds hostBound, Trace* trace,
                            std::chrono::milliseconds grace) {
  const Launch launch = [&](hipStream_t stream, const KernelArgs& args) {
    switch (detail::familyOf(run.workload)) {
      case Family::kExchange:
        launchProtocol<Family::kExchange>(stream, args);
        break;
      case Family::kAllReduce:
        launchProtocol<Family::kAllReduce>(stream, args);
        break;
      case Family::kTwoInFlight:
        launchProtocol<Family::kTwoInFlight>(stream, args);
        break;
      case Family::kGraphReplay:
        launchProtocol<Family::kGraphReplay>(stream, args);
        break;
    }
    return hipGetLastError();
  };
  return runKernel(launch, run, rank, buffers, hostBound, trace, grace);
}

ProtocolOutcome runLayout(const layout::GpuLaunch& gpuLaunch, const ProtocolRun& run, int rank,
                          const std::vector<std::int64_t>& buffers,
                          std::chrono::milliseconds hostBound, Trace* trace,
                          std::chrono::milliseconds grace) {
  const Launch launch = [&](hipStream_t stream, const KernelArgs& args) {
    return static_cast<hipError_t>(gpuLaunch(stream, &args));
  };
  return runKernel(launch, run, rank, buffers, hostBound, trace, grace);
}

namespace {

// The host's abort path once, for real: an exchange whose peer never runs, so the kernel spins
// until the host's bound and the abort kernel stops it from a stream of its own while it still
// runs. The first time a process does this the runtime keeps 2 MiB of device memory for good
// (measured on H200, CUDA 13: tests/conformance/runtime_table.yaml host-abort-leftover-*; a second
// abort keeps nothing, the kernels' stack, heap and printf limits stay as they were). Without
// this, the first scenario whose kernel the host aborts showed those 2 MiB as a drop of free
// memory (C3) on every rank: 8 MiB read device-wide with 4 processes on one GPU.
void abortOnce() {
  ProtocolRun run;
  run.layout.ranks = 2;
  run.steps = 1u << 20;
  run.timeoutNs = 60'000'000'000ULL;
  const std::size_t bytes = run.layout.bytes();
  void* own = nullptr;
  void* peer = nullptr;
  if (hipMalloc(&own, bytes) == hipSuccess && hipMalloc(&peer, bytes) == hipSuccess &&
      hipMemset(own, 0, bytes) == hipSuccess && hipMemset(peer, 0, bytes) == hipSuccess) {
    const std::vector<std::int64_t> buffers = {
        static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(own)),
        static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(peer))};
    (void)runProtocol(run, 0, buffers, std::chrono::milliseconds(20));
  }
  for (void* ptr : {own, peer}) {
    if (ptr != nullptr) (void)hipFree(ptr);
  }
  (void)hipGetLastError();
}

}  // namespace

bool warmUp(std::uint32_t eventCapacity, std::uint32_t noteCapacity) {
  int device = -1;
  if (hipGetDevice(&device) != hipSuccess) {
    (void)hipGetLastError();
    return false;
  }
  ProtocolOutcome* anywhere = nullptr;
  {
    std::lock_guard lock(persistentMutex);
    const auto known = persistentArrays.find(device);
    if (known != persistentArrays.end()) return known->second.outcome != nullptr;
    Persistent& p = persistentArrays[device];
    const bool ok =
        hipMalloc(reinterpret_cast<void**>(&p.outcome), sizeof(ProtocolOutcome)) == hipSuccess &&
        hipMalloc(reinterpret_cast<void**>(&p.events), sizeof(TraceEvent) * eventCapacity) ==
            hipSuccess &&
        hipMalloc(reinterpret_cast<void**>(&p.notes), sizeof(TraceEvent) * noteCapacity) ==
            hipSuccess;
    if (!ok) {
      (void)hipGetLastError();
      for (void* ptr : {static_cast<void*>(p.outcome), static_cast<void*>(p.events),
                        static_cast<void*>(p.notes)}) {
        if (ptr != nullptr) (void)hipFree(ptr);
      }
      p = Persistent{};
      return false;
    }
    p.eventCapacity = eventCapacity;
    p.noteCapacity = noteCapacity;
    anywhere = p.outcome;
  }
  // Every kernel once, with no steps: one rank over a buffer nothing touches.
  ProtocolRun run;
  run.layout.ranks = 1;
  run.steps = 0;
  const std::vector<std::int64_t> none = {
      static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(anywhere))};
  std::vector<layout::GpuLaunch> registered;
  for (const std::string& name : layout::registeredLayoutNames()) {
    const layout::Registered* entry = layout::findLayout(name);
    if (entry != nullptr && entry->gpuLaunch) registered.push_back(entry->gpuLaunch);
  }
  const auto bound = std::chrono::milliseconds(60000);
  // One workload a kernel family (a control runs its family's kernel).
  for (const Workload workload : {Workload::kExchange, Workload::kAllReduce, Workload::kTwoInFlight,
                                  Workload::kGraphReplay}) {
    run.workload = workload;
    (void)runProtocol(run, 0, none, bound);
    Trace trace;
    (void)runProtocol(run, 0, none, bound, &trace);
    for (const layout::GpuLaunch& launch : registered) {
      (void)runLayout(launch, run, 0, none, bound);
      (void)runLayout(launch, run, 0, none, bound, &trace);
    }
  }
  hipStream_t side = nullptr;
  if (hipStreamCreateWithFlags(&side, hipStreamNonBlocking) == hipSuccess) {
    abortKernel<<<1, 1, 0, side>>>(Peers{}, 0, 0, 0);
    (void)hipStreamSynchronize(side);
    (void)hipStreamDestroy(side);
  }
  (void)hipGetLastError();
  abortOnce();
  return true;
}

int deviceCount() {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess) {
    (void)hipGetLastError();
    return 0;
  }
  return count;
}

bool setDevice(int device) { return hipSetDevice(device) == hipSuccess; }

int currentDevice() {
  int device = -1;
  if (hipGetDevice(&device) != hipSuccess) {
    (void)hipGetLastError();
    return -1;
  }
  return device;
}

bool memInfo(std::size_t* freeBytes, std::size_t* totalBytes) {
  return hipMemGetInfo(freeBytes, totalBytes) == hipSuccess;
}

const char* dialect() { return kDialect; }

}  // namespace peerconf::gpu_kernels
