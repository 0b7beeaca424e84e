// The GPU backend over the mocked HIP runtime (hip_backend.cc, peerconf::hip_backend_mock), beyond
// the IpcBackend conformance suite: how a hipError_t becomes a BackendError (op, rank, peer, code,
// text with the runtime's detail, call, file:line), the last error cleared after it, a success
// without a pointer, the device made current before every call, and the variant's entry points.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "errors.h"
#include "hip/hip_variants.h"
#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"

namespace peerconf {
namespace {

namespace mh = mock_hip;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class HipBackendMock : public ::testing::Test {
 protected:
  void SetUp() override { mh::resetAll(); }
  void TearDown() override {
    mh::resetAll();
    (void)mh::hipSetDevice(0);
    (void)mh::hipGetLastError();
  }
};

// Runs `call`, which must throw a BackendError, and returns it.
template <typename Call>
BackendError backendErrorOf(Call call) {
  try {
    call();
  } catch (const BackendError& e) {
    return e;
  }
  ADD_FAILURE() << "no BackendError";
  return BackendError(Op::kClose, -1, kNoPeer, 0, "none");
}

TEST_F(HipBackendMock, AFailedCallBecomesABackendErrorWithTheRuntimesCodeTextCallAndPlace) {
  auto backend = hip_mock::makeHipBackend(2, 5);
  mh::setFaultHook(2, [](mh::Call call, int, int) {
    return call == mh::Call::kMalloc ? static_cast<int>(mh::hipErrorOutOfMemory) : 0;
  });
  const BackendError e = backendErrorOf([&] { backend->allocUncached(4096); });
  EXPECT_EQ(e.op(), Op::kAlloc);
  EXPECT_EQ(e.rank(), 5);
  EXPECT_EQ(e.peer(), kNoPeer);
  EXPECT_EQ(e.code(), static_cast<int>(mh::hipErrorOutOfMemory));
  // HIP's text, then why the mock refused (its detail), for the report.
  EXPECT_EQ(e.codeText().rfind("out of memory; ", 0), 0u) << e.codeText();
  EXPECT_TRUE(contains(e.codeText(), "fault hook")) << e.codeText();
  EXPECT_TRUE(contains(e.call(), "hipExtMallocWithFlags(")) << e.call();
  EXPECT_EQ(e.where().rfind("hip_backend.cc:", 0), 0u) << e.where();
  EXPECT_EQ(mh::hipPeekAtLastError(), mh::hipSuccess) << "the last error was not cleared";
  EXPECT_TRUE(mh::liveAllocations(2).empty());
}

TEST_F(HipBackendMock, AnOpenThatFailsNamesThePeerItWasFor) {
  auto backend = hip_mock::makeHipBackend(1, 0);
  IpcHandle garbage;
  garbage.bytes[0] = std::byte{0x42};
  const BackendError e = backendErrorOf([&] { backend->openMemHandle(garbage, 3); });
  EXPECT_EQ(e.op(), Op::kOpenHandle);
  EXPECT_EQ(e.peer(), 3);
  EXPECT_EQ(e.code(), static_cast<int>(mh::hipErrorInvalidValue));
  EXPECT_TRUE(contains(e.codeText(), "not a mock HIP IPC memory handle")) << e.codeText();
  EXPECT_TRUE(contains(e.what(), "(peer 3)")) << e.what();
}

TEST_F(HipBackendMock, ADeviceThatCannotBeSelectedFailsTheConstructorAndLaterCallsForTheirPeer) {
  int count = 0;
  ASSERT_EQ(mh::hipGetDeviceCount(&count), mh::hipSuccess);
  const BackendError refused = backendErrorOf([&] { hip_mock::makeHipBackend(count, 4); });
  EXPECT_EQ(refused.op(), Op::kSetDevice);
  EXPECT_EQ(refused.rank(), 4);
  EXPECT_EQ(refused.code(), static_cast<int>(mh::hipErrorInvalidDevice));
  EXPECT_TRUE(contains(refused.codeText(), "invalid device ordinal")) << refused.codeText();
  EXPECT_TRUE(contains(refused.call(), "hipSetDevice")) << refused.call();

  // Selecting the device before closing peer 6's mapping fails: the failure is the close's.
  auto backend = hip_mock::makeHipBackend(2, 1);
  mh::setFaultHook(2, [](mh::Call call, int, int) {
    return call == mh::Call::kSetDevice ? static_cast<int>(mh::hipErrorInvalidContext) : 0;
  });
  const BackendError e = backendErrorOf([&] { backend->closeMemHandle(0x1000, 6); });
  EXPECT_EQ(e.op(), Op::kSetDevice);
  EXPECT_EQ(e.peer(), 6);
  EXPECT_EQ(e.code(), static_cast<int>(mh::hipErrorInvalidContext));
}

// HIP answers a zero-byte allocation with success and a null pointer: the backend's contract
// promises a pointer, so that is an error too.
TEST_F(HipBackendMock, ASuccessWithoutAPointerIsAnError) {
  auto backend = hip_mock::makeHipBackend(0, 2);
  const BackendError e = backendErrorOf([&] { backend->allocDevice(0); });
  EXPECT_EQ(e.op(), Op::kAlloc);
  EXPECT_EQ(e.code(), static_cast<int>(mh::hipErrorInvalidValue));
  EXPECT_EQ(e.codeText(), "the runtime returned a null pointer");
  EXPECT_EQ(e.call(), "hipMalloc");
}

TEST_F(HipBackendMock, EveryCallMakesItsDeviceCurrentFirst) {
  auto backend = hip_mock::makeHipBackend(3, 0);
  ASSERT_EQ(mh::hipSetDevice(0), mh::hipSuccess);  // another rank served on this thread meanwhile
  const DevicePtr ptr = backend->allocDevice(256);
  int device = -1;
  ASSERT_EQ(mh::hipGetDevice(&device), mh::hipSuccess);
  EXPECT_EQ(device, 3);
  ASSERT_EQ(mh::liveAllocations(3).size(), 1u);
  EXPECT_TRUE(mh::liveAllocations(0).empty());
  ASSERT_EQ(mh::hipSetDevice(0), mh::hipSuccess);
  backend->freeDeviceMem(ptr);
  EXPECT_TRUE(mh::liveAllocations(3).empty());
}

TEST_F(HipBackendMock, TheVariantsEntryPointsAnswerForTheMock) {
  EXPECT_EQ(hip_mock::runtimeName(), "mock-hip");
  int count = 0;
  ASSERT_EQ(mh::hipGetDeviceCount(&count), mh::hipSuccess);
  const hip::DeviceCount devices = hip_mock::deviceCount();
  EXPECT_EQ(devices.count, count);
  EXPECT_EQ(devices.code, 0);
  const hip::MemInfo info = hip_mock::memInfo(0);
  EXPECT_TRUE(info.ok);
  EXPECT_GT(info.totalBytes, 0u);
  EXPECT_LE(info.freeBytes, info.totalBytes);
  EXPECT_FALSE(hip_mock::memInfo(-1).ok);
  EXPECT_EQ(mh::hipPeekAtLastError(), mh::hipSuccess) << "a refused memInfo left its error";
}

}  // namespace
}  // namespace peerconf
