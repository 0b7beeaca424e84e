// CrashesOnOpen: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — on the
// last rank of a group of two or more, its first open reads the peer's handle through a wild
// index, far past the gathered handles, and the process dies of SIGSEGV. A negative control for
// process isolation (harness/isolation.h): the harness must report a failing scenario that names
// the signal and every rank's last events, and go on with the rest of the suite. With one rank
// (no open) it behaves exactly as PeerBuffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class CrashesOnOpen {
 public:
  CrashesOnOpen(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label = {});
  CrashesOnOpen(const CrashesOnOpen&) = delete;
  CrashesOnOpen& operator=(const CrashesOnOpen&) = delete;
  ~CrashesOnOpen();

  int rank() const noexcept { return buffer_->rank(); }
  int size() const noexcept { return buffer_->size(); }
  DeviceBytes bytes() const noexcept { return buffer_->bytes(); }
  DevicePtr addressesDevice() const noexcept { return buffer_->addressesDevice(); }
  const std::vector<std::int64_t>& addresses() const noexcept { return buffer_->addresses(); }
  void close() { buffer_->close(); }

 private:
  class Backend;
  std::unique_ptr<Backend> backend_;  // the real one, with the planted open
  std::unique_ptr<PeerBuffer> buffer_;
};

}  // namespace peerconf::planted
