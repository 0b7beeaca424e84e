// The IpcBackend conformance suite on the CUDA build of the GPU backend, ranks as processes (a
// process cannot open its own IPC handles): one GPU a rank, and every rank on GPU 0 (processes
// sharing one GPU, which a one-GPU runner can run). Skips when the runtime reports no device.
#include "ipc_backend_conformance.h"

namespace peerconf::conformance {
namespace {

Implementation cuda(std::string name, bool sharedDevice) {
  Implementation impl;
  impl.name = std::move(name);
  impl.placement = Placement::kProcesses;
  impl.make = hip_cuda::makeHipBackend;
  impl.deviceCount = hip_cuda::deviceCount;
  impl.sharedDevice = sharedDevice;
  return impl;
}

INSTANTIATE_TEST_SUITE_P(CUDA, IpcBackendConformance,
                         ::testing::Values(cuda("Processes", false), cuda("SharedDevice", true)),
                         implementationName);

}  // namespace
}  // namespace peerconf::conformance
