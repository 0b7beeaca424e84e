// What the wide all-reduce kernels share (one_shot.cu, and the bench's decomposition ladder in
// tests/gpu/decompose_kernels.cu): their arguments, and one thread's V 16-byte vectors of a
// block's span (vector j at j * blockDim.x + t, so every warp access is contiguous; a vector past
// the end of the input is neither loaded, pushed, read nor written). Device code: include it from
// a .cu file after gpu_api.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu_kernels/gpu_api.h"
#include "gpu_kernels/protocol_kernels.h"

namespace peerconf::gpu_kernels::detail {

struct Bases {
  char* at[kMaxRanks];
};

// A wide kernel's arguments over its layout `Layout` (detail::fillCommonArgs fills the common
// part).
template <typename Layout>
struct WideArgs {
  Layout layout;
  int rank;
  std::uint32_t generation;
  std::uint64_t timeoutNs;
  Bases bases;
  const uint4* in;
  uint4* out;
  std::size_t vectors;
  std::uint64_t* steps;
  int* status;
};

// Thread t's V vectors of a span of `live` real vectors.
template <int V>
struct ThreadVectors {
  int stride;  // blockDim.x
  int t;
  std::size_t live;

  __device__ bool mine(int j) const { return static_cast<std::size_t>(j) * stride + t < live; }
  __device__ std::size_t at(int j) const { return static_cast<std::size_t>(j) * stride + t; }

  // Loads the thread's vectors of `from` (every load issued before any use; 0 past the end).
  __device__ void load(const uint4* from, uint4 (&x)[V]) const {
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = mine(j) ? from[at(j)] : make_uint4(0, 0, 0, 0);
  }
  // Stores them into a peer's slot.
  __device__ void push(uint4* to, const uint4 (&x)[V]) const {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if (mine(j)) GpuMemOps::storeVector(to + at(j), x[j]);
    }
  }
  // out = x + the vectors of every peer's pair, `pairOf(k)` for k = 1..n-1 (float32 sums; a
  // source's V vectors loaded before any add).
  template <typename PairOf>
  __device__ void sumInto(uint4* out, const uint4 (&x)[V], int n, PairOf pairOf) const {
    float4 acc[V];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = *reinterpret_cast<const float4*>(&x[j]);
    for (int k = 1; k < n; ++k) {
      const uint4* pair = pairOf(k);
      uint4 y[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        y[j] = mine(j) ? GpuMemOps::loadVector(pair + at(j)) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float4 f = *reinterpret_cast<const float4*>(&y[j]);
        acc[j].x += f.x;
        acc[j].y += f.y;
        acc[j].z += f.z;
        acc[j].w += f.w;
      }
    }
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if (mine(j)) out[at(j)] = *reinterpret_cast<const uint4*>(&acc[j]);
    }
  }
};

}  // namespace peerconf::gpu_kernels::detail
