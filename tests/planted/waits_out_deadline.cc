// WaitsOutDeadline: the production handshake with its agreement followed by a wait, marked
// "PLANTED DEFECT".
#include "planted/waits_out_deadline.h"

#include <array>

#include "errors.h"
#include "handshake.h"

namespace peerconf::planted {

namespace {

class WaitsForConfirmation : public Handshake {
 protected:
  bool agree(bool mapped) override {
    const bool agreed = Handshake::agree(mapped);
    // PLANTED DEFECT: a rank that mapped every peer does not trust a failed agreement: it waits
    // for the failing rank to confirm in one more all-gather. The failing rank raises at once and
    // never joins it, so this rank waits out the group's deadline and raises "another" only then.
    // (An all-gather, not a second all-reduce: C5's replay of the agreement stays clean, so that
    // only the time shows the defect.)
    if (!agreed && mapped) {
      const std::array<std::byte, 1> confirm{};
      try {
        group()->allGather(confirm);
      } catch (const GroupTimeout&) {
        // The confirmation never came: the deadline has passed; raise as production does.
      }
    }
    return agreed;
  }
};

}  // namespace

WaitsOutDeadline::WaitsOutDeadline(std::size_t nbytes, IpcBackend& backend, Group* group,
                                   std::string_view label)
    : PeerBuffer(nbytes, backend, group, WaitsForConfirmation(), label) {}

}  // namespace peerconf::planted
