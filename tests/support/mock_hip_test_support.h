// What the mocked HIP runtime's test files (tests/src/mock_hip/) share: a fixture that resets the
// runtime around every test, and helpers that look at the segments (memfds) this process holds.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
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

// The names (without the leading '/') of the memfd segments this process holds a descriptor or a
// mapping of, each once: what /proc/self/fd and /proc/self/maps show as "/memfd:NAME (deleted)".
inline std::vector<std::string> heldSegments() {
  constexpr std::string_view kPrefix = "/memfd:";
  std::vector<std::string> out;
  auto add = [&](std::string target) {
    const auto at = target.find(kPrefix);
    if (at == std::string::npos) return;
    target.erase(0, at + kPrefix.size());
    if (const auto deleted = target.rfind(" (deleted)"); deleted != std::string::npos) {
      target.erase(deleted);
    }
    if (target.starts_with("peerconf.") && std::find(out.begin(), out.end(), target) == out.end()) {
      out.push_back(target);
    }
  };
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code linkError;
    add(std::filesystem::read_symlink(entry.path(), linkError).string());
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) add(line);
  return out;
}

// This process's segments (the ones it allocated: its job and pid in the name) that it holds.
inline std::vector<std::string> ownSegments() {
  std::vector<std::string> out;
  const std::string prefix = jobPrefix();
  for (const std::string& name : heldSegments()) {
    if (name.starts_with(prefix)) out.push_back(name);
  }
  return out;
}

// Whether this process holds the segment `name` (segmentName's, with its '/').
inline bool segmentExists(const std::string& name) {
  const auto held = heldSegments();
  return std::find(held.begin(), held.end(), name.substr(1)) != held.end();
}

// Whether /dev/shm has a file named `name` (segmentName's, with its '/'): segments never do; tests
// plant some to show they are never taken for one.
inline bool devShmHas(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

// The /dev/shm/peerconf.* files of this process's job (none, whatever ran: segments are memfds).
inline std::vector<std::string> devShmFilesOfThisJob() {
  std::vector<std::string> out;
  const std::string name = segmentName(job(), 1, 0, 0);
  const std::string prefix = name.substr(1, name.find('.', 10));  // "peerconf.<job>."
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string file = entry.path().filename().string();
    if (file.starts_with(prefix)) out.push_back(file);
  }
  return out;
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
