// SkipsAgreement: the production handshake with its agreement replaced, marked "PLANTED DEFECT".
#include "planted/skips_agreement.h"

#include "handshake.h"

namespace peerconf::planted {

namespace {

class NoAgreement : public Handshake {
 protected:
  // PLANTED DEFECT: no agreement. A rank raises only where its own open failed; every other rank
  // returns a buffer whose peer may have raised (C1 mixed outcome, C2 "another" missing).
  bool agree(bool mapped) override { return mapped; }
};

}  // namespace

SkipsAgreement::SkipsAgreement(std::size_t nbytes, IpcBackend& backend, Group* group,
                               std::string_view label)
    : PeerBuffer(nbytes, backend, group, NoAgreement(), label) {}

}  // namespace peerconf::planted
