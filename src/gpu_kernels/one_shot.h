// The one-shot all-reduce as a wide GPU kernel — the performance workload of the reference layout
// (DESIGN.md §6): every rank pushes its input into every peer's PeerBuffer as epoch-tagged pairs
// (payload, then the tag with a system-scope release), waits for every peer's pair in its own
// buffer, sums, and acknowledges; a writer reuses a slot only after its reader acknowledged it
// (depth 2). Each block is a channel with its own epochs, tags and acknowledgements; the epoch
// lives on the device, so calls can be captured in a graph. Plain C++ header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace peerconf::gpu_kernels {

// How a pair travels. kTagged is the reference layout: the payload, then a 64-bit tag stored with
// a system-scope release (whose fence waits for the payload to land on the peer). kLowLatency
// packs a 32-bit flag beside every 32-bit payload word (8-byte words, each single-copy atomic),
// so a reader can never take a new flag with an old payload and no release fence sits on the
// critical path, at twice the bytes. Its flag hashes (generation, epoch) into 32 bits: a stale
// word passes with probability 2^-32 per word, where kTagged's 64-bit tags leave none (the
// generation agreement). Both reuse a slot only after its reader acknowledged it (release).
enum class OneShotProtocol { kTagged, kLowLatency };

class OneShotAllReduce {
 public:
  // Bytes each rank's PeerBuffer needs for `ranks` ranks, calls of up to `maxBytes` bytes,
  // `threads` threads a block and `vectorsPerThread` 16-byte vectors a thread a call (1, 2, 4 or
  // 8; kLowLatency: 1): a block is a channel of threads x vectorsPerThread x 16 bytes. More
  // vectors a thread mean more loads in flight and fewer blocks, tags and release fences a byte.
  // Throws std::invalid_argument on another vectorsPerThread.
  static std::size_t bufferBytes(int ranks, std::size_t maxBytes, int threads,
                                 OneShotProtocol protocol = OneShotProtocol::kTagged,
                                 int vectorsPerThread = 1);

  // `addresses`: the PeerBuffer's table (rank r's buffer as this rank maps it). Allocates its
  // private state on the current device. `timeoutNs` bounds every wait: a wait past it sets the
  // status word and the call finishes (with a wrong result) instead of spinning forever.
  // `threads` at most 1024 (512 with 8 vectors a thread); `vectorsPerThread` as in bufferBytes,
  // and the same on every rank.
  OneShotAllReduce(int rank, const std::vector<std::int64_t>& addresses, std::size_t maxBytes,
                   int threads, std::uint32_t generation, std::uint64_t timeoutNs,
                   OneShotProtocol protocol = OneShotProtocol::kTagged, int vectorsPerThread = 1);
  OneShotAllReduce(const OneShotAllReduce&) = delete;
  OneShotAllReduce& operator=(const OneShotAllReduce&) = delete;
  ~OneShotAllReduce();

  // True when any tag or acknowledgement word in this rank's buffer carries `generation` (for
  // layout::agreeGeneration): reads the buffer back.
  static bool generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes, int threads,
                              std::uint32_t generation,
                              OneShotProtocol protocol = OneShotProtocol::kTagged,
                              int vectorsPerThread = 1);

  // Enqueues out = sum over ranks of in (`count` floats, count*4 a multiple of 16) on `stream`
  // (a hipStream_t / cudaStream_t; nullptr = the default stream).
  void run(const float* in, float* out, std::size_t count, void* stream);

  // 0 while every wait ended in time; else 1 + the channel whose wait timed out first.
  int status();

 private:
  OneShotProtocol protocol_;
  int rank_;
  int ranks_;
  int threads_;
  int vectorsPerThread_;
  int channels_;
  std::size_t chunkBytes_;
  std::uint32_t generation_;
  std::uint64_t timeoutNs_;
  std::vector<std::int64_t> addresses_;
  std::uint64_t* steps_ = nullptr;  // device: steps done, per channel
  int* status_ = nullptr;           // device
};

// Flag round trip over the peer mapping (the floor of any in-kernel collective): rank 0 stores a
// tagged flag into rank 1's buffer with a release, rank 1 answers into rank 0's, `iterations`
// times, in one kernel each. Returns the mean round trip in nanoseconds on rank 0 (0 elsewhere,
// negative on a timeout). `addresses` as above; ranks other than 0 and 1 take no part.
double flagRoundTripNs(int rank, const std::vector<std::int64_t>& addresses,
                       std::uint32_t generation, int iterations, std::uint64_t timeoutNs);

// Test data for the all-reduce: fill `in` with rank `rank`'s input of call `iteration`; count the
// elements of `out` that are not the sum over `ranks` ranks (synchronous).
void fillInput(float* in, std::size_t count, int rank, int iteration);
std::size_t countWrong(const float* out, std::size_t count, int ranks, int iteration);

// Mean microseconds of one `enqueue(stream)` on a fresh stream of the current device: after
// `warmup` calls, `iterations` calls between two events — launched one by one (eager), or
// captured once in a graph of `iterations` calls and that graph replayed `replays` times (graph).
// `beforeTiming` runs just before the timed region (a barrier across ranks).
double meanCallUs(const std::function<void(void*)>& enqueue, int warmup, int iterations, bool graph,
                  int replays, const std::function<void()>& beforeTiming);

// hipDeviceSynchronize; throws on an error (a kernel that faulted).
void synchronize();

}  // namespace peerconf::gpu_kernels
