// The kernels' bounded spin (one_shot.cu, chunk_tagged.cu): a poll of one word that gives up at a
// deadline and says so in the call's status word, so no kernel can spin forever. Device code:
// include it from a .cu file after gpu_api.h.
#pragma once

#include <cstdint>

#include "gpu_kernels/gpu_api.h"
#include "layout/tag.h"

namespace peerconf::gpu_kernels::detail {

__device__ inline layout::Word* wordAt(char* base, std::size_t offset) {
  return reinterpret_cast<layout::Word*>(base + offset);
}

// Spins until `accept(word)`; false once `timeoutNs` passed, with `status` set to 1 + `who` (the
// channel or warp that gave up; the first to give up wins).
template <class Accept>
__device__ bool boundedWait(const layout::Word* word, Accept accept, std::uint64_t timeoutNs,
                            int* status, int who) {
  std::uint32_t spins = 0;
  std::uint64_t start = 0;
  for (;;) {
    if (accept(GpuMemOps::loadAcquire(word))) return true;
    if ((++spins & 1023u) == 0) {
      const std::uint64_t now = GpuMemOps::nowNs();
      if (start == 0) {
        start = now;
      } else if (now - start > timeoutNs) {
        atomicCAS(status, 0, 1 + who);
        return false;
      }
    }
  }
}

}  // namespace peerconf::gpu_kernels::detail
