// The wide one-shot all-reduce and the flag round trip (see one_shot.h). Written with HIP names;
// nvcc builds it through gpu_api.h, hipcc as it is.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu_kernels/bounded_wait.h"
#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/host_calls.h"
#include "gpu_kernels/one_shot.h"
#include "gpu_kernels/protocol_kernels.h"
#include "gpu_kernels/wide.h"
#include "layout/payload.h"
#include "layout/tag.h"

namespace peerconf::gpu_kernels {

namespace {

using detail::throwIf;
using layout::Word;

constexpr int kDepth = 2;  // slots per (source, channel)
constexpr std::size_t kVector = 16;

// Where things live in each rank's buffer, in bytes from its start.
struct WideLayout {
  int ranks;
  int channels;
  std::size_t chunkBytes;

  // Tag of (slot, source, channel): in the destination's buffer.
  __host__ __device__ std::size_t tagOffset(int slot, int source, int channel) const {
    return ((static_cast<std::size_t>(slot) * ranks + source) * channels + channel) * sizeof(Word);
  }
  __host__ __device__ std::size_t tagBytes() const {
    return static_cast<std::size_t>(kDepth) * ranks * channels * sizeof(Word);
  }
  // Acknowledgement by `reader` of this rank's pairs on `channel`: in the writer's buffer.
  __host__ __device__ std::size_t ackOffset(int reader, int channel) const {
    return tagBytes() + (static_cast<std::size_t>(reader) * channels + channel) * sizeof(Word);
  }
  __host__ __device__ std::size_t ackBytes() const {
    return static_cast<std::size_t>(ranks) * channels * sizeof(Word);
  }
  __host__ __device__ std::size_t dataStart() const {
    return (tagBytes() + ackBytes() + 127) / 128 * 128;
  }
  __host__ __device__ std::size_t dataOffset(int slot, int source, int channel) const {
    return dataStart() +
           ((static_cast<std::size_t>(slot) * ranks + source) * channels + channel) * chunkBytes;
  }
  __host__ __device__ std::size_t bytes() const {
    return dataStart() + static_cast<std::size_t>(kDepth) * ranks * channels * chunkBytes;
  }
};

// vectorsPerThread: 1, 2, 4 or 8, and 1 for the low-latency layout; throws otherwise.
void checkVectorsPerThread(int vectorsPerThread, OneShotProtocol protocol) {
  const bool power = vectorsPerThread == 1 || vectorsPerThread == 2 || vectorsPerThread == 4 ||
                     vectorsPerThread == 8;
  if (!power || (protocol == OneShotProtocol::kLowLatency && vectorsPerThread != 1)) {
    throw std::invalid_argument("OneShotAllReduce: vectorsPerThread " +
                                std::to_string(vectorsPerThread) +
                                " (1, 2, 4 or 8; 1 for kLowLatency)");
  }
}

// A channel carries threads x vectorsPerThread x 16 bytes of input a call; the low-latency
// layout stores each 4-byte value beside a 4-byte flag, so its slots are twice as large.
WideLayout wideLayout(int ranks, std::size_t maxBytes, int threads, OneShotProtocol protocol,
                      int vectorsPerThread) {
  checkVectorsPerThread(vectorsPerThread, protocol);
  const std::size_t input = static_cast<std::size_t>(threads) * vectorsPerThread * kVector;
  const std::size_t chunk = protocol == OneShotProtocol::kLowLatency ? 2 * input : input;
  return WideLayout{ranks, static_cast<int>((maxBytes + input - 1) / input), chunk};
}

// The low-latency layout's 32-bit flag of (generation, epoch).
__device__ std::uint32_t llFlag(std::uint32_t generation, std::uint32_t epoch) {
  return static_cast<std::uint32_t>(layout::mix64(layout::makeTag(generation, epoch)));
}

using CallArgs = detail::WideArgs<WideLayout>;

using detail::boundedWait;
using detail::wordAt;

// Flow control of one channel: the slot of `step` held this rank's pair of step - depth, and
// thread t < ranks - 1 waits until reader (rank + 1 + t) % ranks acknowledged it. False when the
// wait timed out (the status word says which channel).
__device__ bool acknowledged(const CallArgs& a, char* own, std::uint64_t step, int channel, int t) {
  const int n = a.layout.ranks;
  if (step < kDepth || t >= n - 1) return true;
  const int dest = (a.rank + 1 + t) % n;
  const std::uint32_t previous = static_cast<std::uint32_t>(step) - kDepth;
  return boundedWait(
      wordAt(own, a.layout.ackOffset(dest, channel)),
      [&](Word ack) {
        return layout::tagGeneration(ack) == a.generation &&
               layout::epochDistance(previous, layout::tagEpoch(ack)) >= 0;
      },
      a.timeoutNs, a.status, channel);
}

// Where a block of the one-shot kernels starts its step: its channel (the block) and thread, the
// channel's step (read once by thread 0 for the whole block, which also clears `failed`), the
// step's epoch and slot, and this rank's own buffer.
struct BlockStep {
  int channel;
  int t;
  std::uint64_t step;
  std::uint32_t epoch;
  int slot;
  char* own;
};

__device__ BlockStep beginBlockStep(const CallArgs& a, int& failed) {
  __shared__ std::uint64_t stepShared;
  const int channel = static_cast<int>(blockIdx.x);
  if (threadIdx.x == 0) {
    stepShared = a.steps[channel];
    failed = 0;
  }
  __syncthreads();
  const std::uint64_t step = stepShared;
  const auto epoch = static_cast<std::uint32_t>(step);
  return BlockStep{channel, static_cast<int>(threadIdx.x),          step,
                   epoch,   static_cast<int>(epoch & (kDepth - 1)), a.bases.at[a.rank]};
}

// The most threads a block of oneShotKernel<V> may have: its launch bounds, so its registers fit
// a block of that size (V = 8 holds 3 x 8 vectors a thread).
constexpr int maxThreadsFor(int vectorsPerThread) { return vectorsPerThread >= 8 ? 512 : 1024; }

// V: the vectors each thread moves a call (detail::ThreadVectors: coalesced, none past the input).
template <int V>
__global__ void __launch_bounds__(maxThreadsFor(V)) oneShotKernel(CallArgs a) {
  const WideLayout& l = a.layout;
  const int n = l.ranks;
  __shared__ int failed;
  const BlockStep b = beginBlockStep(a, failed);
  const Word tag = layout::makeTag(a.generation, b.epoch);

  // Flow control: the slot held this rank's pair of epoch - depth; each reader must have
  // acknowledged it.
  if (!acknowledged(a, b.own, b.step, b.channel, b.t)) failed = 1;
  __syncthreads();
  if (failed) return;  // the status word says which channel; pushing now would overwrite

  // Load the V input vectors (every load issued before any use), push them into every peer's
  // slot, then release the tag: one per (channel, peer), after the whole channel's payload.
  // `live`: the channel's vectors of input (a launched channel has at least one); thread t's
  // j-th vector, j * stride + t, is real when below it.
  // The channel's real vectors (a launched channel has at least one; the last may be partial).
  const std::size_t start = static_cast<std::size_t>(b.channel) * blockDim.x * V;
  const detail::ThreadVectors<V> mine{static_cast<int>(blockDim.x), b.t, a.vectors - start};
  uint4 x[V];
  mine.load(a.in + start, x);
  for (int k = 1; k < n; ++k) {
    const int dest = (a.rank + k) % n;
    mine.push(reinterpret_cast<uint4*>(a.bases.at[dest] + l.dataOffset(b.slot, a.rank, b.channel)),
              x);
  }
  __syncthreads();  // every thread's payload stores before the tags' release (cumulative)
  if (b.t < n - 1) {
    const int dest = (a.rank + 1 + b.t) % n;
    GpuMemOps::storeRelease(wordAt(a.bases.at[dest], l.tagOffset(b.slot, a.rank, b.channel)), tag);
    const int source = (a.rank + n - 1 - b.t) % n;
    const bool ok = boundedWait(
        wordAt(b.own, l.tagOffset(b.slot, source, b.channel)),
        [&](Word seen) { return seen == tag; }, a.timeoutNs, a.status, b.channel);
    if (!ok) failed = 1;
  }
  __syncthreads();
  if (failed) return;

  // Sum this rank's input and every peer's pair.
  mine.sumInto(a.out + start, x, n, [&](int k) {
    const int source = (a.rank + n - k) % n;
    return reinterpret_cast<const uint4*>(b.own + l.dataOffset(b.slot, source, b.channel));
  });
  __syncthreads();  // every read of the slots before the acknowledgements' release
  if (b.t < n - 1) {
    const int source = (a.rank + n - 1 - b.t) % n;
    GpuMemOps::storeRelease(wordAt(a.bases.at[source], l.ackOffset(a.rank, b.channel)), tag);
  }
  if (b.t == 0) a.steps[b.channel] = b.step + 1;
}

// The low-latency variant: every thread polls its own flagged words, so only the acknowledgement
// needs the block together.
__global__ void oneShotLowLatencyKernel(CallArgs a) {
  const WideLayout& l = a.layout;
  const int n = l.ranks;
  __shared__ int failed;
  const BlockStep b = beginBlockStep(a, failed);
  const Word flag = static_cast<Word>(llFlag(a.generation, b.epoch)) << 32;

  if (!acknowledged(a, b.own, b.step, b.channel, b.t)) failed = 1;
  __syncthreads();
  if (failed) return;

  const std::size_t v = static_cast<std::size_t>(b.channel) * blockDim.x + b.t;
  const bool mine = v < a.vectors;
  uint4 x = make_uint4(0, 0, 0, 0);
  if (mine) {
    x = a.in[v];
    const Word w0 = flag | x.x, w1 = flag | x.y, w2 = flag | x.z, w3 = flag | x.w;
    for (int k = 1; k < n; ++k) {
      const int dest = (a.rank + k) % n;
      Word* words =
          reinterpret_cast<Word*>(a.bases.at[dest] + l.dataOffset(b.slot, a.rank, b.channel)) +
          4 * b.t;
      GpuMemOps::storeWordPair(words, w0, w1);
      GpuMemOps::storeWordPair(words + 2, w2, w3);
    }
    float4 acc = *reinterpret_cast<const float4*>(&x);
    bool ok = true;
    for (int k = 1; k < n && ok; ++k) {
      const int source = (a.rank + n - k) % n;
      const Word* words =
          reinterpret_cast<const Word*>(b.own + l.dataOffset(b.slot, source, b.channel)) + 4 * b.t;
      Word r[4];
      std::uint32_t spins = 0;
      std::uint64_t start = 0;
      for (;;) {
        GpuMemOps::loadWordPair(words, r[0], r[1]);
        GpuMemOps::loadWordPair(words + 2, r[2], r[3]);
        if (((r[0] & r[1] & r[2] & r[3]) >> 32) == (flag >> 32) &&
            ((r[0] | r[1] | r[2] | r[3]) >> 32) == (flag >> 32)) {
          break;
        }
        if ((++spins & 1023u) == 0) {
          const std::uint64_t now = GpuMemOps::nowNs();
          if (start == 0) {
            start = now;
          } else if (now - start > a.timeoutNs) {
            atomicCAS(a.status, 0, 1 + b.channel);
            ok = false;
            break;
          }
        }
      }
      const uint4 y = make_uint4(static_cast<unsigned>(r[0]), static_cast<unsigned>(r[1]),
                                 static_cast<unsigned>(r[2]), static_cast<unsigned>(r[3]));
      const float4 f = *reinterpret_cast<const float4*>(&y);
      acc.x += f.x;
      acc.y += f.y;
      acc.z += f.z;
      acc.w += f.w;
    }
    if (!ok) failed = 1;
    a.out[v] = *reinterpret_cast<const uint4*>(&acc);
  }
  __syncthreads();  // every read of the slots before the acknowledgements' release
  if (failed) return;
  if (b.t < n - 1) {
    const int source = (a.rank + n - 1 - b.t) % n;
    GpuMemOps::storeRelease(wordAt(a.bases.at[source], l.ackOffset(a.rank, b.channel)),
                            layout::makeTag(a.generation, b.epoch));
  }
  if (b.t == 0) a.steps[b.channel] = b.step + 1;
}

// One slice of OneShotAllReduceBySize's buffer: where it starts (bytes from the buffer's start,
// a multiple of 128), the largest call its instance takes, and its range.
struct BySizeSlice {
  std::size_t offset;
  std::size_t maxBytes;
  OneShotAllReduceBySize::Range range;
};

// The slices of the ranges a call of up to `maxBytes` bytes can reach (a range from
// `fromBytes` is reached when fromBytes <= maxBytes; the first always), one after the other, and
// the total bytes in `*total`. Depends on (ranks, maxBytes) only: the same on every rank.
std::vector<BySizeSlice> bySizeSlices(int ranks, std::size_t maxBytes, std::size_t* total) {
  const auto& ranges = OneShotAllReduceBySize::kRanges;
  std::vector<BySizeSlice> slices;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0 && ranges[i].fromBytes > maxBytes) break;
    const std::size_t upper = i + 1 < ranges.size() ? ranges[i + 1].fromBytes : maxBytes;
    const std::size_t sliceMax = std::min(maxBytes, upper);
    slices.push_back(BySizeSlice{offset, sliceMax, ranges[i]});
    const std::size_t bytes = OneShotAllReduce::bufferBytes(
        ranks, sliceMax, ranges[i].threads, OneShotProtocol::kTagged, ranges[i].vectorsPerThread);
    offset += (bytes + 127) / 128 * 128;
  }
  *total = offset;
  return slices;
}

