// The IpcBackend conformance suite, written once (ipc_backend_conformance.cc) and instantiated per
// implementation: the mocked HIP runtime with ranks as threads and as forked processes, and the
// CUDA / ROCm builds of the GPU backend with ranks as forked processes (GPU IPC handles cannot be
// opened by the process that exported them, and a process must not use the GPU runtime before
// fork, so the test process itself never touches the GPU).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "ipc_backend.h"
#include "ranks.h"

namespace peerconf::conformance {

// The BackendError `f` throws, or nullopt when it returns. Other exceptions propagate.
template <typename F>
std::optional<BackendError> backendErrorOf(F&& f) {
  try {
    f();
  } catch (const BackendError& e) {
    return e;
  }
  return std::nullopt;
}

class IpcBackendConformance : public ::testing::TestWithParam<Implementation> {
 protected:
  // Empty when `n` devices are present, else why the test is skipped.
  std::string missingDevices(int n) const;
  // Runs the body and reports every rank's failures, labelled by rank.
  void run(int nranks, const RankBody& body);
};

// Skips the current test (with hipGetDeviceCount's answer) unless `n` devices are present.
#define CONFORMANCE_REQUIRE_DEVICES(n)                                                \
  do {                                                                                \
    if (const std::string why = missingDevices(n); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

std::string implementationName(const ::testing::TestParamInfo<Implementation>& info);

}  // namespace peerconf::conformance
