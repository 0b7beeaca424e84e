// RankSettle: the harness's own release of injected-failure leftovers and the device check.
#include "launch/rank_settle.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include "dataplane/device.h"
#include "mock_hip/control.h"
#include "model/text.h"

namespace peerconf::harness::launch {

using model::hexPtr;
using model::RankResult;

namespace {

// The first use of a GPU runtime in a process can keep memory for good (allocation pools, IPC
// export bookkeeping); do it once per device before the first baseline.
void warmUp(int device, IpcBackend& plain) {
  static std::mutex mutex;
  static std::set<int> warmed;
  std::lock_guard lock(mutex);
  if (!warmed.insert(device).second) return;
  try {
    const DevicePtr buffer = plain.allocUncached(4096);
    try {
      (void)plain.getMemHandle(buffer);
    } catch (const std::exception&) {
      // Only warming up: the scenario meets the same call again and reports it.
    }
    plain.freeDeviceMem(buffer);
    plain.freeDeviceMem(plain.allocDevice(64));
  } catch (const std::exception&) {
    // Likewise.
  }
  // The data plane's kernels and the device arrays its runs reuse (dataplane/device.h).
  dataplane::warmUpDevice();
}

// Bytes of free memory a GPU rank may lose over a run without a finding: 0 unless
// PEERCONF_GPU_MEMINFO_SLACK says otherwise (a diagnostic knob, never set by ci/).
std::size_t slack() {
  const char* text = std::getenv("PEERCONF_GPU_MEMINFO_SLACK");
  if (text == nullptr || *text == '\0') return 0;
  return static_cast<std::size_t>(std::strtoull(text, nullptr, 10));
}

}  // namespace

bool RankSettle::printMemory() { return std::getenv("PEERCONF_GPU_MEMINFO") != nullptr; }

RankSettle::RankSettle(Runtime runtime, int device, IpcBackend& plain, std::string scenario)
    : runtime_(runtime), device_(device), scenario_(std::move(scenario)) {
  if (runtime_ == Runtime::kMock) {
    for (const auto& e : mock_hip::liveAllocations(device_))
      before_.insert({0, e.ptr, e.generation});
    for (const auto& e : mock_hip::liveMappings(device_)) before_.insert({1, e.ptr, e.generation});
  } else {
    warmUp(device_, plain);
  }
  memoryBefore_ = deviceMemory(runtime_, device_);
}

void RankSettle::release(IpcBackend& plain,
                         const std::vector<faults::FaultyBackend::Leftover>& leftovers,
                         RankResult& result, const std::string& why) const {
  for (std::string& line : faults::releaseLeftovers(plain, leftovers, why)) {
    result.harnessReleases.push_back(std::move(line));
  }
}

void RankSettle::checkHeld(RankResult& result) const {
  if (runtime_ == Runtime::kMock) {
    for (const auto& e : mock_hip::liveAllocations(device_)) {
      if (before_.count({0, e.ptr, e.generation}) != 0) continue;
      result.deviceLeftovers.push_back("the mocked runtime still holds buffer " + hexPtr(e.ptr) +
                                       " (" + std::to_string(e.size) + " bytes, gen " +
                                       std::to_string(e.generation) + ") of device " +
                                       std::to_string(device_) + ", allocated during the run");
    }
    for (const auto& e : mock_hip::liveMappings(device_)) {
      if (before_.count({1, e.ptr, e.generation}) != 0) continue;
      result.deviceLeftovers.push_back(
          "the mocked runtime still holds device " + std::to_string(device_) +
          "'s mapping of device " + std::to_string(e.ownerDevice) + "'s buffer (gen " +
          std::to_string(e.generation) + ") at " + hexPtr(e.ptr) + ", opened during the run");
    }
  }
}

void RankSettle::check(RankResult& result, bool judgeMemory) const {
  checkHeld(result);
  // The free-memory comparison runs under both runtimes (the mock counts each device's
  // allocations), so the mock tests the GPU runner's path.
  if (!memoryBefore_) {
    result.harnessReleases.push_back(
        "device memory not compared: hipMemGetInfo failed before the run");
    return;
  }
  if (!judgeMemory) {
    result.harnessReleases.push_back(
        "device memory not compared: a peer was stopped for real and its mappings go on the "
        "driver's time");
    return;
  }
  const auto after = deviceMemory(runtime_, device_);
  if (!after) {
    result.deviceLeftovers.push_back("hipMemGetInfo failed after the run: device memory unknown");
    return;
  }
  const std::size_t before = memoryBefore_->freeBytes;
  const std::size_t drop = before > after->freeBytes ? before - after->freeBytes : 0;
  if (printMemory()) {
    std::fprintf(stderr,
                 "peerconf: meminfo %s rank %d device %d: free %zu -> %zu bytes (drop %zu)\n",
                 scenario_.c_str(), result.rank, device_, before, after->freeBytes, drop);
  }
  if (drop > slack()) {
    result.deviceLeftovers.push_back(
        "device " + std::to_string(device_) + "'s free memory (hipMemGetInfo) fell by " +
        std::to_string(drop) + " bytes over the run: " + std::to_string(before) +
        " bytes free before construct, " + std::to_string(after->freeBytes) +
        " after close(), the destructor and the harness's releases");
  }
}

}  // namespace peerconf::harness::launch
