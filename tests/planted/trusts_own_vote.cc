// TrustsOwnVote: the production handshake whose agreement falls back to the rank's own vote when
// the group call fails, marked "PLANTED DEFECT".
#include "planted/trusts_own_vote.h"

#include "errors.h"
#include "handshake.h"

namespace peerconf::planted {

namespace {

class OwnVoteOnGroupError : public Handshake {
 protected:
  // PLANTED DEFECT: a failed agreement is read as the rank's own vote. Where the call met another
  // collective (or timed out), every rank that mapped its peers returns a buffer that nobody
  // agreed to (C5), and the ranks' outcomes follow what each saw (C1, C2).
  bool agree(bool mapped) override {
    try {
      return Handshake::agree(mapped);
    } catch (const GroupError&) {
      return mapped;
    }
  }
};

}  // namespace

TrustsOwnVote::TrustsOwnVote(std::size_t nbytes, IpcBackend& backend, Group* group,
                             std::string_view label)
    : PeerBuffer(nbytes, backend, group, OwnVoteOnGroupError(), label) {}

}  // namespace peerconf::planted
