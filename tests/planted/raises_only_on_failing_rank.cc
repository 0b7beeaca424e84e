// RaisesOnlyOnFailingRank: the production handshake with the agreement's verdict overridden,
// marked "PLANTED DEFECT".
#include "planted/raises_only_on_failing_rank.h"

#include "handshake.h"

namespace peerconf::planted {

namespace {

class OwnVerdictOnly : public Handshake {
 protected:
  bool agree(bool mapped) override {
    const bool agreed = Handshake::agree(mapped);
    // PLANTED DEFECT: only the rank whose own open failed acts on a failed agreement; a rank whose
    // opens succeeded returns normally although another rank failed (C1, C2, C5 on those ranks).
    return agreed || mapped;
  }
};

}  // namespace

RaisesOnlyOnFailingRank::RaisesOnlyOnFailingRank(std::size_t nbytes, IpcBackend& backend,
                                                 Group* group, std::string_view label)
    : PeerBuffer(nbytes, backend, group, OwnVerdictOnly(), label) {}

}  // namespace peerconf::planted
