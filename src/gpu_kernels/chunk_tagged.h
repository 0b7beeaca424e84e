// The all-reduce on the chunk-tagged layout (src/layout/README.md, "chunk-tagged") as wide GPU
// kernels: the reference layout's guarantees — full 64-bit tags (generation << 32 | epoch)
// compared with ==, the payload before its tag with a system-scope release, a slot reused only
// after its reader acknowledged it — with a tag for every warp-sized chunk (512 bytes) instead of
// one tag a block after the whole payload. Each warp is its own channel: it waits for its own
// acknowledgements, stores its chunk into every peer, releases its chunk's tag, waits on its
// peers' tags for the same chunk, sums and acknowledges, with no block-wide barrier and no
// fence that waits for another warp's stores.
//   one-shot  every rank pushes its whole input to every peer and sums locally (latency-bound
//             sizes)
//   two-shot  reduce-scatter (rank s sums shard s of every rank's input) then all-gather (rank s
//             pushes its summed shard to every peer), through the peers' buffers on the same
//             layout: 2 (n - 1) / n of the message over the links a rank instead of n - 1
//   auto      one-shot below `twoShotFrom` bytes, two-shot from there
// The epochs live on the device (a step counter a warp and algorithm), so calls can be captured
// in a graph. Plain C++ header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace peerconf::gpu_kernels {

enum class ChunkAlgorithm { kOneShot, kTwoShot, kAuto };

class ChunkTaggedAllReduce {
 public:
  // Bytes each rank's PeerBuffer needs for `ranks` ranks and calls of up to `maxBytes` bytes.
  static std::size_t bufferBytes(int ranks, std::size_t maxBytes);

  // The size from which kAuto takes the two-shot for `ranks` ranks: a first guess (on 2 ranks
  // both move the same bytes over the link and the two-shot pays a second trip), to be set from
  // the benchmark's rows (peerconf_gpu_bench --two-shot-from).
  static std::size_t defaultTwoShotFrom(int ranks);

  // `addresses`: the PeerBuffer's table (rank r's buffer as this rank maps it). `threads`: threads
  // a block (a multiple of 32, 32..1024); the layout does not depend on it. `timeoutNs` bounds
  // every wait: a wait past it sets the status word and the call finishes (with a wrong result)
  // instead of spinning forever. Allocates its private state on the current device.
  ChunkTaggedAllReduce(int rank, const std::vector<std::int64_t>& addresses, std::size_t maxBytes,
                       int threads, std::uint32_t generation, std::uint64_t timeoutNs,
                       std::size_t twoShotFrom = 0);  // 0: defaultTwoShotFrom(ranks)
  ChunkTaggedAllReduce(const ChunkTaggedAllReduce&) = delete;
  ChunkTaggedAllReduce& operator=(const ChunkTaggedAllReduce&) = delete;
  ~ChunkTaggedAllReduce();

  // True when any tag or acknowledgement word in this rank's buffer carries `generation` (for
  // layout::agreeGeneration): reads the buffer's tag and acknowledgement words back.
  static bool generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes,
                              std::uint32_t generation);

  // Enqueues out = sum over ranks of in (`count` floats, count*4 a multiple of 16) on `stream`
  // (a hipStream_t / cudaStream_t; nullptr = the default stream). Every rank must make the same
  // calls (sizes and algorithms) in the same order.
  void run(const float* in, float* out, std::size_t count, void* stream,
           ChunkAlgorithm algorithm = ChunkAlgorithm::kAuto);

  // Which algorithm kAuto takes for `bytes`.
  ChunkAlgorithm chosen(std::size_t bytes) const;

  // 0 while every wait ended in time; else 1 + the warp whose wait timed out first.
  int status();

 private:
  int rank_;
  int ranks_;
  int threads_;
  std::size_t maxBytes_;
  std::size_t twoShotFrom_;
  std::uint32_t generation_;
  std::uint64_t timeoutNs_;
  std::vector<std::int64_t> addresses_;
  std::uint64_t* steps_ = nullptr;  // device: steps done, per warp of each algorithm
  int* status_ = nullptr;           // device
};

}  // namespace peerconf::gpu_kernels
