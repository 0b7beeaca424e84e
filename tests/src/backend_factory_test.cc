// The backend factory: the mock is always there; kGpu is the configured GPU runtime or a clear
// error.
#include "backend_factory.h"

#include <gtest/gtest.h>

#include "errors.h"
#include "mock_hip/control.h"

namespace peerconf {
namespace {

TEST(IpcBackendFactory, MockBackendServesTheRankOnItsDevice) {
  mock_hip::resetAll();
  const auto backend = makeIpcBackend(Runtime::kMock, 3, 5);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->rank(), 5);
  const DevicePtr p = backend->allocUncached(4096);
  ASSERT_EQ(mock_hip::liveAllocations(3).size(), 1u);
  EXPECT_EQ(mock_hip::liveAllocations(3)[0].ptr, p);
  backend->freeDeviceMem(p);
  EXPECT_TRUE(mock_hip::liveAllocations(3).empty());
}

TEST(IpcBackendFactory, MockRefusesADeviceOutOfRange) {
  try {
    makeIpcBackend(Runtime::kMock, 1 << 20, 2);
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.op(), Op::kSetDevice);
    EXPECT_EQ(e.rank(), 2);
    EXPECT_EQ(e.code(), 101);
  }
}

TEST(IpcBackendFactory, GpuIsTheConfiguredRuntimeOrAClearError) {
  const std::string name = gpuRuntimeName();
  if (name == "none") {
    EXPECT_FALSE(gpuRuntimeAvailable());
    try {
      makeIpcBackend(Runtime::kGpu, 0, 1);
      FAIL() << "expected Error";
    } catch (const Error& e) {
      EXPECT_EQ(e.rank(), 1);
      EXPECT_NE(std::string(e.what()).find("-DPEERCONF_WITH_CUDA=ON"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("-DPEERCONF_WITH_HIP=ON"), std::string::npos);
    }
    return;
  }
  EXPECT_TRUE(name == "cuda" || name == "rocm") << name;
  if (!gpuRuntimeAvailable()) {
    // Built but no device here: the runtime refuses the device, it does not crash.
    EXPECT_THROW(makeIpcBackend(Runtime::kGpu, 0, 0), BackendError);
  }
}

}  // namespace
}  // namespace peerconf
