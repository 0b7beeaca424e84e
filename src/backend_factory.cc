// Backend choice: which GPU variants CMake built is known here (and in hip/hip_api.h) only.
#include "backend_factory.h"

#include "errors.h"
#include "hip/hip_variants.h"

namespace peerconf {

namespace {

constexpr const char* kNoGpuBackend =
    "this build has no GPU backend: configure with -DPEERCONF_WITH_CUDA=ON or "
    "-DPEERCONF_WITH_HIP=ON";

}  // namespace

std::unique_ptr<IpcBackend> makeIpcBackend(Runtime runtime, int device, int rank) {
  if (runtime == Runtime::kMock) return hip_mock::makeHipBackend(device, rank);
#if defined(PEERCONF_HAVE_HIP_CUDA)
  return hip_cuda::makeHipBackend(device, rank);
#elif defined(PEERCONF_HAVE_HIP_ROCM)
  return hip_rocm::makeHipBackend(device, rank);
#else
  throw Error(kNoGpuBackend, Op::kSetDevice, rank);
#endif
}

bool gpuRuntimeAvailable() {
#if defined(PEERCONF_HAVE_HIP_CUDA)
  return hip_cuda::deviceCount().count > 0;
#elif defined(PEERCONF_HAVE_HIP_ROCM)
  return hip_rocm::deviceCount().count > 0;
#else
  return false;
#endif
}

int deviceCount(Runtime runtime) {
  hip::DeviceCount devices{};
  if (runtime == Runtime::kMock) {
    devices = hip_mock::deviceCount();
  } else {
#if defined(PEERCONF_HAVE_HIP_CUDA)
    devices = hip_cuda::deviceCount();
#elif defined(PEERCONF_HAVE_HIP_ROCM)
    devices = hip_rocm::deviceCount();
#endif
  }
  return devices.count;
}

std::optional<DeviceMemory> deviceMemory(Runtime runtime, int device) {
  hip::MemInfo info;
  if (runtime == Runtime::kMock) {
    info = hip_mock::memInfo(device);
  } else {
#if defined(PEERCONF_HAVE_HIP_CUDA)
    info = hip_cuda::memInfo(device);
#elif defined(PEERCONF_HAVE_HIP_ROCM)
    info = hip_rocm::memInfo(device);
#endif
  }
  if (!info.ok) return std::nullopt;
  return DeviceMemory{info.freeBytes, info.totalBytes};
}

std::string gpuRuntimeName() {
#if defined(PEERCONF_HAVE_HIP_CUDA)
  return std::string(hip_cuda::runtimeName());
#elif defined(PEERCONF_HAVE_HIP_ROCM)
  return std::string(hip_rocm::runtimeName());
#else
  return "none";
#endif
}

}  // namespace peerconf
