// The IpcBackend conformance suite on the ROCm build of the GPU backend, ranks as processes (a
// process cannot open its own IPC handles). Skips when the runtime reports no device.
#include "ipc_backend_conformance.h"

namespace peerconf::conformance {
namespace {

Implementation rocm() {
  Implementation impl;
  impl.name = "Processes";
  impl.placement = Placement::kProcesses;
  impl.make = hip_rocm::makeHipBackend;
  impl.deviceCount = hip_rocm::deviceCount;
  return impl;
}

INSTANTIATE_TEST_SUITE_P(ROCm, IpcBackendConformance, ::testing::Values(rocm()),
                         implementationName);

}  // namespace
}  // namespace peerconf::conformance
