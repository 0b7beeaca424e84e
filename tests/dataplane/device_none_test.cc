// The data plane on GPUs in a build without GPU kernels (device_none.cc; built only where the
// CUDA variant is not): no kernels, nothing to warm up, and every rank's run is an error result
// that says why, describes what was asked for, and fails C6, C7 and C8.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "backend_factory.h"
#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane/device.h"
#include "dataplane_test_support.h"
#include "mock_hip/control.h"

namespace peerconf::harness::dataplane {

using checkers::checkBoundedWithDataPlane;
using model::DataplaneOutcome;
using model::Result;
using model::RunRecord;
using model::Spec;
namespace {

using namespace std::chrono_literals;
using testing::recordOf;

TEST(DeviceNone, ThereAreNoKernelsAndNothingToWarmUp) {
  EXPECT_FALSE(deviceDataPlaneBuilt());
  mock_hip::resetAll();
  warmUpDevice();
  EXPECT_TRUE(mock_hip::ledger(0).empty());  // no device memory taken
}

TEST(DeviceNone, ARunIsAnErrorThatStillSaysWhatWasAskedFor) {
  Spec spec;
  spec.steps = 40;
  auto backend = makeIpcBackend(Runtime::kMock, 0, 0);
  const Result result = runOnDevice(spec, 1, {0x1000, 0x2000, 0x3000}, DeviceBytes{0x1000, 65536},
                                    *backend, nullptr, 250ms, 10s);
  EXPECT_EQ(result.outcome, DataplaneOutcome::kError);
  EXPECT_EQ(result.detail,
            "this build has no GPU data-plane kernels (configure with -DPEERCONF_WITH_CUDA=ON, as "
            "ci/nightly-build.sh does): the data plane cannot run under --runtime gpu");
  EXPECT_EQ(result.ranks, 3);
  EXPECT_EQ(result.stepsPlanned, 40u);
  EXPECT_EQ(result.stepsDone, 0u);
  EXPECT_EQ(result.timeoutNs, 250'000'000);
  EXPECT_TRUE(result.history.empty());
}

TEST(DeviceNone, ABuildWithoutKernelsReportsAnErrorThatFailsC6C7AndC8) {
  Spec spec;
  auto backend = makeIpcBackend(Runtime::kMock, 0, 0);
  std::vector<Result> results;
  for (int rank = 0; rank < 2; ++rank) {
    results.push_back(runOnDevice(spec, rank, {0x1000, 0x2000}, DeviceBytes{0x1000, 65536},
                                  *backend, nullptr, 1s, 10s));
    EXPECT_EQ(results.back().outcome, DataplaneOutcome::kError);
    EXPECT_NE(results.back().detail.find("this build has no GPU data-plane kernels"),
              std::string::npos)
        << results.back().detail;
  }
  RunRecord record = recordOf(results);
  record.scenario.dataPlane = spec;
  EXPECT_TRUE(checkers::checkNoOverwrite(record).failed());
  EXPECT_TRUE(checkers::checkNoStale(record).failed());
  EXPECT_TRUE(checkBoundedWithDataPlane(record).failed());
}

}  // namespace
}  // namespace peerconf::harness::dataplane
