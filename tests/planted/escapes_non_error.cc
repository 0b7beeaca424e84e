// EscapesNonError: the production handshake with its mapping phase keeping only peerconf::Error,
// the defects marked "PLANTED DEFECT".
#include "planted/escapes_non_error.h"

#include <exception>
#include <stdexcept>
#include <string>

#include "errors.h"
#include "handshake.h"

namespace peerconf::planted {

namespace {

class KeepsOnlyErrors : public Handshake {
 protected:
  void openPeers() override {
    try {
      Handshake::openPeers();
    } catch (const Error& e) {
      // PLANTED DEFECT (the trigger): a failed open becomes a plain std::runtime_error.
      throw std::runtime_error(std::string("could not map peer memory: ") + e.what());
    }
  }

  void mapPeers() override {
    if (failure()) return;  // kept by an earlier phase, for the agreement: as production does
    Handshake::mapPeers();
    if (!failure()) return;
    try {
      std::rethrow_exception(failure());
    } catch (const Error&) {
      // PLANTED DEFECT: only peerconf::Error is kept; anything else escapes the constructor here,
      // without the agreement and without releasing.
    }
  }
};

}  // namespace

EscapesNonError::EscapesNonError(std::size_t nbytes, IpcBackend& backend, Group* group,
                                 std::string_view label)
    : PeerBuffer(nbytes, backend, group, KeepsOnlyErrors(), label) {}

harness::model::CoreFactory escapesNonErrorCore() {
  return harness::model::coreFactoryOf<EscapesNonError>();
}

}  // namespace peerconf::planted
