// SeedExchange: the production handshake with the seed's way of failing before the exchange,
// marked "PLANTED DEFECT".
#include "planted/seed_exchange.h"

#include <exception>

#include "handshake.h"

namespace peerconf::planted {

namespace {

class RaisesBeforeExchange : public Handshake {
 protected:
  void allocateAndExport(std::size_t nbytes) override {
    Handshake::allocateAndExport(nbytes);
    // PLANTED DEFECT: the seed's exchange. An alloc or get-handle failure is raised here, before
    // the exchange: this rank never joins it, and every other rank waits for it in the all-gather
    // until the group's deadline.
    if (failure()) {
      release();
      std::rethrow_exception(failure());
    }
  }
};

}  // namespace

SeedExchange::SeedExchange(std::size_t nbytes, IpcBackend& backend, Group* group,
                           std::string_view label)
    : PeerBuffer(nbytes, backend, group, RaisesBeforeExchange(), label) {}

}  // namespace peerconf::planted
