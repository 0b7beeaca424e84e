// core: escapes-non-error
// EscapesNonError: the production PeerBuffer (src/peer_buffer.h) as it was before the open phase
// kept every exception: it keeps only peerconf::Error, so anything else thrown while opening peers
// escapes the constructor without the agreement and without releasing (the seed's behaviour: it
// caught only RuntimeError). The trigger is planted with it: its open phase reports a failed open
// as a plain std::runtime_error, as a helper library might. So on the failing rank the
// constructor throws std::runtime_error (C2: not HandshakeError "this"), holds on to its buffer
// and mappings (C3: never freed/closed), and the other ranks wait at the agreement until their
// deadline (C2: GroupTimeout, not "another"). A negative control
// (tests/checkers/planted_cores_test.cc); escapesNonErrorCore() builds it.
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "model/core_under_test.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class EscapesNonError : public PeerBuffer {
 public:
  EscapesNonError(std::size_t nbytes, IpcBackend& backend, Group* group,
                  std::string_view label = {});
};

harness::model::CoreFactory escapesNonErrorCore();

}  // namespace peerconf::planted
