// WaitsOutDeadline: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — after
// an agreement that failed, a rank whose own opens succeeded waits for a confirmation the failing
// rank never sends, until the group's deadline, and only then raises "another TP rank". Every
// rank still raises the right message and releases everything: only the time shows the defect.
// C8 must catch it on simulated time: no rank raises within one agreement round of the last fault
// (scenarios/controls/c8-waits-out-deadline.yaml).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class WaitsOutDeadline : public PeerBuffer {
 public:
  WaitsOutDeadline(std::size_t nbytes, IpcBackend& backend, Group* group,
                   std::string_view label = {});
};

}  // namespace peerconf::planted
