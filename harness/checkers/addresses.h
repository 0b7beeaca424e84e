// C4 addresses: on success every rank's own slot is its local pointer and patterns written
// through every peer address land in that peer's buffer.
#pragma once

#include "run_record.h"
#include "verdict.h"

namespace peerconf::harness::checkers {

// Every rank that returned a PeerBuffer has ownSlotIsLocal and no addressFindings. N/A unless
// the scenario expects success and at least one rank returned a buffer.
Verdict checkAddresses(const RunRecord& record);

}  // namespace peerconf::harness::checkers
