// FaultyBackend: the IpcBackend decorator that plants a rank's alloc, get-handle, open, close,
// free, alloc-table and copy-table failures, applies the open point, and makes the stale handle
// for handle-stale.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>

#include "errors.h"
#include "faults/fault_plan.h"
#include "faults/rank_control.h"
#include "faults/runtime_hooks.h"
#include "ipc_backend.h"

namespace peerconf::faults {

// Which sites fail is the same in both modes; how they fail differs:
// - kSeam: the decorator throws BackendError(op, rank, peer, code, hipErrorName(code)) itself,
//   without calling the inner backend (real GPUs, where the runtime has no hooks).
// - kRuntime: the decorator installs a hook for this rank's device (device == rank under the
//   mocked HIP runtime) while it lives, and the real backend code path meets the runtime's error.
//   The hook fires only inside the decorator's own call of the matching kind (so allocDevice of
//   the address table never sees an alloc fault, the table's free never a free fault, and the
//   stale scratch buffer nothing), at most once per call; open/close faults naming a peer fire
//   only when the runtime reports that peer as the mapped buffer's owner device.
//
// Sites: alloc = allocUncached only; free = freeDeviceMem of a pointer allocUncached returned;
// get-handle, open(rank -> peer), close(rank -> peer); alloc-table = allocDevice and copy-table =
// copyToDevice (the core's only uses of them are the device address table; copyToHost is never
// faulted). A failed alloc-table allocates nothing and a failed copy-table leaves the table
// allocated, in both modes. Point kOpen is applied at the first
// openMemHandle of each handshake (a handshake starts at allocUncached). Point kClose is NOT
// applied here: the core releases inside a noexcept path that swallows exceptions, so a thread
// launcher's die/hang could not leave it; the launcher calls RankFaults::atPoint(kClose) itself
// right before PeerBuffer::close().
//
// handle-stale: when the scenario has any handle-stale fault (on any rank), getMemHandle first
// allocates a scratch buffer of the same size through the inner backend, takes its handle and
// frees it, then hands that now-stale handle to this rank's FaultyGroup through RankFaults. The
// scratch is freed before the exchange, so nothing stays allocated, and the handle is a real one
// the runtime issued, for memory that no longer exists. What opening it does is the runtime's
// answer, and it differs (measured on 2x H200, CUDA 13): the mocked runtime refuses it
// (hipErrorInvalidValue, "stale handle"); CUDA refuses it only for buffers of 2 MiB and more
// (800 cudaErrorNotPermitted at 2-4 MiB, 1 cudaErrorInvalidValue at 64 MiB). Below 2 MiB CUDA
// sub-allocates from a live 2 MiB chunk, so the stale handle OPENS and maps whatever now occupies
// that address (another buffer, the address table): the handshake succeeds with a wrong address.
class FaultyBackend : public IpcBackend {
 public:
  enum class Mode { kSeam, kRuntime };

  // `inner`, `faults` and `control` must outlive the decorator. kRuntime installs its hook in the
  // mocked HIP runtime (mockHipHooks()).
  FaultyBackend(IpcBackend& inner, RankFaults& faults, RankControl& control, Mode mode);
  // kRuntime over another hook registry (tests, or another runtime with hooks).
  FaultyBackend(IpcBackend& inner, RankFaults& faults, RankControl& control, RuntimeHooks& hooks);
  // Removes the hook (kRuntime).
  ~FaultyBackend() override;

  Mode mode() const noexcept { return mode_; }

  int rank() const override { return inner_.rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override;
  DevicePtr allocDevice(std::size_t nbytes) override;
  void freeDeviceMem(DevicePtr ptr) override;
  IpcHandle getMemHandle(DevicePtr ptr) override;
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override;
  void closeMemHandle(DevicePtr ptr, int peer) override;
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override;
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override {
    inner_.copyToHost(dst, src, nbytes);
  }

 private:
  class Arm;
  int hook(RuntimeCall call, int peerDevice) noexcept;
  void makeStaleHandle(DevicePtr ptr);
  [[noreturn]] void fail(Op op, int peer, int code, const char* call) const;

  IpcBackend& inner_;
  RankFaults& faults_;
  RankControl& control_;
  Mode mode_;
  RuntimeHooks* hooks_ = nullptr;
  int device_;
  // The runtime call the decorator is making now and its hook may fail (kRuntime), or -1.
  std::atomic<int> armed_{-1};
  // The site the armed call stands for: one runtime call serves two sites (hipMalloc: alloc and
  // alloc-table; hipMemcpy: copy-table and the unfaulted copies).
  std::atomic<harness::FaultSite> armedSite_{harness::FaultSite::kAlloc};
  std::map<DevicePtr, std::size_t> local_;  // allocUncached pointers not yet freed, and sizes
  bool openPointDue_ = true;
};

}  // namespace peerconf::faults
