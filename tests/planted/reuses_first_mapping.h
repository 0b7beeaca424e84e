// ReusesFirstMapping: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — a
// per-rank cache of peer mappings keyed by the peer alone, not by the handle it opened: while a
// rank's first buffer is open (constructed, not yet closed), a later registration's address table
// (host and device alike) gets the first buffer's peer pointers, so a kernel of buffer 1 writes
// into the peers' buffer 0. Its close() forgets them (so one registration a round,
// `one-at-a-time`, shows nothing: the hazard is several registrations alive together).
// A negative control of a data plane per buffer
// (scenarios/controls/c4-c8-reuses-first-mapping.yaml).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class ReusesFirstMapping : public PeerBuffer {
 public:
  ReusesFirstMapping(std::size_t nbytes, IpcBackend& backend, Group* group,
                     std::string_view label = {});
  ReusesFirstMapping(const ReusesFirstMapping&) = delete;
  ReusesFirstMapping& operator=(const ReusesFirstMapping&) = delete;
  // Forget the cached mappings this buffer left, so nothing outlives the mappings they name (the
  // harness calls close() on the type itself: core_under_test.h's CoreBufferOf).
  void close();
  ~ReusesFirstMapping();

 private:
  void forget() noexcept;

  IpcBackend& backend_;
};

}  // namespace peerconf::planted
