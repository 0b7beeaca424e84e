// The one compatibility header of the GPU backend: brings HIP's API names into the variant's
// namespace (PEERCONF_HIP_NS) from the mocked HIP runtime, from CUDA through hip_to_cuda.h, or
// from ROCm. The only place in src/hip with #if.
#pragma once

#include <string>

#if defined(PEERCONF_HIP_MOCK)

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"

namespace peerconf::PEERCONF_HIP_NS {
using namespace peerconf::mock_hip;
inline constexpr const char* kRuntimeName = "mock-hip";
// Whether the runtime keeps a ledger of every alloc/open/close/free the harness can read (C3).
inline constexpr bool kKeepsLedger = true;
// Why the mock refused the last call on this thread (job mismatch, stale handle, ...).
inline std::string runtimeErrorDetail() { return peerconf::mock_hip::lastErrorDetail(); }
// Before forking processes that act as ranks of one job: they inherit the job id, and nothing of
// an earlier run of this process.
inline void beforeForkedRanks() {
  (void)peerconf::mock_hip::job();
  peerconf::mock_hip::resetAll();
}
}  // namespace peerconf::PEERCONF_HIP_NS

#elif defined(PEERCONF_HIP_CUDA)

#include "hip/hip_to_cuda.h"

namespace peerconf::PEERCONF_HIP_NS {
using namespace peerconf::hip::detail;  // the CUDA shims of hip_to_cuda.h
inline constexpr const char* kRuntimeName = "cuda";
inline constexpr bool kKeepsLedger = false;
inline std::string runtimeErrorDetail() { return {}; }
inline void beforeForkedRanks() {}
}  // namespace peerconf::PEERCONF_HIP_NS

#else  // ROCm

#include <hip/hip_runtime_api.h>

// ROCm 5.2 predates the uncached allocation flag; newer runtimes define it as 0x3.
#ifndef hipDeviceMallocUncached
#define hipDeviceMallocUncached 0x3
#endif

namespace peerconf::PEERCONF_HIP_NS {
inline constexpr const char* kRuntimeName = "rocm";
inline constexpr bool kKeepsLedger = false;
inline std::string runtimeErrorDetail() { return {}; }
inline void beforeForkedRanks() {}
}  // namespace peerconf::PEERCONF_HIP_NS

#endif
