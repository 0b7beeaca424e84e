// HeldBackend: what a rank's process holds through the real backend, as the OS would count it.
#pragma once

#include <vector>

#include "faults/faulty_backend.h"
#include "ipc_backend.h"

namespace peerconf::harness::launch {

// The bottom of a rank's decorator stack, directly over the real backend: it counts every buffer
// and mapping the runtime granted and forgets each one the runtime released. A rank that a fault
// stops (death, hang, exit) in a thread or in one shared mpirun goes on to the next scenario in
// the same process, where a real process's end would have released everything: what it still
// holds (its buffer, the mappings the core never got to close, a mapping made inside the open it
// stopped in) the launcher releases through this backend, as that end would. Without it, a later
// scenario on a GPU met the stopped rank's mapping (the second buffer's open failed).
class HeldBackend : public IpcBackend {
 public:
  using Held = faults::FaultyBackend::Leftover;

  explicit HeldBackend(IpcBackend& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override;
  DevicePtr allocDevice(std::size_t nbytes) override;
  void freeDeviceMem(DevicePtr ptr) override;
  IpcHandle getMemHandle(DevicePtr ptr) override { return inner_.getMemHandle(ptr); }
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override;
  void closeMemHandle(DevicePtr ptr, int peer) override;
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override {
    inner_.copyToDevice(dst, src, nbytes);
  }
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override {
    inner_.copyToHost(dst, src, nbytes);
  }

  // Still held: mappings first (in the order opened), then buffers.
  std::vector<Held> held() const;

 private:
  void forget(Held::Kind kind, DevicePtr ptr);

  IpcBackend& inner_;
  std::vector<Held> held_;
};

}  // namespace peerconf::harness::launch
