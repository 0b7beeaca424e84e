// What the mocked HIP runtime's test files (tests/src/mock_hip/) share: a fixture that resets the
// runtime around every test, and helpers that look at this process's segments in /dev/shm.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"

namespace peerconf::mock_hip::test_support {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// "peerconf.<job>.<pid>." without the slash, the generation and the nonce.
inline std::string jobPrefix() {
  const std::string name = segmentName(job(), static_cast<int>(::getpid()), 0, 0);
  return name.substr(1, name.rfind(".0.") + 1 - 1);
}

// This process's segments in /dev/shm.
inline std::vector<std::string> ownSegments() {
  std::vector<std::string> out;
  const std::string prefix = jobPrefix();
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) out.push_back(name);
  }
  return out;
}

inline bool segmentExists(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

inline std::uint64_t generationOf(void* ptr, int device) {
  for (const LedgerEntry& e : liveAllocations(device)) {
    if (e.ptr == reinterpret_cast<std::uintptr_t>(ptr)) return e.generation;
  }
  ADD_FAILURE() << "no live allocation at " << ptr;
  return 0;
}

// The segment's name, from the allocation's own handle (it carries the nonce).
inline std::string nameOf(void* ptr, int device) {
  hipIpcMemHandle_t handle;
  EXPECT_EQ(hipIpcGetMemHandle(&handle, ptr), hipSuccess);
  const auto info = decodeHandle(handle);
  EXPECT_TRUE(info.has_value());
  EXPECT_EQ(info->generation, generationOf(ptr, device));
  return info ? segmentName(*info) : std::string();
}

// Resets the runtime (ledgers, hooks, allocations) before and after each test, on device 0.
class MockHipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    resetAll();
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
  }
  void TearDown() override {
    resetAll();
    (void)hipSetDevice(0);
    (void)hipGetLastError();
  }

  // Allocates `size` bytes on `device` and exports them.
  static void* allocOn(int device, std::size_t size, hipIpcMemHandle_t* handle = nullptr) {
    EXPECT_EQ(hipSetDevice(device), hipSuccess);
    void* ptr = nullptr;
    EXPECT_EQ(hipExtMallocWithFlags(&ptr, size, hipDeviceMallocUncached), hipSuccess);
    if (handle != nullptr) {
      EXPECT_EQ(hipIpcGetMemHandle(handle, ptr), hipSuccess);
    }
    return ptr;
  }
};

}  // namespace peerconf::mock_hip::test_support
