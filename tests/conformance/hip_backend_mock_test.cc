// The IpcBackend conformance suite on the mocked HIP runtime, ranks as threads and as processes.
#include "ipc_backend_conformance.h"
#include "mock_hip/control.h"

namespace peerconf::conformance {
namespace {

Implementation mockHip(Placement placement, std::string name) {
  Implementation impl;
  impl.name = std::move(name);
  impl.placement = placement;
  impl.make = hip_mock::makeHipBackend;
  impl.deviceCount = hip_mock::deviceCount;
  impl.liveAllocations = [](int device) {
    return static_cast<int>(mock_hip::liveAllocations(device).size());
  };
  impl.liveMappings = [](int device) {
    return static_cast<int>(mock_hip::liveMappings(device).size());
  };
  // Forked ranks inherit the job id only if it was chosen before the fork.
  impl.beforeRanks = [] {
    (void)mock_hip::job();
    mock_hip::resetAll();
  };
  return impl;
}

INSTANTIATE_TEST_SUITE_P(MockHip, IpcBackendConformance,
                         ::testing::Values(mockHip(Placement::kThreads, "Threads"),
                                           mockHip(Placement::kProcesses, "Processes")),
                         implementationName);

}  // namespace
}  // namespace peerconf::conformance
