// Where the one-shot all-reduce's time goes (issue 18): a ladder of kernels for
// peerconf_gpu_bench's decomposition section, each adding one ingredient of oneShotKernel
// (src/gpu_kernels/one_shot.cu) to the one before, on the same grid (512 threads a block, 16 bytes
// a thread, one block a channel of 8 KiB). The sum is not checked: only the time matters, and no
// rung may hang (every wait is bounded and sets the status word). Plain C++ header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace peerconf::gpu_bench {

enum class Rung {
  kEmpty,       // an empty kernel: the launch (or graph node) floor
  kLocal,       // reads the input and this rank's own slots, writes the output: the memory floor
  kPush,        // kLocal + the payload's 16-byte stores into every peer's slot, no tag, no wait
  kPushFence,   // kPush, __syncthreads, one thread's system-scope release fence: no tag, no wait
  kRelaxedTag,  // kPush, then oneShotKernel's tag and wait with the tag stored RELAXED (wrong
                // ordering: the payload may land after the tag; measurement only)
  kReleaseTag,  // kRelaxedTag with the tag stored with a release, as oneShotKernel does
  kLocal4,      // kLocal with 4 vectors a thread (OneShotAllReduce's vectorsPerThread = 4): a
                // block moves 32 KiB, a quarter of the blocks
  kPush4,       // kPush with 4 vectors a thread
};

class DecomposeKernels {
 public:
  static constexpr int kThreads = 512;

  // Bytes each rank's PeerBuffer needs for `ranks` ranks and calls of up to `maxBytes` bytes.
  static std::size_t bufferBytes(int ranks, std::size_t maxBytes);
  // True when a tag word in this rank's buffer carries `generation` (layout::agreeGeneration).
  static bool generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes,
                              std::uint32_t generation);

  // `addresses`: the PeerBuffer's table. `timeoutNs` bounds every wait; after the first timeout
  // (the status word set) the tagged rungs stop waiting, so a lost peer costs one timeout a rank.
  DecomposeKernels(int rank, const std::vector<std::int64_t>& addresses, std::size_t maxBytes,
                   std::uint32_t generation, std::uint64_t timeoutNs);
  DecomposeKernels(const DecomposeKernels&) = delete;
  DecomposeKernels& operator=(const DecomposeKernels&) = delete;
  ~DecomposeKernels();

  // Enqueues one call of `rung` on `count` floats (count*4 a multiple of 16) on `stream`.
  void run(Rung rung, const float* in, float* out, std::size_t count, void* stream);

  // 0 while every wait ended in time; else 1 + the channel whose wait timed out first.
  int status();

 private:
  int rank_;
  int channels_;
  std::uint32_t generation_;
  std::uint64_t timeoutNs_;
  std::vector<std::int64_t> addresses_;
  std::uint64_t* steps_ = nullptr;  // device: tagged calls done, per channel
  int* status_ = nullptr;           // device
};

}  // namespace peerconf::gpu_bench
