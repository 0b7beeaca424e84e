// Host code shared by the all-reduce kernels' launchers: runtime error checks, zeroed device
// counters, and the scan of a buffer's tag words for a generation. Written with HIP names (built
// through gpu_api.h by nvcc, as it is by hipcc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_kernels/gpu_api.h"
#include "layout/tag.h"

namespace peerconf::gpu_kernels::detail {

// Throws std::runtime_error naming `call` when `error` is not hipSuccess (and clears the error).
inline void throwIf(hipError_t error, const char* call) {
  if (error == hipSuccess) return;
  (void)hipGetLastError();
  throw std::runtime_error(std::string(call) + " failed: " + hipGetErrorString(error));
}

// `count` zeroed values of T in device memory (hipFree them).
template <typename T>
T* zeroedOnDevice(std::size_t count) {
  T* p = nullptr;
  throwIf(hipMalloc(reinterpret_cast<void**>(&p), sizeof(T) * count), "hipMalloc");
  const hipError_t zeroed = hipMemset(p, 0, sizeof(T) * count);
  if (zeroed != hipSuccess) (void)hipFree(p);
  throwIf(zeroed, "hipMemset");
  return p;
}

// A kernel's device state: `channels` step counters and the status word, both zeroed (no call done
// yet, every wait in time). On an error nothing stays allocated.
inline void allocCounters(std::size_t channels, std::uint64_t*& steps, int*& status) {
  steps = zeroedOnDevice<std::uint64_t>(channels);
  try {
    status = zeroedOnDevice<int>(1);
  } catch (...) {
    (void)hipFree(steps);
    steps = nullptr;
    throw;
  }
}
inline void freeCounters(std::uint64_t* steps, int* status) {
  (void)hipFree(steps);
  (void)hipFree(status);
}

// Whether any of the `count` tag words at the start of the buffer at `ownBuffer` carries
// `generation` (a generation still in use must not be handed out again).
inline bool generationInWords(std::uint64_t ownBuffer, std::size_t count,
                              std::uint32_t generation) {
  std::vector<layout::Word> words(count);
  throwIf(hipMemcpy(words.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(ownBuffer)),
                    count * sizeof(layout::Word), hipMemcpyDeviceToHost),
          "hipMemcpy");
  for (const layout::Word w : words) {
    if (layout::tagGeneration(w) == generation) return true;
  }
  return false;
}

// The fields the all-reduce kernels' arguments share: this rank, the generation, the wait bound,
// every rank's buffer (device addresses, by rank) and the caller's input and output vectors.
template <typename Args>
void fillCommonArgs(Args& a, int rank, std::uint32_t generation, std::uint64_t timeoutNs,
                    const std::vector<std::int64_t>& addresses, const float* in, float* out) {
  a.rank = rank;
  a.generation = generation;
  a.timeoutNs = timeoutNs;
  for (std::size_t r = 0; r < addresses.size(); ++r) {
    a.bases.at[r] = reinterpret_cast<char*>(static_cast<std::uintptr_t>(addresses[r]));
  }
  a.in = reinterpret_cast<const uint4*>(in);
  a.out = reinterpret_cast<uint4*>(out);
}

// The status word a kernel sets on a timeout (0: none; else 1 + the channel or warp that gave up).
inline int readStatus(const int* status) {
  int value = 0;
  throwIf(hipMemcpy(&value, status, sizeof value, hipMemcpyDeviceToHost), "hipMemcpy");
  return value;
}

}  // namespace peerconf::gpu_kernels::detail
