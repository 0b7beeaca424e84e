// The mocked HIP runtime's shared state (runtime_state.cc): the device count, pointer texts, how
// the runtime describes a pointer a call did not want, which ranges are device memory, and what
// a forked child inherits of its parent's tables.
#include "mock_hip/runtime_state.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip_test_support.h"

namespace peerconf::mock_hip {
namespace {

using test_support::contains;
using MockHipState = test_support::MockHipTest;

std::uint64_t address(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

TEST(MockHipStateText, HexAndPointerText) {
  EXPECT_EQ(detail::hex(0), "0");
  EXPECT_EQ(detail::hex(0xdeadbeefull), "deadbeef");
  EXPECT_EQ(detail::hex(~0ull), "ffffffffffffffff");
  EXPECT_EQ(detail::pointerText(0x1000), "0x1000");
}

TEST_F(MockHipState, TheDeviceCountIsTheEnvironmentsOr64AndBoundsTheLedgers) {
  const char* env = std::getenv("PEERCONF_MOCK_DEVICES");
  const int count = detail::deviceCount();
  EXPECT_EQ(count, env != nullptr ? std::atoi(env) : 64);
  int reported = 0;
  ASSERT_EQ(hipGetDeviceCount(&reported), hipSuccess);
  EXPECT_EQ(reported, count);
  EXPECT_EQ(detail::Runtime::get().ledgers.size(), static_cast<std::size_t>(count));
}

TEST_F(MockHipState, DescribeSaysWhatAPointerIsAndIsDeviceRangeBoundsIt) {
  hipIpcMemHandle_t handle;
  auto* buffer = static_cast<char*>(allocOn(2, 4096, &handle));
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  int onStack = 0;
  {
    detail::Runtime& rt = detail::Runtime::get();
    std::lock_guard lock(rt.mu);
    const std::string base = detail::pointerText(address(buffer));
    EXPECT_EQ(rt.describe(address(buffer)),
              base + " is an allocation of device 2, not an IPC mapping");
    EXPECT_EQ(rt.describe(address(buffer + 16)), detail::pointerText(address(buffer + 16)) +
                                                     " is 16 bytes into the allocation at " + base +
                                                     " of device 2, not its base");
    EXPECT_TRUE(contains(rt.describe(address(mapped)), "is an IPC mapping (of device 2's"));
    EXPECT_TRUE(contains(rt.describe(address(&onStack)), "not a live allocation or mapping"));

    EXPECT_TRUE(rt.isDeviceRange(address(buffer), 4096));
    EXPECT_TRUE(rt.isDeviceRange(address(buffer + 4000), 96));
    EXPECT_FALSE(rt.isDeviceRange(address(buffer + 4000), 97)) << "one byte past the end";
    EXPECT_TRUE(rt.isDeviceRange(address(mapped), 4096));
    EXPECT_FALSE(rt.isDeviceRange(address(&onStack), sizeof onStack));
  }
  EXPECT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  ASSERT_EQ(hipSetDevice(2), hipSuccess);
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

// A forked child is a new process of the same job: the parent's memory stays mapped in it, but
// is not the child's to free or report, and the child's own allocations carry its own pid.
TEST_F(MockHipState, AForkedChildStartsWithEmptyTablesAndItsOwnPid) {
  auto* buffer = static_cast<char*>(allocOn(0, 4096));
  buffer[0] = 'p';
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!liveAllocations(0).empty() || !ledger(0).empty()) ::_exit(10);
    if (buffer[0] != 'p') ::_exit(11);
    if (hipFree(buffer) != hipErrorInvalidValue) ::_exit(12);
    if (detail::Runtime::get().pid() != static_cast<int>(::getpid())) ::_exit(13);
    void* own = nullptr;
    if (hipMalloc(&own, 4096) != hipSuccess) ::_exit(14);
    hipIpcMemHandle_t handle;
    if (hipIpcGetMemHandle(&handle, own) != hipSuccess) ::_exit(15);
    const auto info = decodeHandle(handle);
    if (!info || info->ownerPid != static_cast<int>(::getpid())) ::_exit(16);
    if (hipFree(own) != hipSuccess) ::_exit(17);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: inherited tables, 11: memory unmapped, 12: freed the parent's allocation, 13: pid, "
         "14-17: own allocation";
  EXPECT_EQ(detail::Runtime::get().pid(), static_cast<int>(::getpid()));
  EXPECT_EQ(liveAllocations(0).size(), 1u) << "the child's release took the parent's";
  EXPECT_EQ(hipFree(buffer), hipSuccess);
}

}  // namespace
}  // namespace peerconf::mock_hip
