// The IpcBackend conformance suite on the mocked HIP runtime: ranks as threads, as processes, and
// as processes sharing one device (as the nightly shares one GPU).
#include "ipc_backend_conformance.h"
#include "ipc_backend_mock_hip.h"

namespace peerconf::conformance {
namespace {

Implementation mockHip(Placement placement, std::string name, bool sharedDevice = false) {
  Implementation impl = mockHipImplementation(placement, std::move(name));
  impl.sharedDevice = sharedDevice;
  return impl;
}

INSTANTIATE_TEST_SUITE_P(MockHip, IpcBackendConformance,
                         ::testing::Values(mockHip(Placement::kThreads, "Threads"),
                                           mockHip(Placement::kProcesses, "Processes"),
                                           mockHip(Placement::kProcesses, "SharedDevice", true)),
                         implementationName);

}  // namespace
}  // namespace peerconf::conformance
