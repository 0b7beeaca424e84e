// The IpcBackend conformance suite on the mocked HIP runtime, ranks as threads and as processes.
#include "ipc_backend_conformance.h"
#include "ipc_backend_mock_hip.h"

namespace peerconf::conformance {
namespace {

Implementation mockHip(Placement placement, std::string name) {
  return mockHipImplementation(placement, std::move(name));
}

INSTANTIATE_TEST_SUITE_P(MockHip, IpcBackendConformance,
                         ::testing::Values(mockHip(Placement::kThreads, "Threads"),
                                           mockHip(Placement::kProcesses, "Processes")),
                         implementationName);

}  // namespace
}  // namespace peerconf::conformance
