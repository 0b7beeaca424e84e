// LeaksOnFailure: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — on a
// failed open (or table), it forgets the mappings it opened before the failure: they are never
// closed. A negative control: the harness must flag it (tests/checkers/planted_cores_test.cc).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class LeaksOnFailure : public PeerBuffer {
 public:
  LeaksOnFailure(std::size_t nbytes, IpcBackend& backend, Group* group,
                 std::string_view label = {});
};

}  // namespace peerconf::planted
