// The one-shot all-reduce as a wide GPU kernel — the performance workload of the reference layout
// (DESIGN.md §6): every rank pushes its input into every peer's PeerBuffer as epoch-tagged pairs
// (payload, then the tag with a system-scope release), waits for every peer's pair in its own
// buffer, sums, and acknowledges; a writer reuses a slot only after its reader acknowledged it
// (depth 2). Each block is a channel with its own epochs, tags and acknowledgements; the epoch
// lives on the device, so calls can be captured in a graph. Plain C++ header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

// The reference one-shot (kTagged) with the block shape chosen by the call's size (issue 18):
// one OneShotAllReduce a size range, each on its own slice of the one PeerBuffer. The slices
// follow one another from the buffer's start, each 128-byte aligned, in kRanges' order; their
// layout depends only on (ranks, maxBytes), so it is the same on every rank (every rank passes the
// same maxBytes), and an instance's addresses are the table's addresses plus its slice's start.
// Only the ranges a call of up to maxBytes can reach get an instance, sized for
// min(maxBytes, the range's upper end).
//
// Calls of different sizes may alternate freely: every instance keeps its own device step
// counters, tags, acknowledgements and slots (all in its own slice), so its epochs count only its
// own calls, and every rank makes the same calls in the same order, hence the same calls of each
// instance in the same order: each instance's protocol sees exactly the sequence of calls it
// would see alone. Instances share the generation (their words never overlap).
class OneShotAllReduceBySize {
 public:
  // A size range: calls of `fromBytes` bytes or more (up to the next range's fromBytes) run with
  // `threads` threads a block and `vectorsPerThread` 16-byte vectors a thread.
  struct Range {
    std::size_t fromBytes;
    int threads;
    int vectorsPerThread;
  };
  // kRanges: ascending fromBytes, the first 0. The thresholds as measured on 2x H200 (graphed,
  // 512 threads a block, two runs within ~3 %; ci/bench/RESULTS.md, the sweep's rows
  // 'peerconf reference one-shot (512 threads ...)'): V=1 is fastest below 256 KiB (5.22 us at
  // 32 KiB against 5.44 with V=2 and 6.09 with V=4), V=2 from 256 KiB below 4 MiB (6.15 us at
  // 256 KiB against 6.45 with V=1; 9.11 at 1 MiB against 9.30 and 9.37; 12.34 at 2 MiB against
  // 12.36 with V=4), V=4 from 4 MiB (18.86 us at 4 MiB against 19.30 with V=2, 31.58 at 8 MiB
  // against 35.88 with V=1, 59.59 at 16 MiB against 66.33). The sweep also measures 256 threads
  // x 8 and 1024 threads x 4 from 1 MiB, not used here yet.
  static constexpr std::size_t kTwoVectorsFrom = std::size_t{256} << 10;
  static constexpr std::size_t kFourVectorsFrom = std::size_t{4} << 20;
  static constexpr int kThreads = 512;
  static constexpr std::array<Range, 3> kRanges = {
      {{0, kThreads, 1}, {kTwoVectorsFrom, kThreads, 2}, {kFourVectorsFrom, kThreads, 4}}};

  // Bytes each rank's PeerBuffer needs for `ranks` ranks and calls of up to `maxBytes` bytes: the
  // sum of the slices.
  static std::size_t bufferBytes(int ranks, std::size_t maxBytes);

  // As OneShotAllReduce's constructor (kTagged), for every reachable range.
  OneShotAllReduceBySize(int rank, const std::vector<std::int64_t>& addresses, std::size_t maxBytes,
                         std::uint32_t generation, std::uint64_t timeoutNs);
  OneShotAllReduceBySize(const OneShotAllReduceBySize&) = delete;
  OneShotAllReduceBySize& operator=(const OneShotAllReduceBySize&) = delete;
  ~OneShotAllReduceBySize();

  // True when any slice's tag or acknowledgement words carry `generation`.
  static bool generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes,
                              std::uint32_t generation);

  // As OneShotAllReduce::run, by the instance of the range holding count * 4 bytes; throws
  // std::invalid_argument past maxBytes.
  void run(const float* in, float* out, std::size_t count, void* stream);

  // The first non-zero status of the instances, in kRanges' order (0 while every wait ended in
  // time; else 1 + the channel of that instance whose wait timed out first).
  int status();

 private:
  struct Instance {
    std::size_t fromBytes;
    std::unique_ptr<OneShotAllReduce> allReduce;
  };
  std::size_t maxBytes_;
  std::vector<Instance> instances_;  // the reachable ranges, in kRanges' order
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
