// The mocked HIP runtime as an implementation of the IpcBackend conformance suite: shared by the
// suite's own instantiation (ipc_backend_conformance_test.cc) and the decorated seams'
// (launch_seam_conformance_test.cc), which swaps `make`.
#pragma once

#include <string>
#include <utility>

#include "hip/hip_variants.h"
#include "ipc_backend_conformance.h"
#include "mock_hip/control.h"

namespace peerconf::conformance {

inline Implementation mockHipImplementation(Placement placement, std::string name) {
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

}  // namespace peerconf::conformance