__global__ void pingPongKernel(int rank, char* own, char* peer, std::uint32_t generation,
                               int iterations, std::uint64_t timeoutNs, double* meanNs) {
  Word* mine = reinterpret_cast<Word*>(own);
  Word* theirs = reinterpret_cast<Word*>(peer);
  const std::uint64_t start = GpuMemOps::nowNs();
  for (int i = 0; i < iterations; ++i) {
    const Word ping = layout::makeTag(generation, static_cast<std::uint32_t>(2 * i + 1));
    const Word pong = layout::makeTag(generation, static_cast<std::uint32_t>(2 * i + 2));
    const Word expect = rank == 0 ? pong : ping;
    if (rank == 0) GpuMemOps::storeRelease(theirs, ping);
    std::uint32_t spins = 0;
    const std::uint64_t since = GpuMemOps::nowNs();
    while (GpuMemOps::loadAcquire(mine) != expect) {
      if ((++spins & 1023u) == 0 && GpuMemOps::nowNs() - since > timeoutNs) {
        *meanNs = -1.0;
        return;
      }
    }
    if (rank == 1) GpuMemOps::storeRelease(theirs, pong);
  }
  *meanNs = static_cast<double>(GpuMemOps::nowNs() - start) / iterations;
}

__global__ void fillKernel(float* in, std::size_t count, int rank, int iteration) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    in[i] = static_cast<float>((rank + 1) * static_cast<int>((i + 7u * iteration) % 251u + 1u));
  }
}

