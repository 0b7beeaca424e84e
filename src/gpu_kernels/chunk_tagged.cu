// The chunk-tagged all-reduce kernels: one-shot and two-shot (see chunk_tagged.h). Written with
// HIP names over gpu_api.h, but with 32-lane warp intrinsics: built by nvcc only (the ROCm check
// build leaves it out until it is written for 64-lane wavefronts).
#include <stdexcept>
#include <string>

#include "gpu_kernels/bounded_wait.h"
#include "gpu_kernels/chunk_tagged.h"
#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/host_calls.h"
#include "gpu_kernels/protocol_kernels.h"
#include "gpu_kernels/wide.h"
#include "layout/tag.h"

namespace peerconf::gpu_kernels {

namespace {

using detail::throwIf;
using layout::Word;

constexpr int kDepth = 2;  // slots per (source, warp)
constexpr int kLanes = 32;
constexpr unsigned kAll = 0xffffffffu;
constexpr std::size_t kVector = 16;
constexpr std::size_t kChunkBytes = kLanes * kVector;  // one warp's chunk: 512 bytes

// One region of the layout (the one-shot's, or one phase of the two-shot's): for each (slot,
// source, warp) a tag word and a 512-byte chunk in the destination's buffer, for each (reader,
// warp) an acknowledgement word in the writer's buffer. Offsets in bytes from the buffer's start.
struct Region {
  int ranks;
  int warps;
  std::size_t tags;  // where its tag words start (its acknowledgements follow)
  std::size_t data;  // where its chunks start

