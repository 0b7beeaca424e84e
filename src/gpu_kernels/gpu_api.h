// The one compatibility header of the GPU kernels: kernels and their host code are written with
// HIP's names and built by nvcc for NVIDIA (CUDA's runtime under those names, plus inline PTX) or
// by hipcc for AMD (HIP itself). GpuMemOps — the data-plane protocol's memory operations at system
// scope — is defined here once per dialect. The only place in src/gpu_kernels with #if.
#pragma once

#include <cstdint>

#include "layout/tag.h"

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)

#include <hip/hip_runtime.h>

namespace peerconf::gpu_kernels {

inline constexpr const char* kDialect = "hip";

// AMD: the HIP atomic builtins with system scope, so peers across XGMI/PCIe see the order.
struct GpuMemOps {
  using Word = layout::Word;
  __device__ static Word loadAcquire(const Word* word) {
    return __hip_atomic_load(word, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
  }
  __device__ static Word loadRelaxed(const Word* word) {
    return __hip_atomic_load(word, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  }
  __device__ static void storeRelease(Word* word, Word value) {
    __hip_atomic_store(word, value, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
  }
  __device__ static void storeRelaxed(Word* word, Word value) {
    __hip_atomic_store(word, value, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  }
  // The empty scope string is the system scope.
  __device__ static void fenceAcquire() { __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, ""); }
  __device__ static void fenceRelease() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, ""); }
  __device__ static void pause(std::uint32_t spins, const Word*, Word) {
    if (spins > 256) __builtin_amdgcn_s_sleep(2);
  }
  // The constant 100 MHz real-time counter of gfx90a/gfx940 (hipDeviceAttributeWallClockRate).
  __device__ static std::uint64_t nowNs() {
#if __HIP_DEVICE_COMPILE__
    return static_cast<std::uint64_t>(__builtin_amdgcn_s_memrealtime()) * 10u;
#else
    return 0;
#endif
  }
  // 16-byte payload accesses: the PeerBuffer is uncached on AMD, so plain accesses reach memory.
  __device__ static uint4 loadVector(const uint4* p) { return *p; }
  __device__ static void storeVector(uint4* p, uint4 v) { *p = v; }
  // Two adjacent words, each a relaxed system-scope atomic (the low-latency layout's flagged
  // words: each carries its own flag, so only per-word atomicity matters).
  __device__ static void storeWordPair(Word* p, Word a, Word b) {
    __hip_atomic_store(p, a, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
    __hip_atomic_store(p + 1, b, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  }
  __device__ static void loadWordPair(const Word* p, Word& a, Word& b) {
    a = __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
    b = __hip_atomic_load(p + 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  }
};

}  // namespace peerconf::gpu_kernels

#else  // NVIDIA: nvcc

#include <cuda_runtime.h>

#include "hip/hip_to_cuda.h"

namespace peerconf::gpu_kernels {

inline constexpr const char* kDialect = "cuda";

using namespace peerconf::hip::detail;  // the CUDA shims of hip_to_cuda.h

// The HIP names the kernels' host code uses beyond the backend's (hip_to_cuda.h).
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipGraph_t = cudaGraph_t;
using hipGraphExec_t = cudaGraphExec_t;
inline constexpr hipError_t hipErrorNotReady = cudaErrorNotReady;
inline constexpr unsigned int hipStreamNonBlocking = cudaStreamNonBlocking;
inline constexpr cudaStreamCaptureMode hipStreamCaptureModeThreadLocal =
    cudaStreamCaptureModeThreadLocal;
inline hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned int f) {
  return cudaStreamCreateWithFlags(s, f);
}
inline hipError_t hipStreamDestroy(hipStream_t s) { return cudaStreamDestroy(s); }
inline hipError_t hipStreamSynchronize(hipStream_t s) { return cudaStreamSynchronize(s); }
inline hipError_t hipStreamQuery(hipStream_t s) { return cudaStreamQuery(s); }
inline hipError_t hipEventCreate(hipEvent_t* e) { return cudaEventCreate(e); }
inline hipError_t hipEventDestroy(hipEvent_t e) { return cudaEventDestroy(e); }
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return cudaEventRecord(e, s); }
inline hipError_t hipEventSynchronize(hipEvent_t e) { return cudaEventSynchronize(e); }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
  return cudaEventElapsedTime(ms, a, b);
}
inline hipError_t hipMemset(void* p, int v, std::size_t n) { return cudaMemset(p, v, n); }
inline hipError_t hipDeviceSynchronize() { return cudaDeviceSynchronize(); }
inline hipError_t hipGetDevice(int* device) { return cudaGetDevice(device); }
inline hipError_t hipStreamBeginCapture(hipStream_t s, cudaStreamCaptureMode mode) {
  return cudaStreamBeginCapture(s, mode);
}
inline hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* g) {
  return cudaStreamEndCapture(s, g);
}
inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* e, hipGraph_t g,
                                               unsigned long long f) {
  return cudaGraphInstantiateWithFlags(e, g, f);
}
inline hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t s) { return cudaGraphLaunch(e, s); }
inline hipError_t hipGraphExecDestroy(hipGraphExec_t e) { return cudaGraphExecDestroy(e); }
inline hipError_t hipGraphDestroy(hipGraph_t g) { return cudaGraphDestroy(g); }

// NVIDIA: PTX memory operations with .sys scope (peers over NVLink see the order). cudaMalloc'd
// memory is cached, so ordering comes from these, not from an uncached allocation.
struct GpuMemOps {
  using Word = layout::Word;
  __device__ static Word loadAcquire(const Word* word) {
    Word v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(word) : "memory");
    return v;
  }
  __device__ static Word loadRelaxed(const Word* word) {
    Word v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(word) : "memory");
    return v;
  }
  __device__ static void storeRelease(Word* word, Word value) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
  }
  __device__ static void storeRelaxed(Word* word, Word value) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
  }
  // PTX has no acquire-only fence before sm_90's newest ISA; acq_rel orders loads before loads.
  __device__ static void fenceAcquire() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
  __device__ static void fenceRelease() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
  __device__ static void pause(std::uint32_t spins, const Word*, Word) {
    if (spins > 256) __nanosleep(32);
  }
  __device__ static std::uint64_t nowNs() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  }
  // 16-byte loads of peer-written data that skip L1 (L1 is not coherent with NVLink writes).
  __device__ static uint4 loadVector(const uint4* p) { return __ldcg(p); }
  __device__ static void storeVector(uint4* p, uint4 v) { __stcg(p, v); }
  // Two adjacent words in one 16-byte access. PTX treats .volatile as .relaxed.sys on sm_70+,
  // and a vector access as one access per element: each word is single-copy atomic, which is all
  // the low-latency layout's flagged words need (each carries its own flag).
  __device__ static void storeWordPair(Word* p, Word a, Word b) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
  }
  __device__ static void loadWordPair(const Word* p, Word& a, Word& b) {
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(a), "=l"(b)
                 : "l"(p)
                 : "memory");
  }
};

}  // namespace peerconf::gpu_kernels

#endif