__global__ void countWrongKernel(const float* out, std::size_t count, int ranks, int iteration,
                                 unsigned long long* wrong) {
  const int ranksSum = ranks * (ranks + 1) / 2;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float want =
        static_cast<float>(ranksSum * static_cast<int>((i + 7u * iteration) % 251u + 1u));
    if (out[i] != want) atomicAdd(wrong, 1ULL);
  }
}

}  // namespace

std::size_t OneShotAllReduce::bufferBytes(int ranks, std::size_t maxBytes, int threads,
                                          OneShotProtocol protocol, int vectorsPerThread) {
  return wideLayout(ranks, maxBytes, threads, protocol, vectorsPerThread).bytes();
}

OneShotAllReduce::OneShotAllReduce(int rank, const std::vector<std::int64_t>& addresses,
                                   std::size_t maxBytes, int threads, std::uint32_t generation,
                                   std::uint64_t timeoutNs, OneShotProtocol protocol,
                                   int vectorsPerThread)
    : protocol_(protocol),
      rank_(rank),
      ranks_(static_cast<int>(addresses.size())),
      threads_(threads),
      vectorsPerThread_(vectorsPerThread),
      generation_(generation),
      timeoutNs_(timeoutNs),
      addresses_(addresses) {
  if (ranks_ < 1 || ranks_ > kMaxRanks) throw std::invalid_argument("OneShotAllReduce: ranks");
  if (threads_ < ranks_ || threads_ > maxThreadsFor(vectorsPerThread))
    throw std::invalid_argument("OneShotAllReduce: threads");
  const WideLayout l = wideLayout(ranks_, maxBytes, threads_, protocol_, vectorsPerThread_);
  channels_ = l.channels;
  chunkBytes_ = l.chunkBytes;
  detail::allocCounters(static_cast<std::size_t>(channels_), steps_, status_);
}

