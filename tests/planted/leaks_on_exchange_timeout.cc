// LeaksOnExchangeTimeout: the production handshake with its exchange's release on a group error
// undone, marked "PLANTED DEFECT".
#include "planted/leaks_on_exchange_timeout.h"

#include "errors.h"
#include "handshake.h"

namespace peerconf::planted {

namespace {

class ForgetsOnGroupError : public Handshake {
 protected:
  void exchange() override {
    // PLANTED DEFECT: the local buffer is hidden from release() while the exchange runs, so a
    // group error there (which releases what the buffer holds, then raises) frees nothing of it.
    const DevicePtr kept = local();
    const DeviceBytes keptBytes = bytes();
    local() = 0;
    bytes() = {};
    try {
      Handshake::exchange();
    } catch (const GroupError&) {
      throw;  // the buffer stays allocated: nobody holds it any more
    } catch (...) {
      local() = kept;  // any other failure releases as production does
      bytes() = keptBytes;
      release();
      throw;
    }
    local() = kept;
    bytes() = keptBytes;
  }
};

}  // namespace

LeaksOnExchangeTimeout::LeaksOnExchangeTimeout(std::size_t nbytes, IpcBackend& backend,
                                               Group* group, std::string_view label)
    : PeerBuffer(nbytes, backend, group, ForgetsOnGroupError(), label) {}

}  // namespace peerconf::planted