  __host__ __device__ std::size_t tagBytes() const {
    return static_cast<std::size_t>(kDepth) * ranks * warps * sizeof(Word);
  }
  __host__ __device__ std::size_t ackBytes() const {
    return static_cast<std::size_t>(ranks) * warps * sizeof(Word);
  }
  __host__ __device__ std::size_t dataBytes() const {
    return static_cast<std::size_t>(kDepth) * ranks * warps * kChunkBytes;
  }
  __host__ __device__ std::size_t tagOffset(int slot, int source, int warp) const {
    return tags + ((static_cast<std::size_t>(slot) * ranks + source) * warps + warp) * sizeof(Word);
  }
  __host__ __device__ std::size_t ackOffset(int reader, int warp) const {
    return tags + tagBytes() + (static_cast<std::size_t>(reader) * warps + warp) * sizeof(Word);
  }
  __host__ __device__ std::size_t dataOffset(int slot, int source, int warp) const {
    return data + ((static_cast<std::size_t>(slot) * ranks + source) * warps + warp) * kChunkBytes;
  }
};

// The buffer: every region's tags and acknowledgements first (so that the generation check
// reads one header), then every region's chunks.
struct ChunkLayout {
  Region one;  // one-shot
  Region rs;   // two-shot, reduce-scatter
  Region ag;   // two-shot, all-gather
  std::size_t header;
  std::size_t bytes;
};

std::size_t roundUp(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

ChunkLayout chunkLayout(int ranks, std::size_t maxBytes) {
  const std::size_t vectors = (maxBytes + kVector - 1) / kVector;
  const std::size_t shard = (vectors + static_cast<std::size_t>(ranks) - 1) / ranks;
  ChunkLayout l{};
  l.one = Region{ranks, static_cast<int>((vectors + kLanes - 1) / kLanes), 0, 0};
  l.rs = Region{ranks, static_cast<int>((shard + kLanes - 1) / kLanes), 0, 0};
  l.ag = l.rs;
  std::size_t at = 0;
  for (Region* r : {&l.one, &l.rs, &l.ag}) {
    r->tags = at;
    at += r->tagBytes() + r->ackBytes();
  }
  l.header = at;
  at = roundUp(at, 128);
  for (Region* r : {&l.one, &l.rs, &l.ag}) {
    r->data = at;
    at += r->dataBytes();
  }
  l.bytes = at;
  return l;
}

using detail::Bases;

struct ChunkArgs {
  Region region;  // the one-shot's (one-shot), the reduce-scatter's (two-shot)
  Region gather;  // the all-gather's (two-shot)
  int ranks;
  int rank;
  int warps;  // warps with work this call
  std::uint32_t generation;
  std::uint64_t timeoutNs;
  Bases bases;
  const uint4* in;
  uint4* out;
  std::size_t vectors;       // of the whole message
  std::size_t shardVectors;  // two-shot: of one rank's shard
  std::uint64_t* steps;      // this algorithm's per-warp step counters
  int* status;
};

using detail::boundedWait;
using detail::wordAt;

// Flow control: the slot of `epoch` held this rank's chunk of epoch - depth; its reader `dest`
// must have acknowledged that epoch (or a later one) before it is overwritten.
__device__ bool waitAck(const ChunkArgs& a, const Region& r, int dest, int warp,
                        std::uint32_t epoch) {
  const std::uint32_t previous = epoch - kDepth;
  return boundedWait(
      wordAt(a.bases.at[a.rank], r.ackOffset(dest, warp)),
      [&](Word ack) {
        return layout::tagGeneration(ack) == a.generation &&
               layout::epochDistance(previous, layout::tagEpoch(ack)) >= 0;
      },
      a.timeoutNs, a.status, warp);
}

// Exactly this step's tag: another generation's or epoch's never passes.
__device__ bool waitTag(const ChunkArgs& a, const Region& r, int slot, int source, int warp,
                        Word tag) {
  return boundedWait(
      wordAt(a.bases.at[a.rank], r.tagOffset(slot, source, warp)),
      [&](Word seen) { return seen == tag; }, a.timeoutNs, a.status, warp);
}

// After the warp's chunk stores (__syncwarp: every lane's stores before it), lane k releases the
// chunk's tag into the k-th peer's buffer; the release is cumulative over the warp's stores, as
// the reference kernel's is over its block's after __syncthreads.
__device__ void releaseTags(const ChunkArgs& a, const Region& r, int slot, int warp, int lane,
                            Word tag) {
  __syncwarp();
  if (lane < a.ranks - 1) {
    const int dest = (a.rank + 1 + lane) % a.ranks;
    GpuMemOps::storeRelease(wordAt(a.bases.at[dest], r.tagOffset(slot, a.rank, warp)), tag);
  }
}

// After the warp's reads of the chunks (__syncwarp), lane k acknowledges the k-th source.
__device__ void acknowledge(const ChunkArgs& a, const Region& r, int warp, int lane, Word tag) {
  __syncwarp();
  if (lane < a.ranks - 1) {
    const int source = (a.rank + a.ranks - 1 - lane) % a.ranks;
    GpuMemOps::storeRelease(wordAt(a.bases.at[source], r.ackOffset(a.rank, warp)), tag);
  }
}

__device__ void add(float4& acc, uint4 y) {
  const float4 f = *reinterpret_cast<const float4*>(&y);
  acc.x += f.x;
  acc.y += f.y;
  acc.z += f.z;
  acc.w += f.w;
}

__global__ void chunkOneShotKernel(ChunkArgs a) {
  const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kLanes);
  if (warp >= a.warps) return;  // the whole warp (blocks are whole warps)
  const Region& r = a.region;
  const int n = a.ranks;
  std::uint64_t step = lane == 0 ? a.steps[warp] : 0;
  step = __shfl_sync(kAll, step, 0);
  const auto epoch = static_cast<std::uint32_t>(step);
  const int slot = static_cast<int>(epoch & (kDepth - 1));
  const Word tag = layout::makeTag(a.generation, epoch);
  char* own = a.bases.at[a.rank];

  bool ok = true;
  if (step >= kDepth && lane < n - 1) ok = waitAck(a, r, (a.rank + 1 + lane) % n, warp, epoch);
  if (__any_sync(kAll, !ok)) return;  // the status word says which warp; pushing would overwrite

  // Push this warp's chunk into every peer's slot, then release its tag there.
  const std::size_t v = static_cast<std::size_t>(warp) * kLanes + lane;
  const bool mine = v < a.vectors;
  const uint4 x = mine ? a.in[v] : make_uint4(0, 0, 0, 0);
  if (mine) {
    for (int k = 1; k < n; ++k) {
      const int dest = (a.rank + k) % n;
      auto* chunk = reinterpret_cast<uint4*>(a.bases.at[dest] + r.dataOffset(slot, a.rank, warp));
      GpuMemOps::storeVector(chunk + lane, x);
    }
  }
  releaseTags(a, r, slot, warp, lane, tag);

  // Every lane waits on each peer's tag of this chunk itself (its loads stay after its acquire).
  float4 acc = *reinterpret_cast<const float4*>(&x);
  for (int k = 1; k < n && ok; ++k) {
    const int source = (a.rank + n - k) % n;
    ok = waitTag(a, r, slot, source, warp, tag);
    if (ok && mine) {
      const auto* chunk = reinterpret_cast<const uint4*>(own + r.dataOffset(slot, source, warp));
      add(acc, GpuMemOps::loadVector(chunk + lane));
    }
  }
  if (__any_sync(kAll, !ok)) return;
  if (mine) a.out[v] = *reinterpret_cast<const uint4*>(&acc);
  acknowledge(a, r, warp, lane, tag);
  if (lane == 0) a.steps[warp] = step + 1;
}

__global__ void chunkTwoShotKernel(ChunkArgs a) {
  const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kLanes);
  if (warp >= a.warps) return;
  const Region& rs = a.region;
  const Region& ag = a.gather;
  const int n = a.ranks;
  const int me = a.rank;
  std::uint64_t step = lane == 0 ? a.steps[warp] : 0;
  step = __shfl_sync(kAll, step, 0);
  const auto epoch = static_cast<std::uint32_t>(step);
  const int slot = static_cast<int>(epoch & (kDepth - 1));
  const Word tag = layout::makeTag(a.generation, epoch);
  char* own = a.bases.at[me];

