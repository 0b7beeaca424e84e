// The harness's side of the mocked HIP runtime (control.cc): the ledger, leak queries, fault
// hooks, device resets, the job id, and the names of ledger ops and calls.
#include "mock_hip/control.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "mock_hip/hip_runtime_api.h"
#include "mock_hip/segment.h"
#include "mock_hip_test_support.h"

namespace peerconf::mock_hip {
namespace {

using test_support::contains;
using test_support::generationOf;
using test_support::nameOf;
using test_support::ownSegments;
using test_support::segmentExists;
using MockHipControl = test_support::MockHipTest;

TEST_F(MockHipControl, SetJobChangesWhatIsAccepted) {
  const std::uint64_t original = job();
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  setJob(original + 1);
  EXPECT_EQ(job(), original + 1);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* ptr = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
  setJob(original);
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(ptr), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipControl, LedgerRecordsAllocOpenCloseFreeOnTheRightDevices) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(2, 4096, &handle);
  const std::uint64_t generation = generationOf(buffer, 2);
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(liveMappings(3).size(), 1u);
  EXPECT_EQ(liveAllocations(2).size(), 1u);
  ASSERT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(2), hipSuccess);
  ASSERT_EQ(hipFree(buffer), hipSuccess);

  const auto owner = ledger(2);
  ASSERT_EQ(owner.size(), 2u);
  EXPECT_EQ(owner[0].op, LedgerOp::kAlloc);
  EXPECT_EQ(owner[1].op, LedgerOp::kFree);
  for (const auto& e : owner) {
    EXPECT_EQ(e.device, 2);
    EXPECT_EQ(e.ownerDevice, 2);
    EXPECT_EQ(e.ptr, reinterpret_cast<std::uintptr_t>(buffer));
    EXPECT_EQ(e.size, 4096u);
    EXPECT_EQ(e.generation, generation);
    EXPECT_EQ(e.error, 0);
  }
  const auto peer = ledger(3);
  ASSERT_EQ(peer.size(), 2u);
  EXPECT_EQ(peer[0].op, LedgerOp::kOpen);
  EXPECT_EQ(peer[1].op, LedgerOp::kClose);
  for (const auto& e : peer) {
    EXPECT_EQ(e.device, 3);
    EXPECT_EQ(e.ownerDevice, 2);
    EXPECT_EQ(e.ptr, reinterpret_cast<std::uintptr_t>(mapped));
    EXPECT_EQ(e.generation, generation);
    EXPECT_EQ(e.error, 0);
  }
  EXPECT_LE(owner[0].timeNs, peer[0].timeNs);
  EXPECT_LE(peer[1].timeNs, owner[1].timeNs);
  EXPECT_TRUE(ledger(0).empty());
  EXPECT_TRUE(liveAllocations(2).empty());
  EXPECT_TRUE(liveMappings(3).empty());
  clearLedgers();
  EXPECT_TRUE(ledger(2).empty());
  EXPECT_TRUE(ledger(-1).empty());
}

TEST_F(MockHipControl, FaultHookFailsTheChosenCallWithTheChosenCodeAndNoSideEffect) {
  hipIpcMemHandle_t handle;
  void* buffer = allocOn(0, 4096, &handle);
  std::vector<std::tuple<Call, int, int>> seen;
  setFaultHook(1, [&seen](Call call, int device, int peer) {
    seen.emplace_back(call, device, peer);
    if (call == Call::kOpen && peer == 0) return static_cast<int>(hipErrorMapFailed);
    if (call == Call::kMalloc) return static_cast<int>(hipErrorOutOfMemory);
    return 0;
  });
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  const auto segmentsBefore = ownSegments().size();

  void* ptr = reinterpret_cast<void*>(0x99);
  EXPECT_EQ(hipIpcOpenMemHandle(&ptr, handle, hipIpcMemLazyEnablePeerAccess), hipErrorMapFailed);
  EXPECT_EQ(ptr, reinterpret_cast<void*>(0x99));
  EXPECT_TRUE(contains(lastErrorDetail(), "fault hook")) << lastErrorDetail();
  EXPECT_TRUE(liveMappings(1).empty());
  EXPECT_EQ(hipMalloc(&ptr, 4096), hipErrorOutOfMemory);
  EXPECT_EQ(ptr, reinterpret_cast<void*>(0x99));
  EXPECT_TRUE(liveAllocations(1).empty());
  EXPECT_EQ(ownSegments().size(), segmentsBefore);

  const auto entries = ledger(1);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].op, LedgerOp::kOpen);
  EXPECT_EQ(entries[0].error, static_cast<int>(hipErrorMapFailed));
  EXPECT_EQ(entries[0].ownerDevice, 0);
  EXPECT_EQ(entries[1].op, LedgerOp::kAlloc);
  EXPECT_EQ(entries[1].error, static_cast<int>(hipErrorOutOfMemory));
  ASSERT_GE(seen.size(), 3u);  // hipSetDevice(1), open, malloc
  EXPECT_EQ(seen[0], std::make_tuple(Call::kSetDevice, 1, -1));
  EXPECT_EQ(seen[1], std::make_tuple(Call::kOpen, 1, 0));
  EXPECT_EQ(seen[2], std::make_tuple(Call::kMalloc, 1, -1));

  // Another device's hook does not apply; clearing the hooks restores the call.
  setFaultHook(2, [](Call, int, int) { return static_cast<int>(hipErrorUnknown); });
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* mapped = nullptr;
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipSetDevice(2), hipErrorUnknown);
  int device = -1;
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_EQ(device, 3) << "a failed hipSetDevice keeps the current device";
  clearFaultHooks();
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  EXPECT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

