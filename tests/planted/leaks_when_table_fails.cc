// LeaksWhenTableFails: the production handshake with a table phase that forgets the local buffer
// on failure, marked "PLANTED DEFECT".
#include "planted/leaks_when_table_fails.h"

#include <exception>

#include "handshake.h"

namespace peerconf::planted {

namespace {

class ForgetsLocalBuffer : public Handshake {
 protected:
  void buildTable() override {
    try {
      Handshake::buildTable();
    } catch (const std::exception&) {
      // PLANTED DEFECT: a failed table "gives up" the local buffer by forgetting it, so release()
      // never frees it (C3 on the rank whose table failed). Open failures are handled correctly.
      local() = 0;
      bytes() = {};
      throw;
    }
  }
};

}  // namespace

LeaksWhenTableFails::LeaksWhenTableFails(std::size_t nbytes, IpcBackend& backend, Group* group,
                                         std::string_view label)
    : PeerBuffer(nbytes, backend, group, ForgetsLocalBuffer(), label) {}

harness::model::CoreFactory leaksWhenTableFailsCore() {
  return harness::model::coreFactoryOf<LeaksWhenTableFails>();
}

}  // namespace peerconf::planted
