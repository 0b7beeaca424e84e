// TableOneEntryLong: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect: its
// device address table is allocated one entry longer than the group (a sentinel slot nobody
// reads), 8 bytes more device memory than the contract's. Invisible on a roomy device; a device
// memory that holds the buffer and the table exactly (scenarios/boundaries/) runs out on it. A
// negative control of the device-memory boundary scenarios.
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

// core: table-one-entry-long
class TableOneEntryLong : public PeerBuffer {
 public:
  TableOneEntryLong(std::size_t nbytes, IpcBackend& backend, Group* group,
                    std::string_view label = {});
};

}  // namespace peerconf::planted
