// SeedExchange: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — the seed's
// exchange: a rank whose alloc or get-handle fails raises its backend error at once, before the
// exchange, so every other rank waits in the all-gather until the group's deadline and raises a
// group error. The production core sends a failure record instead and every rank raises at once;
// this core must fail the suite's alloc and get-handle scenarios (C2, by name: "expected
// HandshakeError"; scenarios/controls/c2-seed-exchange.yaml).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class SeedExchange : public PeerBuffer {
 public:
  SeedExchange(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label = {});
};

}  // namespace peerconf::planted
