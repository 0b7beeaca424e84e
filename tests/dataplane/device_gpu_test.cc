// The data plane as GPU kernels (device_gpu.cc; built only where the CUDA variant is): the parts
// that need no GPU to run. The build says it has the kernels, and a spec that cannot run (a
// buffer too small for its layout) is an error result before any group call, copy or kernel.
// The kernels themselves run in tests/gpu (ci/nightly-gpu).
#include <gtest/gtest.h>

#include <chrono>

#include "backend_factory.h"
#include "dataplane/device.h"

namespace peerconf::harness::dataplane {

using model::DataplaneOutcome;
using model::Result;
using model::Spec;
namespace {

using namespace std::chrono_literals;

TEST(DeviceGpu, TheBuildHasTheKernels) { EXPECT_TRUE(deviceDataPlaneBuilt()); }

TEST(DeviceGpu, ABufferTooSmallForTheLayoutIsAnErrorBeforeAnythingRuns) {
  Spec spec;
  spec.steps = 10;
  // The mocked backend: never touched (the layout is refused first), so no GPU is needed.
  auto backend = makeIpcBackend(Runtime::kMock, 0, 0);
  const Result result =
      runOnDevice(spec, 0, {0x1000, 0x2000}, DeviceBytes{0x1000, 64}, *backend, nullptr, 1s, 10s);
  EXPECT_EQ(result.outcome, DataplaneOutcome::kError);
  EXPECT_NE(result.detail.find("the buffer has 64"), std::string::npos) << result.detail;
  EXPECT_EQ(result.ranks, 2);
  EXPECT_EQ(result.stepsPlanned, 10u);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