TEST_F(MockHipControl, ResetDeviceReleasesEverythingTheDeviceHolds) {
  hipIpcMemHandle_t peerHandle;
  void* peerBuffer = allocOn(3, 4096, &peerHandle);
  void* a = allocOn(2, 4096);
  void* b = allocOn(2, 8192);
  const std::string nameA = nameOf(a, 2);
  const std::string nameB = nameOf(b, 2);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, peerHandle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  const auto ledgerBefore = ledger(2).size();

  resetDevice(2);
  EXPECT_TRUE(liveAllocations(2).empty());
  EXPECT_TRUE(liveMappings(2).empty());
  EXPECT_FALSE(segmentExists(nameA));
  EXPECT_FALSE(segmentExists(nameB));
  EXPECT_EQ(ledger(2).size(), ledgerBefore) << "a reset writes no ledger entries";
  EXPECT_EQ(liveAllocations(3).size(), 1u) << "other devices are untouched";
  EXPECT_EQ(hipFree(a), hipErrorInvalidValue);
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipErrorInvalidValue);

  resetAll();
  EXPECT_TRUE(liveAllocations(3).empty());
  EXPECT_TRUE(ownSegments().empty());
  EXPECT_TRUE(ledger(3).empty());
  (void)peerBuffer;
}

// A run drawn from a seed gets the same device pointers and allocation numbers every time it makes
// the same calls, whatever ran before it; another seed other ones; and with an allocation left from
// before, a new run reuses neither.
struct RunDraws {
  std::vector<std::uint64_t> pointers;
  std::vector<std::uint64_t> generations;
  bool operator==(const RunDraws&) const = default;
};

TEST_F(MockHipControl, ARunDrawnFromASeedGetsTheSamePointersAndAllocationNumbersEveryTime) {
  const auto drawRun = [](std::uint64_t seed) {
    beginRun(seed);
    RunDraws draws;
    hipIpcMemHandle_t handle;
    void* a = allocOn(1, 4096, &handle);
    void* b = allocOn(2, 8192);
    EXPECT_EQ(hipSetDevice(3), hipSuccess);
    void* mapped = nullptr;
    EXPECT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
    for (void* p : {a, b, mapped}) draws.pointers.push_back(reinterpret_cast<std::uintptr_t>(p));
    draws.generations = {generationOf(a, 1), generationOf(b, 2)};
    resetAll();
    return draws;
  };
  const RunDraws first = drawRun(7);
  void* between = allocOn(4, 1 << 20);  // another run's allocation in between, freed
  ASSERT_EQ(hipFree(between), hipSuccess);
  EXPECT_EQ(drawRun(7), first);
  EXPECT_EQ(first.pointers[0], detail::placementBase(7)) << "the first mapping at the seed's base";
  EXPECT_NE(drawRun(8), first);
  std::set<std::uint64_t> distinct(first.pointers.begin(), first.pointers.end());
  EXPECT_EQ(distinct.size(), 3u);

  // Something left from before: numbers and addresses go on, never reused.
  beginRun(7);
  void* left = allocOn(1, 4096);
  const std::uint64_t leftGeneration = generationOf(left, 1);
  beginRun(7);
  void* next = allocOn(1, 4096);
  EXPECT_NE(next, left);
  EXPECT_GT(generationOf(next, 1), leftGeneration);
  resetAll();
  detail::placeMappingsAt(0);  // the kernel's addresses for the tests after this one
}

TEST(MockHipControlNames, EveryLedgerOpAndCallHasItsOwnName) {
  std::set<std::string> ops;
  for (LedgerOp op : {LedgerOp::kAlloc, LedgerOp::kFree, LedgerOp::kOpen, LedgerOp::kClose,
                      LedgerOp::kGetHandle, LedgerOp::kSetDevice, LedgerOp::kMemcpy}) {
    ops.emplace(ledgerOpName(op));
  }
  EXPECT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops.count("unknown"), 0u);
  EXPECT_EQ(ledgerOpName(LedgerOp::kGetHandle), "get-handle");
  std::set<std::string> calls;
  for (Call call : {Call::kSetDevice, Call::kMalloc, Call::kFree, Call::kGetHandle, Call::kOpen,
                    Call::kClose, Call::kMemcpy}) {
    calls.emplace(callName(call));
  }
  EXPECT_EQ(calls.size(), 7u);
  EXPECT_EQ(callName(Call::kOpen), "hipIpcOpenMemHandle");
  EXPECT_EQ(callName(Call::kMalloc), "hipMalloc");
}

