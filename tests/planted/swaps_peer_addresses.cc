// SwapsPeerAddresses: the production handshake with two slots of the address table swapped before
// the device table is built, marked "PLANTED DEFECT".
#include "planted/swaps_peer_addresses.h"

#include <utility>
#include <vector>

#include "handshake.h"

namespace peerconf::planted {

namespace {

class SwapsTwoPeers : public Handshake {
 protected:
  void buildTable() override {
    // PLANTED DEFECT: the first two peers trade slots (own slot untouched), before the device
    // table is copied: both tables agree with each other and are both wrong (C4).
    std::vector<std::size_t> peers;
    for (int peer = 0; peer < size(); ++peer) {
      if (peer != rank()) peers.push_back(static_cast<std::size_t>(peer));
    }
    if (peers.size() >= 2) std::swap(addresses()[peers[0]], addresses()[peers[1]]);
    Handshake::buildTable();
  }
};

}  // namespace

SwapsPeerAddresses::SwapsPeerAddresses(std::size_t nbytes, IpcBackend& backend, Group* group,
                                       std::string_view label)
    : PeerBuffer(nbytes, backend, group, SwapsTwoPeers(), label) {}

}  // namespace peerconf::planted
