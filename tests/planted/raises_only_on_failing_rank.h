// RaisesOnlyOnFailingRank: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect —
// it agrees, but a rank whose own opens succeeded returns normally even when the agreement says
// another rank failed. A negative control: the harness must flag it
// (tests/checkers/planted_cores_test.cc).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class RaisesOnlyOnFailingRank : public PeerBuffer {
 public:
  RaisesOnlyOnFailingRank(std::size_t nbytes, IpcBackend& backend, Group* group,
                          std::string_view label = {});
};

}  // namespace peerconf::planted