  // Element i of every shard is this lane's: vector s * shardVectors + i of the message.
  const std::size_t i = static_cast<std::size_t>(warp) * kLanes + lane;
  auto vectorOf = [&](int shard) { return static_cast<std::size_t>(shard) * a.shardVectors + i; };
  auto valid = [&](int shard) { return i < a.shardVectors && vectorOf(shard) < a.vectors; };

  bool ok = true;
  if (step >= kDepth && lane < n - 1) {
    const int dest = (me + 1 + lane) % n;
    ok = waitAck(a, rs, dest, warp, epoch) && waitAck(a, ag, dest, warp, epoch);
  }
  if (__any_sync(kAll, !ok)) return;

  // 1. Reduce-scatter: shard s of this rank's input to rank s.
  for (int k = 1; k < n; ++k) {
    const int dest = (me + k) % n;
    if (!valid(dest)) continue;
    auto* chunk = reinterpret_cast<uint4*>(a.bases.at[dest] + rs.dataOffset(slot, me, warp));
    GpuMemOps::storeVector(chunk + lane, a.in[vectorOf(dest)]);
  }
  releaseTags(a, rs, slot, warp, lane, tag);
  const bool mine = valid(me);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  if (mine) {
    const uint4 x = a.in[vectorOf(me)];
    acc = *reinterpret_cast<const float4*>(&x);
  }
  for (int k = 1; k < n && ok; ++k) {
    const int source = (me + n - k) % n;
    ok = waitTag(a, rs, slot, source, warp, tag);
    if (ok && mine) {
      const auto* chunk = reinterpret_cast<const uint4*>(own + rs.dataOffset(slot, source, warp));
      add(acc, GpuMemOps::loadVector(chunk + lane));
    }
  }
  if (__any_sync(kAll, !ok)) return;
  acknowledge(a, rs, warp, lane, tag);

  // 2. All-gather: this rank's summed shard to every peer, and every peer's into the output.
  const uint4 sum = *reinterpret_cast<const uint4*>(&acc);
  if (mine) {
    for (int k = 1; k < n; ++k) {
      const int dest = (me + k) % n;
      auto* chunk = reinterpret_cast<uint4*>(a.bases.at[dest] + ag.dataOffset(slot, me, warp));
      GpuMemOps::storeVector(chunk + lane, sum);
    }
  }
  releaseTags(a, ag, slot, warp, lane, tag);
  if (mine) a.out[vectorOf(me)] = sum;
  for (int k = 1; k < n && ok; ++k) {
    const int source = (me + n - k) % n;
    ok = waitTag(a, ag, slot, source, warp, tag);
    if (ok && valid(source)) {
      const auto* chunk = reinterpret_cast<const uint4*>(own + ag.dataOffset(slot, source, warp));
      a.out[vectorOf(source)] = GpuMemOps::loadVector(chunk + lane);
    }
  }
  if (__any_sync(kAll, !ok)) return;
  acknowledge(a, ag, warp, lane, tag);
  if (lane == 0) a.steps[warp] = step + 1;
}

}  // namespace

std::size_t ChunkTaggedAllReduce::bufferBytes(int ranks, std::size_t maxBytes) {
  return chunkLayout(ranks, maxBytes).bytes;
}

