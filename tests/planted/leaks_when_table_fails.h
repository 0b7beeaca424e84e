// LeaksWhenTableFails: a copy of the production PeerBuffer (src/peer_buffer.h) with ONE planted
// defect — when building the device address table fails (its allocation or the copy into it), it
// forgets its local buffer, which is then never freed. A negative control for the alloc-table and
// copy-table fault sites: the harness must flag it (tests/checkers/planted_cores_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "group.h"
#include "ipc_backend.h"
#include "model/core_under_test.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class LeaksWhenTableFails {
 public:
  // Collective over `group` (nullptr, or a group of one, for a single rank): allocates the local
  // buffer, exchanges IPC handles, opens every peer in rank order (stopping at the first
  // failure), builds the device address table, then agrees with every rank that every rank
  // mapped every peer and built its table. If any rank failed, every rank releases what it holds
  // and throws HandshakeError ("... on this TP rank" with the backend error as cause where the
  // failure was, "... on another TP rank" elsewhere). Errors before the exchange (alloc,
  // get-handle) and group errors are rethrown after releasing. `backend` and `group` must
  // outlive the buffer.
  LeaksWhenTableFails(std::size_t nbytes, IpcBackend& backend, Group* group);
  LeaksWhenTableFails(const LeaksWhenTableFails&) = delete;
  LeaksWhenTableFails& operator=(const LeaksWhenTableFails&) = delete;
  // Releases what close() was not called for; errors are swallowed here (call close() to see them).
  ~LeaksWhenTableFails();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return npes_; }
  // The whole local buffer; never zeroed by the core. Empty after close().
  DeviceBytes bytes() const noexcept { return bytes_; }
  // The device table of int64 addresses, indexed by rank (0 after close()).
  DevicePtr addressesDevice() const noexcept { return addressesDevice_; }
  // Host copy of that table: own slot = the local pointer, peers = opened mappings.
  const std::vector<std::int64_t>& addresses() const noexcept { return addresses_; }

  // Closes every peer mapping, frees the table and the local buffer; idempotent. A failing
  // release does not stop the others: every one is tried, then CloseError lists the failures.
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

// The name a scenario file or a report gives this core.
inline constexpr std::string_view kLeaksWhenTableFailsName = "leaks-when-table-fails";

// Constructs each rank's buffer as this core (for the harness's launchers).
harness::CoreFactory leaksWhenTableFailsCore();

}  // namespace peerconf::planted