// Alloc, free, open and close are recorded whether they succeed or not; any other call only
// when it fails.
TEST_F(MockHipControl, OnlyFailedCallsOfTheOtherOpsAreRecorded) {
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  EXPECT_TRUE(ledger(1).empty()) << "a successful hipSetDevice is not recorded";
  setFaultHook(2, [](Call call, int, int) {
    return call == Call::kSetDevice ? static_cast<int>(hipErrorInvalidDevice) : 0;
  });
  EXPECT_EQ(hipSetDevice(2), hipErrorInvalidDevice);
  const auto entries = ledger(2);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].op, LedgerOp::kSetDevice);
  EXPECT_EQ(entries[0].error, static_cast<int>(hipErrorInvalidDevice));
  EXPECT_TRUE(contains(lastErrorDetail(), "fault hook")) << lastErrorDetail();
  setFaultHook(2, nullptr);  // an empty hook removes the device's hook
  EXPECT_EQ(hipSetDevice(2), hipSuccess);
  EXPECT_EQ(ledger(2).size(), 1u);
}

TEST_F(MockHipControl, LiveAllocationsAreListedOldestFirstAndOnlyForTheirDevice) {
  void* first = allocOn(0, 4096);
  void* second = allocOn(0, 8192);
  void* elsewhere = allocOn(1, 4096);
  const auto live = liveAllocations(0);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].ptr, reinterpret_cast<std::uintptr_t>(first));
  EXPECT_EQ(live[1].ptr, reinterpret_cast<std::uintptr_t>(second));
  EXPECT_EQ(live[1].size, 8192u);
  EXPECT_TRUE(liveAllocations(-1).empty());
  EXPECT_TRUE(liveMappings(0).empty());
  ASSERT_EQ(hipFree(elsewhere), hipSuccess);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  ASSERT_EQ(hipFree(first), hipSuccess);
  ASSERT_EQ(liveAllocations(0).size(), 1u);
  EXPECT_EQ(liveAllocations(0)[0].ptr, reinterpret_cast<std::uintptr_t>(second));
  ASSERT_EQ(hipFree(second), hipSuccess);
}

// device_memory: an allocation that does not fit in what the device has left fails with the
// runtime's own out-of-memory error, recorded, and leaves the device as it was; freeing makes room.
TEST_F(MockHipControl, AnAllocationPastTheDevicesMemoryIsOutOfMemory) {
  setDeviceMemory(1, 16384);
  EXPECT_EQ(deviceMemory(1), 16384u);
  EXPECT_EQ(deviceMemory(0), kDefaultDeviceMemory);
  void* first = allocOn(1, 12288);
  std::size_t free = 0;
  std::size_t total = 0;
  ASSERT_EQ(hipMemGetInfo(&free, &total), hipSuccess);
  EXPECT_EQ(total, 16384u);
  EXPECT_EQ(free, 4096u);
  void* second = nullptr;
  EXPECT_EQ(hipExtMallocWithFlags(&second, 8192, hipDeviceMallocUncached), hipErrorOutOfMemory);
  EXPECT_EQ(second, nullptr);
  EXPECT_NE(lastErrorDetail().find("8192 bytes do not fit on device 1"), std::string::npos)
      << lastErrorDetail();
  ASSERT_EQ(ledger(1).size(), 2u);
  EXPECT_EQ(ledger(1).back().error, hipErrorOutOfMemory);
  EXPECT_EQ(liveAllocations(1).size(), 1u);
  EXPECT_EQ(hipMalloc(&second, 4096), hipSuccess);  // exactly what is left fits
  EXPECT_EQ(hipFree(second), hipSuccess);
  EXPECT_EQ(hipFree(first), hipSuccess);
  EXPECT_EQ(hipMalloc(&second, 16384), hipSuccess);
  EXPECT_EQ(hipFree(second), hipSuccess);
  EXPECT_EQ(hipMalloc(&second, 16385), hipErrorOutOfMemory);
  // Another device keeps its own memory; a reset gives every device the default back.
  void* elsewhere = allocOn(0, 65536);
  EXPECT_EQ(hipFree(elsewhere), hipSuccess);
  resetAll();
  EXPECT_EQ(deviceMemory(1), kDefaultDeviceMemory);
}

// Devices on one GPU draw on its memory together, as hipMemGetInfo counts it.
TEST_F(MockHipControl, DevicesSharingAGpuShareItsMemory) {
  placeOnGpu(2, 1);
  placeOnGpu(3, 1);
  setDeviceMemory(2, 8192);
  setDeviceMemory(3, 8192);
  void* a = allocOn(2, 4096);
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* b = nullptr;
  EXPECT_EQ(hipMalloc(&b, 8192), hipErrorOutOfMemory);
  EXPECT_EQ(hipMalloc(&b, 4096), hipSuccess);
  EXPECT_EQ(hipFree(b), hipSuccess);
  EXPECT_EQ(hipFree(a), hipSuccess);
}

}  // namespace
}  // namespace peerconf::mock_hip
