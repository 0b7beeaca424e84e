// Recording decorators: every call a rank makes into either seam goes into its EventLog as a
// call, then a return or a throw. They sit between the core and the fault decorators.
#pragma once

#include "group.h"
#include "ipc_backend.h"
#include "model/event_log.h"

namespace peerconf::harness::launch {

class RecordingBackend : public IpcBackend {
 public:
  RecordingBackend(IpcBackend& inner, model::EventLog& log) : inner_(inner), log_(log) {}

  int rank() const override { return inner_.rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override;
  DevicePtr allocDevice(std::size_t nbytes) override;
  void freeDeviceMem(DevicePtr ptr) override;
  IpcHandle getMemHandle(DevicePtr ptr) override;
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override;
  void closeMemHandle(DevicePtr ptr, int peer) override;
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override;
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override;

 private:
  IpcBackend& inner_;
  model::EventLog& log_;
};

// allReduceMin is recorded as call detail "in=<v>" and return detail "out=<v>" (checker C5).
class RecordingGroup : public Group {
 public:
  RecordingGroup(Group& inner, model::EventLog& log) : inner_(inner), log_(log) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int allReduceMin(int value) override;
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override;

 private:
  Group& inner_;
  model::EventLog& log_;
};

}  // namespace peerconf::harness::launch
