// The IpcBackend conformance suite on the CUDA build of the GPU backend, ranks as processes (a
// process cannot open its own IPC handles). Skips when the runtime reports no device.
#include "ipc_backend_conformance.h"

namespace peerconf::conformance {
namespace {

Implementation cuda() {
  Implementation impl;
  impl.name = "Processes";
  impl.placement = Placement::kProcesses;
  impl.make = hip_cuda::makeHipBackend;
  impl.deviceCount = hip_cuda::deviceCount;
  return impl;
}

INSTANTIATE_TEST_SUITE_P(CUDA, IpcBackendConformance, ::testing::Values(cuda()),
                         implementationName);

}  // namespace
}  // namespace peerconf::conformance
