// The one place that chooses an IpcBackend implementation: the mocked HIP runtime, or the GPU
// runtime this build was configured with (CUDA if built, else ROCm).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "ipc_backend.h"

namespace peerconf {

enum class Runtime {
  kMock,  // the mocked HIP runtime over host shared memory (always built)
  kGpu,   // the GPU backend: CUDA if built (PEERCONF_WITH_CUDA), else ROCm (PEERCONF_WITH_HIP)
};

// A backend for `rank` on `device` (the device is made current on the calling thread). Throws
// peerconf::Error for kGpu when this build has no GPU backend, and BackendError (op set-device)
// when the runtime refuses the device.
std::unique_ptr<IpcBackend> makeIpcBackend(Runtime runtime, int device, int rank);

// True when this build has a GPU backend and its runtime reports at least one device.
bool gpuRuntimeAvailable();

// The devices `runtime` shows this process (the mock's PEERCONF_MOCK_DEVICES); 0 when the build
// has no such runtime or it reports none.
int deviceCount(Runtime runtime);

// Free and total bytes of `device` (hipMemGetInfo) under `runtime`; nullopt when the build has no
// such runtime or it refuses. The harness compares it before and after a GPU run (leaks).
struct DeviceMemory {
  std::size_t freeBytes = 0;
  std::size_t totalBytes = 0;
};
std::optional<DeviceMemory> deviceMemory(Runtime runtime, int device);

// "cuda" or "rocm" for the GPU backend this build would use, "none" when it has none.
std::string gpuRuntimeName();

}  // namespace peerconf
