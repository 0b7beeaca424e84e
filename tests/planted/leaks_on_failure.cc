// LeaksOnFailure: the production handshake with a mapping phase that forgets on failure, marked
// "PLANTED DEFECT".
#include "planted/leaks_on_failure.h"

#include "handshake.h"

namespace peerconf::planted {

namespace {

class ForgetsMappings : public Handshake {
 protected:
  void mapPeers() override {
    Handshake::mapPeers();
    // PLANTED DEFECT: "rolls back" the partial list of mappings by forgetting it, so release()
    // never closes the peers this rank opened before the failure (C3 on the failing rank).
    if (failure()) opened().clear();
  }
};

}  // namespace

LeaksOnFailure::LeaksOnFailure(std::size_t nbytes, IpcBackend& backend, Group* group,
                               std::string_view label)
    : PeerBuffer(nbytes, backend, group, ForgetsMappings(), label) {}

}  // namespace peerconf::planted
