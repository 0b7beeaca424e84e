// LeaksOnExchangeTimeout: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect —
// a rank whose exchange ends in a group error (a GroupTimeout: a peer that never came, as when a
// rank registers fewer buffers than its peers) raises it without freeing its local buffer. Every
// rank still raises what it must: only the release shows the defect, and C3 must catch it
// (scenarios/controls/c3-leaks-on-exchange-timeout.yaml).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class LeaksOnExchangeTimeout : public PeerBuffer {
 public:
  LeaksOnExchangeTimeout(std::size_t nbytes, IpcBackend& backend, Group* group,
                         std::string_view label = {});
};

}  // namespace peerconf::planted
