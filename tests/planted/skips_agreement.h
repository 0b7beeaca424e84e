// SkipsAgreement: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — it never
// calls tpAgree: a rank raises only where its own open failed, every other rank returns a buffer.
// A negative control: the harness must flag it (tests/checkers/planted_cores_test.cc).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class SkipsAgreement : public PeerBuffer {
 public:
  SkipsAgreement(std::size_t nbytes, IpcBackend& backend, Group* group,
                 std::string_view label = {});
};

}  // namespace peerconf::planted
