// The handful of HIP names the GPU backend uses, mapped to the CUDA runtime, so hip_backend.cc
// compiles unchanged for NVIDIA. Deliberately not HIP's own NVIDIA headers: Debian's HIP 5.2 copy
// does not compile against CUDA 13. Include only through hip_api.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace peerconf::hip::detail {

using hipError_t = cudaError_t;
inline constexpr hipError_t hipSuccess = cudaSuccess;
inline constexpr hipError_t hipErrorInvalidValue = cudaErrorInvalidValue;

using hipIpcMemHandle_t = cudaIpcMemHandle_t;
static_assert(sizeof(hipIpcMemHandle_t) == 64);

using hipMemcpyKind = cudaMemcpyKind;
inline constexpr hipMemcpyKind hipMemcpyHostToDevice = cudaMemcpyHostToDevice;
inline constexpr hipMemcpyKind hipMemcpyDeviceToHost = cudaMemcpyDeviceToHost;

// NVIDIA has no uncached allocation: the flag is accepted and ignored (plain cudaMalloc); the
// layout's system-scope release/acquire operations carry the ordering instead.
inline constexpr unsigned int hipDeviceMallocUncached = 0x3;
inline constexpr unsigned int hipIpcMemLazyEnablePeerAccess = cudaIpcMemLazyEnablePeerAccess;

inline hipError_t hipSetDevice(int device) { return cudaSetDevice(device); }
inline hipError_t hipGetDeviceCount(int* count) { return cudaGetDeviceCount(count); }
inline hipError_t hipMalloc(void** ptr, std::size_t size) { return cudaMalloc(ptr, size); }
inline hipError_t hipExtMallocWithFlags(void** ptr, std::size_t size, unsigned int /*flags*/) {
  return cudaMalloc(ptr, size);
}
inline hipError_t hipFree(void* ptr) { return cudaFree(ptr); }
inline hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* ptr) {
  return cudaIpcGetMemHandle(handle, ptr);
}
inline hipError_t hipIpcOpenMemHandle(void** ptr, hipIpcMemHandle_t handle, unsigned int flags) {
  return cudaIpcOpenMemHandle(ptr, handle, flags);
}
inline hipError_t hipIpcCloseMemHandle(void* ptr) { return cudaIpcCloseMemHandle(ptr); }
inline hipError_t hipMemGetInfo(std::size_t* free, std::size_t* total) {
  return cudaMemGetInfo(free, total);
}
inline hipError_t hipMemcpy(void* dst, const void* src, std::size_t n, hipMemcpyKind kind) {
  return cudaMemcpy(dst, src, n, kind);
}
inline hipError_t hipDeviceSynchronize() { return cudaDeviceSynchronize(); }
inline const char* hipGetErrorString(hipError_t error) { return cudaGetErrorString(error); }
inline const char* hipGetErrorName(hipError_t error) { return cudaGetErrorName(error); }
inline hipError_t hipGetLastError() { return cudaGetLastError(); }
inline hipError_t hipPeekAtLastError() { return cudaPeekAtLastError(); }

}  // namespace peerconf::hip::detail