OneShotAllReduce::~OneShotAllReduce() { detail::freeCounters(steps_, status_); }

bool OneShotAllReduce::generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes,
                                       int threads, std::uint32_t generation,
                                       OneShotProtocol protocol, int vectorsPerThread) {
  const WideLayout l = wideLayout(ranks, maxBytes, threads, protocol, vectorsPerThread);
  return detail::generationInWords(ownBuffer, (l.tagBytes() + l.ackBytes()) / sizeof(Word),
                                   generation);
}

void OneShotAllReduce::run(const float* in, float* out, std::size_t count, void* stream) {
  const std::size_t bytes = count * sizeof(float);
  const std::size_t vectors = bytes / kVector;
  const std::size_t input = static_cast<std::size_t>(threads_) * vectorsPerThread_ * kVector;
  const int blocks = static_cast<int>((bytes + input - 1) / input);
  if (bytes % kVector != 0 || blocks > channels_) {
    throw std::invalid_argument("OneShotAllReduce::run: " + std::to_string(bytes) +
                                " bytes is not a multiple of 16 or exceeds the buffer");
  }
  CallArgs a{};
  a.layout = WideLayout{ranks_, channels_, chunkBytes_};
  detail::fillCommonArgs(a, rank_, generation_, timeoutNs_, addresses_, in, out);
  a.vectors = vectors;
  a.steps = steps_;
  a.status = status_;
  const auto s = static_cast<hipStream_t>(stream);
  if (protocol_ == OneShotProtocol::kLowLatency) {
    oneShotLowLatencyKernel<<<blocks, threads_, 0, s>>>(a);
  } else if (vectorsPerThread_ == 1) {
    oneShotKernel<1><<<blocks, threads_, 0, s>>>(a);
  } else if (vectorsPerThread_ == 2) {
    oneShotKernel<2><<<blocks, threads_, 0, s>>>(a);
  } else if (vectorsPerThread_ == 4) {
    oneShotKernel<4><<<blocks, threads_, 0, s>>>(a);
  } else {
    oneShotKernel<8><<<blocks, threads_, 0, s>>>(a);
  }
  throwIf(hipGetLastError(), "oneShotKernel launch");
}

