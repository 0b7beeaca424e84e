// ReturnsAloneOnTimeout: the production core, and on a group timeout a buffer of one rank instead,
// marked "PLANTED DEFECT".
#include "planted/returns_alone_on_timeout.h"

#include <cstddef>
#include <memory>
#include <string_view>

#include "errors.h"
#include "group.h"
#include "peer_buffer.h"

namespace peerconf::planted {

harness::model::CoreFactory returnsAloneOnTimeoutCore() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    using Production = harness::model::CoreBufferOf<PeerBuffer>;
    try {
      return std::make_unique<Production>(nbytes, backend, group, label);
    } catch (const GroupTimeout&) {
      // PLANTED DEFECT: nobody came, so this rank goes on as a group of one: a buffer of its own,
      // mapped to no peer, returned as if the handshake had succeeded.
      return std::make_unique<Production>(nbytes, backend, nullptr, label);
    }
  };
}

}  // namespace peerconf::planted
