// The GPU backend: IpcBackend written once against HIP's API names. hip_backend.cc is compiled
// once per runtime (mocked HIP, ROCm, CUDA through hip_to_cuda.h), each build with PEERCONF_HIP_NS
// naming its own namespace so the variants link side by side. Code outside src/hip creates them
// through hip_variants.h (or the factory) and never includes this header.
#pragma once

#include <cstddef>

#include "ipc_backend.h"

namespace peerconf::PEERCONF_HIP_NS {

// Serves one rank on one device. Every method first makes `device` current on the calling thread
// (a thread may serve one rank after another), then makes the runtime call; any failure throws
// BackendError carrying the op, rank, peer, runtime code and text, call and file:line.
class HipBackend final : public IpcBackend {
 public:
  // Makes `device` current (hipSetDevice); throws BackendError with op set-device.
  HipBackend(int device, int rank);

  int rank() const override { return rank_; }
  int device() const noexcept { return device_; }

  DevicePtr allocUncached(std::size_t nbytes) override;
  DevicePtr allocDevice(std::size_t nbytes) override;
  void freeDeviceMem(DevicePtr ptr) override;
  IpcHandle getMemHandle(DevicePtr ptr) override;
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override;
  void closeMemHandle(DevicePtr ptr, int peer) override;
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override;
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override;

 private:
  // hipSetDevice(device_); a failure carries `peer` so it is attributed to the call it preceded.
  void selectDevice(int peer) const;

  int device_;
  int rank_;
};

}  // namespace peerconf::PEERCONF_HIP_NS
