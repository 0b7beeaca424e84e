// PeerBuffer: one uncached device buffer per TP rank, every rank holding every peer's address.
// A port of the seed's PeerBuffer (../shared/seed): its semantics are the contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "group.h"
#include "ipc_backend.h"

namespace peerconf {

class Handshake;

// A non-owning view of device bytes; close() frees the memory under it.
struct DeviceBytes {
  DevicePtr data = 0;
  std::size_t size = 0;
};

class PeerBuffer {
 public:
  // Collective over `group` (nullptr, or a group of one, for a single rank): allocates the local
  // buffer, exchanges IPC handles, opens every peer in rank order (stopping at the first
  // failure), then agrees with every rank that every rank mapped every peer. If any rank failed,
  // every rank releases what it holds and throws HandshakeError ("... on this TP rank" with the
  // backend error as cause where the failure was, "... on another TP rank" elsewhere).
  // An alloc or get-handle failure is sent in the exchange as a failure record in place of the
  // handle (exchange_entry.h): every rank raises right after the exchange, no agreement needed,
  // nobody waits for a deadline. Group errors are rethrown after releasing.
  // Whatever std::exception opening the peers or building the device table throws (not only
  // peerconf::Error: a bad_alloc, a backend's std::runtime_error) is this rank's failure: kept,
  // agreed on, then chained as the cause. A malformed exchange entry, or an exchange that returns
  // other than size() entries, is a GroupError kept the same way (this rank "this" with the
  // GroupError as cause, the others "another"), so no rank waits out its deadline at the
  // agreement. A single rank rethrows the failure itself after releasing.
  // `label` (optional: "" is none) says what the buffer is for, e.g. "kv-cache": at most
  // ExchangeEntry::kLabelSize printable ASCII characters (a longer one is this rank's failure,
  // sent as a failure record). Every rank's handle entry carries its size and label; a rank whose
  // size or label differs from rank 0's (another buffer constructed in this place, or the buffers
  // constructed in another order) makes every rank release its buffer and raise
  // BufferMismatchError together, naming the ranks, sizes and labels, before any peer is opened.
  // `backend` and `group` must outlive the buffer.
  PeerBuffer(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label = {});
  PeerBuffer(const PeerBuffer&) = delete;
  PeerBuffer& operator=(const PeerBuffer&) = delete;
  // Releases what close() was not called for; errors are swallowed here (call close() to see them).
  ~PeerBuffer();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return npes_; }
  // The label given at construction ("" = none).
  const std::string& label() const noexcept { return label_; }
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

 protected:
  // The same buffer, built by `handshake` (handshake.h, the constructor's phases): the public
  // constructor runs the production Handshake; the planted cores of tests/planted run one with
  // one phase replaced, so that they share everything else with this class.
  PeerBuffer(std::size_t nbytes, IpcBackend& backend, Group* group, Handshake&& handshake,
             std::string_view label = {});

 private:
  friend class Handshake;

  // Releases everything held, each exactly once, and returns the failures as text.
  std::vector<std::string> release() noexcept;

  IpcBackend& backend_;
  int rank_ = 0;
  int npes_ = 1;
  std::string label_;
  DevicePtr local_ = 0;
  DeviceBytes bytes_;
  DevicePtr addressesDevice_ = 0;
  std::vector<std::int64_t> addresses_;
  std::vector<std::pair<int, DevicePtr>> opened_;  // (peer, mapping) in open order
};

}  // namespace peerconf
