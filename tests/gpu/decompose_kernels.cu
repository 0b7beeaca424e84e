// The decomposition ladder of the one-shot all-reduce (see decompose_kernels.h). Written with HIP
// names like src/gpu_kernels/one_shot.cu; nvcc builds it through gpu_api.h.
//
// Layout of each rank's buffer: tags[slot][source][channel] (64-bit words), then
// data[slot][source][channel] (8 KiB each), 2 slots. The tagged rungs need no acknowledgement:
// a rank leaves step s of a channel only after the peer's tag of step s arrived, and the peer
// stores that tag only inside its call s, which its stream runs after its call s - 1 — so the
// peer has read slot (s - 1) % 2 before this rank writes it again at step s + 1, and neither rank
// can get two steps ahead. Tags are (generation, step): a wait cannot be satisfied by an old
// call's tag. The untagged rungs push without any flow control: they overwrite slots the peer
// may be reading, which only spoils sums nobody checks.
#include <stdexcept>
#include <string>

#include "decompose_kernels.h"
#include "gpu_kernels/bounded_wait.h"
#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/host_calls.h"
#include "gpu_kernels/protocol_kernels.h"
#include "gpu_kernels/wide.h"
#include "layout/tag.h"

namespace peerconf::gpu_bench {

// GpuMemOps, kMaxRanks and, on NVIDIA, the HIP names of the CUDA runtime.
using namespace gpu_kernels;

namespace {

using detail::boundedWait;
using detail::throwIf;
using detail::wordAt;
using layout::Word;

constexpr int kDepth = 2;
constexpr std::size_t kVector = 16;
constexpr std::size_t kChunk = DecomposeKernels::kThreads * kVector;

struct RungLayout {
  int ranks;
  int channels;
  __host__ __device__ std::size_t slots() const {
    return static_cast<std::size_t>(kDepth) * ranks * channels;
  }
  __host__ __device__ std::size_t index(int slot, int source, int channel) const {
    return (static_cast<std::size_t>(slot) * ranks + source) * channels + channel;
  }
  __host__ __device__ std::size_t tagOffset(int slot, int source, int channel) const {
    return index(slot, source, channel) * sizeof(Word);
  }
  __host__ __device__ std::size_t dataStart() const {
    return (slots() * sizeof(Word) + 127) / 128 * 128;
  }
  __host__ __device__ std::size_t dataOffset(int slot, int source, int channel) const {
    return dataStart() + index(slot, source, channel) * kChunk;
  }
  __host__ __device__ std::size_t bytes() const { return dataStart() + slots() * kChunk; }
};

RungLayout rungLayout(int ranks, std::size_t maxBytes) {
  return RungLayout{ranks, static_cast<int>((maxBytes + kChunk - 1) / kChunk)};
}

using RungArgs = detail::WideArgs<RungLayout>;

// V: the 16-byte vectors a thread moves (OneShotAllReduce's vectorsPerThread), thread t's j-th
// vector of its block at j * blockDim.x + t; a block covers V consecutive channels of the layout
// (contiguous in every slot), so a real vector never lies past the layout's last channel.
template <Rung R, int V = 1>
__global__ void rungKernel(RungArgs a) {
  static_assert(V == 1 || R == Rung::kLocal || R == Rung::kPush, "V > 1: rungs 2 and 3 only");
  if constexpr (R != Rung::kEmpty) {
    constexpr bool kTagged = R == Rung::kRelaxedTag || R == Rung::kReleaseTag;
    const RungLayout& l = a.layout;
    const int n = l.ranks;
    const int channel = static_cast<int>(blockIdx.x);
    const int t = static_cast<int>(threadIdx.x);
    char* own = a.bases.at[a.rank];
    // The step, as oneShotKernel's beginBlockStep reads it (tagged rungs only; the others use
    // slot 0). `waits`: false once a wait timed out in an earlier call.
    std::uint64_t step = 0;
    bool waits = true;
    if constexpr (kTagged) {
      __shared__ std::uint64_t stepShared;
      __shared__ bool waitsShared;
      if (t == 0) {
        stepShared = a.steps[channel];
        waitsShared = *a.status == 0;
      }
      __syncthreads();
      step = stepShared;
      waits = waitsShared;
    }
    const int slot = static_cast<int>(step & (kDepth - 1));
    const int first = channel * V;  // the layout's channel of this block's vector 0

    const std::size_t start = static_cast<std::size_t>(channel) * blockDim.x * V;
    const detail::ThreadVectors<V> mine{static_cast<int>(blockDim.x), t, a.vectors - start};
    uint4 x[V];
    mine.load(a.in + start, x);
    if constexpr (R != Rung::kLocal) {
      for (int k = 1; k < n; ++k) {
        const int dest = (a.rank + k) % n;
        mine.push(reinterpret_cast<uint4*>(a.bases.at[dest] + l.dataOffset(slot, a.rank, first)),
                  x);
      }
    }
    if constexpr (R == Rung::kPushFence) {
      __syncthreads();
      if (t == 0) GpuMemOps::fenceRelease();
      __syncthreads();
    }
    if constexpr (kTagged) {
      const Word tag = layout::makeTag(a.generation, static_cast<std::uint32_t>(step));
      __syncthreads();
      if (t < n - 1) {
        Word* peerTag =
            wordAt(a.bases.at[(a.rank + 1 + t) % n], l.tagOffset(slot, a.rank, channel));
        if constexpr (R == Rung::kReleaseTag) {
          GpuMemOps::storeRelease(peerTag, tag);
        } else {
          GpuMemOps::storeRelaxed(peerTag, tag);
        }
        const int source = (a.rank + n - 1 - t) % n;
        if (waits) {
          boundedWait(
              wordAt(own, l.tagOffset(slot, source, channel)),
              [&](Word seen) { return seen == tag; }, a.timeoutNs, a.status, channel);
        }
      }
      __syncthreads();
    }

    // The sum's reads of every peer's slot in this rank's buffer.
    mine.sumInto(a.out + start, x, n, [&](int k) {
      const int source = (a.rank + n - k) % n;
      return reinterpret_cast<const uint4*>(own + l.dataOffset(slot, source, first));
    });
    if (kTagged && t == 0) a.steps[channel] = step + 1;
  }
}

}  // namespace

std::size_t DecomposeKernels::bufferBytes(int ranks, std::size_t maxBytes) {
  return rungLayout(ranks, maxBytes).bytes();
}

bool DecomposeKernels::generationInUse(std::uint64_t ownBuffer, int ranks, std::size_t maxBytes,
                                       std::uint32_t generation) {
  return detail::generationInWords(ownBuffer, rungLayout(ranks, maxBytes).slots(), generation);
}

DecomposeKernels::DecomposeKernels(int rank, const std::vector<std::int64_t>& addresses,
                                   std::size_t maxBytes, std::uint32_t generation,
                                   std::uint64_t timeoutNs)
    : rank_(rank),
      channels_(rungLayout(static_cast<int>(addresses.size()), maxBytes).channels),
      generation_(generation),
      timeoutNs_(timeoutNs),
      addresses_(addresses) {
  const int ranks = static_cast<int>(addresses.size());
  if (ranks < 1 || ranks > kMaxRanks) throw std::invalid_argument("DecomposeKernels: ranks");
  detail::allocCounters(static_cast<std::size_t>(channels_), steps_, status_);
}

DecomposeKernels::~DecomposeKernels() { detail::freeCounters(steps_, status_); }

void DecomposeKernels::run(Rung rung, const float* in, float* out, std::size_t count,
                           void* stream) {
  const std::size_t bytes = count * sizeof(float);
  const bool four = rung == Rung::kLocal4 || rung == Rung::kPush4;
  const std::size_t chunk = four ? 4 * kChunk : kChunk;
  const int blocks = static_cast<int>((bytes + chunk - 1) / chunk);
  if (bytes % kVector != 0 || bytes > static_cast<std::size_t>(channels_) * kChunk) {
    throw std::invalid_argument("DecomposeKernels::run: " + std::to_string(bytes) +
                                " bytes is not a multiple of 16 or exceeds the buffer");
  }
  RungArgs a{};
  a.layout = RungLayout{static_cast<int>(addresses_.size()), channels_};
  detail::fillCommonArgs(a, rank_, generation_, timeoutNs_, addresses_, in, out);
  a.vectors = bytes / kVector;
  a.steps = steps_;
  a.status = status_;
  // By Rung's order.
  void (*const kernels[])(RungArgs) = {rungKernel<Rung::kEmpty>,      rungKernel<Rung::kLocal>,
                                       rungKernel<Rung::kPush>,       rungKernel<Rung::kPushFence>,
                                       rungKernel<Rung::kRelaxedTag>, rungKernel<Rung::kReleaseTag>,
                                       rungKernel<Rung::kLocal, 4>,   rungKernel<Rung::kPush, 4>};
  kernels[static_cast<int>(rung)]<<<blocks, kThreads, 0, static_cast<hipStream_t>(stream)>>>(a);
  throwIf(hipGetLastError(), "rungKernel launch");
}

int DecomposeKernels::status() { return detail::readStatus(status_); }

}  // namespace peerconf::gpu_bench
