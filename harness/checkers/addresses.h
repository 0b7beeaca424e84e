// C4 addresses: on success every rank's own slot is its local pointer and patterns written
// through every peer address land in that peer's buffer.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// Every rank that returned a PeerBuffer has ownSlotIsLocal and no addressFindings; where the
// check ran (tableChecked), addresses() has one slot a rank, addressesDevice() read back through
// the backend equals it slot by slot, and each peer's slot is the mapping its open returned (the
// ledger's successful open of that peer before close, else openMemHandle's "ptr=" return
// event). Findings name the rank and the slot. N/A unless the scenario expects success and at
// least one rank returned a buffer.
model::Verdict checkAddresses(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
