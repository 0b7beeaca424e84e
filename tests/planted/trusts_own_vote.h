// TrustsOwnVote: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect: when the
// agreement's group call fails (a GroupError, a timeout), the rank trusts its own vote instead of
// raising, as a "best effort" agreement would. A negative control: a rank whose agreement met
// another collective (collective-order) returns a buffer no peer agreed to (C5).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class TrustsOwnVote : public PeerBuffer {
 public:
  TrustsOwnVote(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label = {});
};

}  // namespace peerconf::planted
