// Planted runtimes: a backend decorator whose open is the planted defect, marked "PLANTED DEFECT".
#include "planted/planted_runtime.h"

#include <cstdint>
#include <memory>
#include <set>

#include "errors.h"
#include "faults/faulty_backend.h"

namespace peerconf::planted {

namespace {

// hipErrorInvalidHandle, as the mocked runtime and CUDA 13 name a handle of a reaped owner.
constexpr int kInvalidHandle = 400;

class PlantedRuntime : public IpcBackend {
 public:
  enum class Defect { kOpensRefused, kRefusesReused };

  PlantedRuntime(IpcBackend& real, Defect defect) : real_(real), defect_(defect) {}

  int rank() const override { return real_.rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override {
    const DevicePtr ptr = real_.allocUncached(nbytes);
    if (firstBytes_ == 0) firstBytes_ = nbytes;  // the core's buffer: it allocates first
    return ptr;
  }
  DevicePtr allocDevice(std::size_t nbytes) override { return real_.allocDevice(nbytes); }
  void freeDeviceMem(DevicePtr ptr) override { real_.freeDeviceMem(ptr); }
  IpcHandle getMemHandle(DevicePtr ptr) override { return real_.getMemHandle(ptr); }
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override {
    return defect_ == Defect::kOpensRefused ? openRefused(handle, peer)
                                            : refuseReused(handle, peer);
  }
  void closeMemHandle(DevicePtr ptr, int peer) override {
    if (blocks_.erase(ptr) != 0) {
      real_.freeDeviceMem(ptr);  // a mapping it made up: the block it gave
      return;
    }
    real_.closeMemHandle(ptr, peer);
  }
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override {
    real_.copyToDevice(dst, src, nbytes);
  }
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override {
    real_.copyToHost(dst, src, nbytes);
  }

 private:
  DevicePtr openRefused(const IpcHandle& handle, int peer) {
    try {
      return real_.openMemHandle(handle, peer);
    } catch (const BackendError&) {
      // PLANTED DEFECT: a handle the runtime refuses is opened anyway, onto a block of its own.
      const DevicePtr block = real_.allocUncached(firstBytes_ != 0 ? firstBytes_ : 4096);
      blocks_.insert(block);
      return block;
    }
  }

  DevicePtr refuseReused(const IpcHandle& handle, int peer) {
    const DevicePtr mapped = real_.openMemHandle(handle, peer);
    std::uint64_t first = 0;
    real_.copyToHost(&first, mapped, sizeof first);
    if (first == faults::kSignatureMark) return mapped;
    // PLANTED DEFECT: a handle whose place holds no exported buffer is refused, where the mocked
    // runtime (and CUDA) opens it onto whatever allocation holds that place now.
    real_.closeMemHandle(mapped, peer);
    throw BackendError(Op::kOpenHandle, real_.rank(), peer, kInvalidHandle, "hipErrorInvalidHandle",
                       "hipIpcOpenMemHandle: the allocation the handle names was freed (a planted "
                       "runtime)");
  }

  IpcBackend& real_;
  Defect defect_;
  std::size_t firstBytes_ = 0;
  std::set<DevicePtr> blocks_;  // the blocks it handed out as mappings
};

}  // namespace

harness::model::RuntimeDecorator opensRefusedHandlesRuntime() {
  return [](IpcBackend& real) -> std::unique_ptr<IpcBackend> {
    return std::make_unique<PlantedRuntime>(real, PlantedRuntime::Defect::kOpensRefused);
  };
}

harness::model::RuntimeDecorator refusesReusedHandlesRuntime() {
  return [](IpcBackend& real) -> std::unique_ptr<IpcBackend> {
    return std::make_unique<PlantedRuntime>(real, PlantedRuntime::Defect::kRefusesReused);
  };
}

}  // namespace peerconf::planted
