// SwapsPeerAddresses: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect —
// with two peers or more, the address table (host and device alike) holds the first two peers'
// mappings in each other's slots, so a kernel writing to "peer a" lands in peer b's buffer.
// A negative control of C4 (scenarios/controls/c4-swaps-peer-addresses.yaml).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class SwapsPeerAddresses : public PeerBuffer {
 public:
  SwapsPeerAddresses(std::size_t nbytes, IpcBackend& backend, Group* group,
                     std::string_view label = {});
};

}  // namespace peerconf::planted
