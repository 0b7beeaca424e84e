// mockHipHooks(): RuntimeHooks over the mocked HIP runtime's per-device fault hooks.
#include <utility>

#include "faults/runtime_hooks.h"
#include "mock_hip/control.h"

namespace peerconf::faults {

namespace {

RuntimeCall fromMock(mock_hip::Call call) {
  switch (call) {
    case mock_hip::Call::kSetDevice:
      return RuntimeCall::kSetDevice;
    case mock_hip::Call::kMalloc:
      return RuntimeCall::kMalloc;
    case mock_hip::Call::kFree:
      return RuntimeCall::kFree;
    case mock_hip::Call::kGetHandle:
      return RuntimeCall::kGetHandle;
    case mock_hip::Call::kOpen:
      return RuntimeCall::kOpen;
    case mock_hip::Call::kClose:
      return RuntimeCall::kClose;
    case mock_hip::Call::kMemcpy:
      return RuntimeCall::kMemcpy;
  }
  return RuntimeCall::kSetDevice;
}

class MockHipHooks : public RuntimeHooks {
 public:
  void install(int device, RuntimeHook hook) override {
    mock_hip::setFaultHook(device,
                           [hook = std::move(hook)](mock_hip::Call call, int dev, int peerDevice) {
                             return hook(fromMock(call), dev, peerDevice);
                           });
  }
  // An empty hook removes only this device's; clearFaultHooks() would remove every rank's.
  void remove(int device) override { mock_hip::setFaultHook(device, nullptr); }
};

}  // namespace

RuntimeHooks& mockHipHooks() {
  static MockHipHooks hooks;
  return hooks;
}

}  // namespace peerconf::faults