int OneShotAllReduce::status() { return detail::readStatus(status_); }

std::size_t OneShotAllReduceBySize::bufferBytes(int ranks, std::size_t maxBytes) {
  std::size_t total = 0;
  (void)bySizeSlices(ranks, maxBytes, &total);
  return total;
}

OneShotAllReduceBySize::OneShotAllReduceBySize(int rank, const std::vector<std::int64_t>& addresses,
                                               std::size_t maxBytes, std::uint32_t generation,
                                               std::uint64_t timeoutNs)
    : maxBytes_(maxBytes) {
  if (maxBytes == 0) throw std::invalid_argument("OneShotAllReduceBySize: maxBytes 0");
  std::size_t total = 0;
  for (const BySizeSlice& slice :
       bySizeSlices(static_cast<int>(addresses.size()), maxBytes, &total)) {
    std::vector<std::int64_t> sliceAddresses(addresses);
    for (std::int64_t& address : sliceAddresses) {
      address += static_cast<std::int64_t>(slice.offset);
    }
    instances_.push_back(
        Instance{slice.range.fromBytes,
                 std::make_unique<OneShotAllReduce>(
                     rank, sliceAddresses, slice.maxBytes, slice.range.threads, generation,
                     timeoutNs, OneShotProtocol::kTagged, slice.range.vectorsPerThread)});
  }
}

OneShotAllReduceBySize::~OneShotAllReduceBySize() = default;

bool OneShotAllReduceBySize::generationInUse(std::uint64_t ownBuffer, int ranks,
                                             std::size_t maxBytes, std::uint32_t generation) {
  std::size_t total = 0;
  for (const BySizeSlice& slice : bySizeSlices(ranks, maxBytes, &total)) {
    if (OneShotAllReduce::generationInUse(ownBuffer + slice.offset, ranks, slice.maxBytes,
                                          slice.range.threads, generation, OneShotProtocol::kTagged,
                                          slice.range.vectorsPerThread)) {
      return true;
    }
  }
  return false;
}

void OneShotAllReduceBySize::run(const float* in, float* out, std::size_t count, void* stream) {
  const std::size_t bytes = count * sizeof(float);
  if (bytes > maxBytes_) {
    throw std::invalid_argument("OneShotAllReduceBySize::run: " + std::to_string(bytes) +
                                " bytes exceeds the buffer's " + std::to_string(maxBytes_));
  }
  // The last instance whose range starts at or below `bytes` (the first starts at 0); its
  // maxBytes is the next range's start, above `bytes`, or maxBytes_.
  const Instance* chosen = &instances_.front();
  for (const Instance& instance : instances_) {
    if (instance.fromBytes <= bytes) chosen = &instance;
  }
  chosen->allReduce->run(in, out, count, stream);
}

int OneShotAllReduceBySize::status() {
  for (const Instance& instance : instances_) {
    const int status = instance.allReduce->status();
    if (status != 0) return status;
  }
  return 0;
}

