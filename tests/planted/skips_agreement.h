// SkipsAgreement: a copy of the production PeerBuffer (src/peer_buffer.h) with ONE planted defect —
// it never calls tpAgree: a rank raises only where its own open failed, every other rank returns a
// buffer. A negative control: the harness must flag it (tests/checkers/planted_cores_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class SkipsAgreement {
 public:
  // Collective over `group` (nullptr, or a group of one, for a single rank): allocates the local
  // buffer, exchanges IPC handles, opens every peer in rank order (stopping at the first
  // failure), then agrees with every rank that every rank mapped every peer. If any rank failed,
  // every rank releases what it holds and throws HandshakeError ("... on this TP rank" with the
  // backend error as cause where the failure was, "... on another TP rank" elsewhere). Errors
  // before the exchange (alloc, get-handle) and group errors are rethrown after releasing.
  // `backend` and `group` must outlive the buffer.
  SkipsAgreement(std::size_t nbytes, IpcBackend& backend, Group* group);
  SkipsAgreement(const PeerBuffer&) = delete;
  SkipsAgreement& operator=(const SkipsAgreement&) = delete;
  // Releases what close() was not called for; errors are swallowed here (call close() to see them).
  ~SkipsAgreement();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return npes_; }
  // The whole local buffer; never zeroed by the core. Empty after close().
  DeviceBytes bytes() const noexcept { return bytes_; }
  // The device table of int64 addresses, indexed by rank (0 after close()).
  DevicePtr addressesDevice() const noexcept { return addressesDevice_; }
  // Host copy of that table: own slot = the local pointer, peers = opened mappings.
  const std::vector<std::int64_t>& addresses() const noexcept { return addresses_; }

  // Closes every peer mapping and frees the local buffer; idempotent. A failing release does not
  // stop the others: every one is tried, then CloseError lists the failures. Only call once no
  // kernel of any rank can still touch the buffer.
  void close();

 private:
  // Releases everything held, each exactly once, and returns the failures as text.
  std::vector<std::string> release() noexcept;

  IpcBackend& backend_;
  int rank_ = 0;
  int npes_ = 1;
  DevicePtr local_ = 0;
  DeviceBytes bytes_;
  DevicePtr addressesDevice_ = 0;
  std::vector<std::int64_t> addresses_;
  std::vector<std::pair<int, DevicePtr>> opened_;  // (peer, mapping) in open order
};

}  // namespace peerconf::planted
