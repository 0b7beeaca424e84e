// Entry points of every build of the GPU backend, for code that must not see a runtime's headers
// (the factory, tests). Only the builds CMake made are defined: hip_mock always
// (peerconf::hip_backend_mock), hip_rocm with PEERCONF_WITH_HIP (peerconf::hip_backend_rocm),
// hip_cuda with PEERCONF_WITH_CUDA (peerconf::hip_backend_cuda).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ipc_backend.h"

namespace peerconf::hip {

// What hipGetDeviceCount answered: `count` devices, or the runtime's code and text.
struct DeviceCount {
  int count = 0;
  int code = 0;
  std::string text;
};

// What hipMemGetInfo answered for a device: its free and total bytes (ok false when refused).
struct MemInfo {
  bool ok = false;
  std::size_t freeBytes = 0;
  std::size_t totalBytes = 0;
};

}  // namespace peerconf::hip

// The one exception to "namespaces follow folders" (ci/namespace_check.py allows it): one source,
// hip_backend.cc, is built once per runtime, each build in its own namespace (PEERCONF_HIP_NS, set
// in src/hip/CMakeLists.txt) so that the builds link side by side into one binary.
namespace peerconf::hip_mock {
// A HipBackend over the mocked HIP runtime (link peerconf::hip_backend_mock).
std::unique_ptr<IpcBackend> makeHipBackend(int device, int rank);
hip::DeviceCount deviceCount();
hip::MemInfo memInfo(int device);  // hipSetDevice, then hipMemGetInfo
std::string_view runtimeName();    // "mock-hip"
}  // namespace peerconf::hip_mock

namespace peerconf::hip_rocm {
// A HipBackend over ROCm's HIP runtime (link peerconf::hip_backend_rocm).
std::unique_ptr<IpcBackend> makeHipBackend(int device, int rank);
hip::DeviceCount deviceCount();
hip::MemInfo memInfo(int device);  // hipSetDevice, then hipMemGetInfo
std::string_view runtimeName();    // "rocm"
}  // namespace peerconf::hip_rocm

namespace peerconf::hip_cuda {
// A HipBackend over the CUDA runtime through hip_to_cuda.h (link peerconf::hip_backend_cuda).
std::unique_ptr<IpcBackend> makeHipBackend(int device, int rank);
hip::DeviceCount deviceCount();
hip::MemInfo memInfo(int device);  // hipSetDevice, then hipMemGetInfo
std::string_view runtimeName();    // "cuda"
}  // namespace peerconf::hip_cuda