double flagRoundTripNs(int rank, const std::vector<std::int64_t>& addresses,
                       std::uint32_t generation, int iterations, std::uint64_t timeoutNs) {
  if (rank > 1 || addresses.size() < 2) return 0.0;
  double* mean = nullptr;
  throwIf(hipMalloc(reinterpret_cast<void**>(&mean), sizeof(double)), "hipMalloc");
  auto* own = reinterpret_cast<char*>(static_cast<std::uintptr_t>(addresses[rank]));
  auto* peer = reinterpret_cast<char*>(static_cast<std::uintptr_t>(addresses[1 - rank]));
  pingPongKernel<<<1, 1>>>(rank, own, peer, generation, iterations, timeoutNs, mean);
  throwIf(hipGetLastError(), "pingPongKernel launch");
  double value = 0.0;
  throwIf(hipMemcpy(&value, mean, sizeof value, hipMemcpyDeviceToHost), "hipMemcpy");
  (void)hipFree(mean);
  return rank == 0 ? value : 0.0;
}

void fillInput(float* in, std::size_t count, int rank, int iteration) {
  fillKernel<<<256, 256>>>(in, count, rank, iteration);
  throwIf(hipDeviceSynchronize(), "fillKernel");
}

std::size_t countWrong(const float* out, std::size_t count, int ranks, int iteration) {
  unsigned long long* wrong = nullptr;
  throwIf(hipMalloc(reinterpret_cast<void**>(&wrong), sizeof *wrong), "hipMalloc");
  throwIf(hipMemset(wrong, 0, sizeof *wrong), "hipMemset");
  countWrongKernel<<<256, 256>>>(out, count, ranks, iteration, wrong);
  unsigned long long value = 0;
  throwIf(hipMemcpy(&value, wrong, sizeof value, hipMemcpyDeviceToHost), "hipMemcpy");
  (void)hipFree(wrong);
  return static_cast<std::size_t>(value);
}

double meanCallUs(const std::function<void(void*)>& enqueue, int warmup, int iterations, bool graph,
                  int replays, const std::function<void()>& beforeTiming) {
  hipStream_t stream = nullptr;
  throwIf(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  hipEvent_t start = nullptr;
  hipEvent_t stop = nullptr;
  throwIf(hipEventCreate(&start), "hipEventCreate");
  throwIf(hipEventCreate(&stop), "hipEventCreate");
  for (int i = 0; i < warmup; ++i) enqueue(stream);
  throwIf(hipStreamSynchronize(stream), "warm-up");
  float ms = 0.0f;
  double calls = iterations;
  if (!graph) {
    if (beforeTiming) beforeTiming();
    throwIf(hipEventRecord(start, stream), "hipEventRecord");
    for (int i = 0; i < iterations; ++i) enqueue(stream);
    throwIf(hipEventRecord(stop, stream), "hipEventRecord");
  } else {
    hipGraph_t g = nullptr;
    hipGraphExec_t exec = nullptr;
    throwIf(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal), "capture");
    for (int i = 0; i < iterations; ++i) enqueue(stream);
    throwIf(hipStreamEndCapture(stream, &g), "hipStreamEndCapture");
    throwIf(hipGraphInstantiateWithFlags(&exec, g, 0), "hipGraphInstantiate");
    throwIf(hipGraphLaunch(exec, stream), "hipGraphLaunch (warm-up)");
    throwIf(hipStreamSynchronize(stream), "graph warm-up");
    if (beforeTiming) beforeTiming();
    throwIf(hipEventRecord(start, stream), "hipEventRecord");
    for (int r = 0; r < replays; ++r) throwIf(hipGraphLaunch(exec, stream), "hipGraphLaunch");
    throwIf(hipEventRecord(stop, stream), "hipEventRecord");
    calls = static_cast<double>(iterations) * replays;
    throwIf(hipEventSynchronize(stop), "hipEventSynchronize");
    (void)hipGraphExecDestroy(exec);
    (void)hipGraphDestroy(g);
  }
  throwIf(hipEventSynchronize(stop), "hipEventSynchronize");
  throwIf(hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
  (void)hipEventDestroy(start);
  (void)hipEventDestroy(stop);
  (void)hipStreamDestroy(stream);
  return static_cast<double>(ms) * 1000.0 / calls;
}

void synchronize() { throwIf(hipDeviceSynchronize(), "hipDeviceSynchronize"); }

}  // namespace peerconf::gpu_kernels
