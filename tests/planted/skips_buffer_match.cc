// SkipsBufferMatch: the production handshake with its registration match replaced, marked
// "PLANTED DEFECT".
#include "planted/skips_buffer_match.h"

#include "handshake.h"

namespace peerconf::planted {

namespace {

class NoMatch : public Handshake {
 protected:
  // PLANTED DEFECT: the seed's exchange of bare handles: every rank maps whatever its peers
  // registered in this place, the wrong buffer included, and returns as if nothing differed.
  void match() override {}
};

}  // namespace

SkipsBufferMatch::SkipsBufferMatch(std::size_t nbytes, IpcBackend& backend, Group* group,
                                   std::string_view label)
    : PeerBuffer(nbytes, backend, group, NoMatch(), label) {}

}  // namespace peerconf::planted
