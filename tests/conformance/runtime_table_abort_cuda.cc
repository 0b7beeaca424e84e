// The kernel-abort rows on CUDA: what the device's free memory shows after the host aborts a
// data-plane kernel that ran past its bound (the path of gpu_kernels::runProtocol: a second
// kernel on a stream of its own writes the abort word while the first still spins), once every
// kernel was warmed up (gpu_kernels::warmUp), alone on the device and with two processes whose
// kernels are time-sliced on it, then once more. The figures are device-wide.
#include <cuda_runtime_api.h>

#include <chrono>
#include <string>
#include <vector>

#include "gpu_kernels/protocol_kernels.h"
#include "ranks.h"
#include "runtime_table.h"

namespace peerconf::conformance::table {
namespace {

constexpr std::size_t kBuffer = std::size_t{1} << 20;

std::size_t deviceFreeBytes() {
  std::size_t free = 0;
  std::size_t total = 0;
  (void)cudaMemGetInfo(&free, &total);
  return free;
}

std::string limits() {
  std::size_t stack = 0;
  std::size_t heap = 0;
  std::size_t fifo = 0;
  (void)cudaDeviceGetLimit(&stack, cudaLimitStackSize);
  (void)cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize);
  (void)cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize);
  return "stack " + std::to_string(stack) + ", heap " + std::to_string(heap) + ", printf " +
         std::to_string(fifo);
}

std::string drop(std::size_t before, std::size_t after) {
  return before > after ? std::to_string(before - after) + " bytes" : "0 bytes";
}

// One rank's exchange whose peer never runs: the kernel waits until the host aborts it.
gpu_kernels::ProtocolOutcome abortedRun(const std::vector<std::int64_t>& buffers, int rank) {
  gpu_kernels::ProtocolRun run;
  run.layout.ranks = 2;
  run.steps = 1000000;
  run.timeoutNs = 60'000'000'000ULL;
  run.generation = 7;
  return gpu_kernels::runProtocol(run, rank, buffers, std::chrono::milliseconds(300));
}

void body(Rank& r, bool shared) {
  (void)cudaSetDevice(0);
  if (!gpu_kernels::warmUp(1024, 64)) throw std::runtime_error("gpu_kernels::warmUp failed");
  void* own = nullptr;
  void* other = nullptr;
  if (cudaMalloc(&own, kBuffer) != cudaSuccess || cudaMalloc(&other, kBuffer) != cudaSuccess) {
    throw std::runtime_error("cudaMalloc failed");
  }
  (void)cudaMemset(own, 0, kBuffer);
  (void)cudaMemset(other, 0, kBuffer);
  const std::vector<std::int64_t> buffers = {
      static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(own)),
      static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(other))};
  const std::string before = limits();
  std::vector<std::size_t> free;
  for (int round = 0; round < 2; ++round) {
    r.barrier();
    free.push_back(deviceFreeBytes());
    r.barrier();
    const gpu_kernels::ProtocolOutcome out = abortedRun(buffers, 0);
    if (out.end != gpu_kernels::ProtocolOutcome::End::kHostAborted) {
      r.fail("round " + std::to_string(round) + ": the run ended " +
             gpu_kernels::toString(out.end) + ", not host-aborted");
    }
    (void)cudaMemset(own, 0, kBuffer);  // the abort word, for the next round
  }
  r.barrier();
  free.push_back(deviceFreeBytes());
  if (r.rank() == 0) {
    const std::string detail = "limits " + before + " -> " + limits();
    r.observe(encode({shared ? "host-abort-leftover-shared" : "host-abort-leftover-alone",
                      drop(free[0], free[1]), detail}));
    if (shared) r.observe(encode({"host-abort-leftover-again", drop(free[1], free[2]), detail}));
  }
  (void)cudaFree(own);
  (void)cudaFree(other);
}

}  // namespace

std::vector<Observation> abortRows() {
  Implementation impl;
  impl.name = "cuda";
  impl.placement = Placement::kProcesses;
  impl.sharedDevice = true;
  std::vector<Observation> out;
  for (const bool shared : {false, true}) {
    for (const RankReport& report :
         runRanks(impl, shared ? 2 : 1, [shared](Rank& r) { body(r, shared); })) {
      for (const std::string& failure : report.failures) {
        out.push_back({"host-abort-probe", "probe failed", failure});
      }
      for (const std::string& line : report.observations) out.push_back(decode(line));
    }
  }
  return out;
}

}  // namespace peerconf::conformance::table
