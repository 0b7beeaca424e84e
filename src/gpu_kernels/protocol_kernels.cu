// The data-plane protocol as GPU kernels: layout::Exchange and layout::AllReduce instantiated over
// GpuMemOps (system-scope acquire/release), one thread a rank, every wait bounded by the device
// clock. Written with HIP names; nvcc builds it through gpu_api.h, hipcc as it is.
#include <chrono>
#include <thread>

#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/protocol_kernels.h"
#include "layout/allreduce.h"
#include "layout/exchange.h"
#include "layout/payload.h"

namespace peerconf::gpu_kernels {

namespace {

using layout::Word;

struct Peers {
  Word* at[kMaxRanks];
};

__device__ void spinFor(std::uint32_t ns) {
  if (ns == 0) return;
  const std::uint64_t until = GpuMemOps::nowNs() + ns;
  std::uint32_t spins = 0;
  while (GpuMemOps::nowNs() < until) GpuMemOps::pause(++spins);
}

__device__ std::uint32_t lateDelay(const ProtocolRun& run, int rank, bool reader,
                                   std::uint64_t step) {
  std::uint32_t ns = 0;
  for (int i = 0; i < run.lateCount && i < ProtocolRun::kMaxLate; ++i) {
    const Late& late = run.late[i];
    if (late.rank != rank || late.reader != reader) continue;
    const bool fires =
        step == late.step || (late.every != 0 && step != 0 && step % late.every == 0);
    if (fires) ns += late.delayNs;
  }
  return ns;
}

template <class Workload>
__global__ void protocolKernel(ProtocolRun run, int rank, Peers peers, ProtocolOutcome* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  layout::NullObserver observer;
  layout::Protocol<GpuMemOps> proto(run.layout, rank, run.generation, peers.at, run.timeoutNs,
                                    observer);
  layout::Tally tally;
  layout::Wait wait;
  ProtocolOutcome::End end = ProtocolOutcome::End::kCompleted;
  std::uint64_t done = 0;
  const std::uint64_t start = GpuMemOps::nowNs();
  for (std::uint64_t step = 0; step < run.steps; ++step) {
    if (rank == run.stopRank && step == run.stopStep) {
      end = ProtocolOutcome::End::kStopped;
      break;
    }
    const std::uint32_t epoch = run.startEpoch + static_cast<std::uint32_t>(step);
    spinFor(lateDelay(run, rank, false, step));
    wait = Workload::pushPhase(proto, step, epoch);
    if (!wait.ok()) break;
    spinFor(lateDelay(run, rank, true, step));
    wait = Workload::readPhase(proto, step, epoch, tally);
    if (!wait.ok()) break;
    ++done;
  }
  if (!wait.ok()) {
    end = ProtocolOutcome::End::kWait;
    // A rank that gave up says so, so that no peer waits out its own deadline for it.
    if (wait.status != layout::Status::kAborted) proto.abort();
  }
  out->end = end;
  out->code = 0;
  out->wait = wait;
  out->stepsDone = done;
  out->tally = tally;
  out->kernelNs = GpuMemOps::nowNs() - start;
}

// Rank `writer`'s payload word `i` of `epoch` for `reader`, as the workload writes it.
__device__ Word payloadOf(Workload workload, std::uint32_t generation, int writer, int reader,
                          std::uint32_t epoch, int i) {
  return workload == Workload::kAllReduce
             ? layout::allReduceInput(generation, writer, epoch, i)
             : layout::payloadWord(generation, writer, reader, epoch, i);
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
    GpuMemOps::storeRelaxed(pair + 1 + i,
                            payloadOf(run.workload, generation, source, rank, epoch, i));
  }
  GpuMemOps::storeRelease(pair, l.tag(generation, epoch));
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

ProtocolOutcome runProtocol(const ProtocolRun& run, int rank,
                            const std::vector<std::int64_t>& buffers,
                            std::chrono::milliseconds hostBound) {
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
  ProtocolOutcome* device = nullptr;
  if (!check(hipMalloc(reinterpret_cast<void**>(&device), sizeof(ProtocolOutcome)), out)) {
    return out;
  }
  hipStream_t stream = nullptr;
  if (!check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), out)) {
    (void)hipFree(device);
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  if (run.workload == Workload::kExchange) {
    protocolKernel<layout::Exchange<GpuMemOps>><<<1, 1, 0, stream>>>(run, rank, peers, device);
  } else {
    protocolKernel<layout::AllReduce<GpuMemOps>><<<1, 1, 0, stream>>>(run, rank, peers, device);
  }
  if (!check(hipGetLastError(), out)) {
    (void)hipStreamDestroy(stream);
    (void)hipFree(device);
    return out;
  }
  // Bounded on the host too: a kernel that never ends is reported, not waited on.
  hipError_t state = hipErrorNotReady;
  while ((state = hipStreamQuery(stream)) == hipErrorNotReady) {
    if (std::chrono::steady_clock::now() - start > hostBound) {
      out.end = ProtocolOutcome::End::kHostTimeout;
      out.hostNs = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::steady_clock::now() - start)
                                                  .count());
      return out;  // the kernel still runs: the caller must end the process
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const auto hostNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  if (check(state, out)) {
    if (check(hipMemcpy(&out, device, sizeof out, hipMemcpyDeviceToHost), out)) {
      out.hostNs = static_cast<std::uint64_t>(hostNs);
    }
  }
  (void)hipStreamDestroy(stream);
  (void)hipFree(device);
  return out;
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

bool memInfo(std::size_t* freeBytes, std::size_t* totalBytes) {
  return hipMemGetInfo(freeBytes, totalBytes) == hipSuccess;
}

const char* dialect() { return kDialect; }

}  // namespace peerconf::gpu_kernels