std::size_t ChunkTaggedAllReduce::defaultTwoShotFrom(int ranks) {
  return ranks <= 2 ? (std::size_t{4} << 20) : (std::size_t{256} << 10);
}

ChunkTaggedAllReduce::ChunkTaggedAllReduce(int rank, const std::vector<std::int64_t>& addresses,
                                           std::size_t maxBytes, int threads,
                                           std::uint32_t generation, std::uint64_t timeoutNs,
                                           std::size_t twoShotFrom)
    : rank_(rank),
      ranks_(static_cast<int>(addresses.size())),
      threads_(threads),
      maxBytes_(maxBytes),
      twoShotFrom_(twoShotFrom != 0 ? twoShotFrom : defaultTwoShotFrom(ranks_)),
      generation_(generation),
      timeoutNs_(timeoutNs),
      addresses_(addresses) {
  if (ranks_ < 1 || ranks_ > kMaxRanks) {
    throw std::invalid_argument("ChunkTaggedAllReduce: ranks");
  }
  if (threads_ < kLanes || threads_ > 1024 || threads_ % kLanes != 0) {
    throw std::invalid_argument("ChunkTaggedAllReduce: threads must be a multiple of 32, <= 1024");
  }
  const ChunkLayout l = chunkLayout(ranks_, maxBytes_);
  const std::size_t counters = static_cast<std::size_t>(l.one.warps) + l.rs.warps;
  detail::allocCounters(counters, steps_, status_);
}

ChunkTaggedAllReduce::~ChunkTaggedAllReduce() { detail::freeCounters(steps_, status_); }

bool ChunkTaggedAllReduce::generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes,
                                           std::uint32_t generation) {
  const ChunkLayout l = chunkLayout(ranks, maxBytes);
  return detail::generationInWords(ownBuffer, l.header / sizeof(Word), generation);
}

ChunkAlgorithm ChunkTaggedAllReduce::chosen(std::size_t bytes) const {
  return bytes >= twoShotFrom_ && ranks_ > 1 ? ChunkAlgorithm::kTwoShot : ChunkAlgorithm::kOneShot;
}

void ChunkTaggedAllReduce::run(const float* in, float* out, std::size_t count, void* stream,
                               ChunkAlgorithm algorithm) {
  const std::size_t bytes = count * sizeof(float);
  if (bytes % kVector != 0 || bytes > maxBytes_) {
    throw std::invalid_argument("ChunkTaggedAllReduce::run: " + std::to_string(bytes) +
                                " bytes is not a multiple of 16 or exceeds the buffer");
  }
  if (algorithm == ChunkAlgorithm::kAuto) algorithm = chosen(bytes);
  const ChunkLayout l = chunkLayout(ranks_, maxBytes_);
  ChunkArgs a{};
  a.ranks = ranks_;
  detail::fillCommonArgs(a, rank_, generation_, timeoutNs_, addresses_, in, out);
  a.vectors = bytes / kVector;
  a.shardVectors = (a.vectors + static_cast<std::size_t>(ranks_) - 1) / ranks_;
  a.status = status_;
  const bool twoShot = algorithm == ChunkAlgorithm::kTwoShot;
  a.region = twoShot ? l.rs : l.one;
  a.gather = l.ag;
  a.steps = twoShot ? steps_ + l.one.warps : steps_;
  const std::size_t work = twoShot ? a.shardVectors : a.vectors;
  a.warps = static_cast<int>((work + kLanes - 1) / kLanes);
  if (a.warps == 0) return;
  // Small calls: no block larger than the warps with work (their warps would only exit).
  const int threads = a.warps * kLanes < threads_ ? a.warps * kLanes : threads_;
  const int warpsPerBlock = threads / kLanes;
  const int blocks = (a.warps + warpsPerBlock - 1) / warpsPerBlock;
  auto* s = static_cast<hipStream_t>(stream);
  if (twoShot) {
    chunkTwoShotKernel<<<blocks, threads, 0, s>>>(a);
  } else {
    chunkOneShotKernel<<<blocks, threads, 0, s>>>(a);
  }
  throwIf(hipGetLastError(), "chunk-tagged all-reduce launch");
}

int ChunkTaggedAllReduce::status() { return detail::readStatus(status_); }

}  // namespace peerconf::gpu_kernels
