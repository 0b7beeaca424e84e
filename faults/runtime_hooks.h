// RuntimeHooks: the runtime-level fault hooks FaultyBackend installs in Mode::kRuntime, as an
// interface so the decorator does not depend on one runtime's control API (and tests can fake it).
#pragma once

#include <functional>

namespace peerconf::faults {

// The runtime API calls a hook is consulted on (mirrors the mocked HIP runtime's Call).
enum class RuntimeCall { kSetDevice, kMalloc, kFree, kGetHandle, kOpen, kClose, kMemcpy };

// Consulted by the runtime when `device` makes `call`, before the call acts. `peerDevice` is the
// owner device of the mapped buffer for kOpen/kClose (unspecified otherwise). A non-zero result
// is the hipError_t the call returns instead of acting; 0 lets it proceed. Must not throw: it
// runs inside the runtime.
using RuntimeHook = std::function<int(RuntimeCall call, int device, int peerDevice)>;

// A registry of one hook per device.
class RuntimeHooks {
 public:
  RuntimeHooks() = default;
  RuntimeHooks(const RuntimeHooks&) = delete;
  RuntimeHooks& operator=(const RuntimeHooks&) = delete;
  virtual ~RuntimeHooks() = default;

  // Installs `hook` for `device`, replacing any hook it had.
  virtual void install(int device, RuntimeHook hook) = 0;
  // Removes `device`'s hook; the other devices' hooks stay.
  virtual void remove(int device) = 0;
};

// The mocked HIP runtime's hooks (src/mock_hip/control.h). In a build without the mocked runtime,
// calling it throws std::logic_error.
RuntimeHooks& mockHipHooks();

}  // namespace peerconf::faults
