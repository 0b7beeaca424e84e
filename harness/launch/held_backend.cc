// HeldBackend (held_backend.h).
#include "launch/held_backend.h"

#include <algorithm>

namespace peerconf::harness::launch {

DevicePtr HeldBackend::allocUncached(std::size_t nbytes) {
  const DevicePtr ptr = inner_.allocUncached(nbytes);
  held_.push_back({Held::Kind::kBuffer, ptr, kNoPeer});
  return ptr;
}

DevicePtr HeldBackend::allocDevice(std::size_t nbytes) {
  const DevicePtr ptr = inner_.allocDevice(nbytes);
  held_.push_back({Held::Kind::kBuffer, ptr, kNoPeer});
  return ptr;
}

void HeldBackend::freeDeviceMem(DevicePtr ptr) {
  inner_.freeDeviceMem(ptr);  // a failed free leaves the buffer held
  forget(Held::Kind::kBuffer, ptr);
}

DevicePtr HeldBackend::openMemHandle(const IpcHandle& handle, int peer) {
  const DevicePtr ptr = inner_.openMemHandle(handle, peer);
  held_.push_back({Held::Kind::kMapping, ptr, peer});
  return ptr;
}

void HeldBackend::closeMemHandle(DevicePtr ptr, int peer) {
  inner_.closeMemHandle(ptr, peer);
  forget(Held::Kind::kMapping, ptr);
}

void HeldBackend::forget(Held::Kind kind, DevicePtr ptr) {
  const auto it = std::find_if(held_.begin(), held_.end(),
                               [&](const Held& h) { return h.kind == kind && h.ptr == ptr; });
  if (it != held_.end()) held_.erase(it);
}

std::vector<HeldBackend::Held> HeldBackend::held() const {
  std::vector<Held> out;
  for (const Held& h : held_) {
    if (h.kind == Held::Kind::kMapping) out.push_back(h);
  }
  for (const Held& h : held_) {
    if (h.kind == Held::Kind::kBuffer) out.push_back(h);
  }
  return out;
}

}  // namespace peerconf::harness::launch
