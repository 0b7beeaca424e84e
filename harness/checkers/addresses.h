// C4 addresses: every mapping reaches the buffer its peer exported (every outcome); on success
// every rank's own slot is its local pointer and patterns written through every peer address land
// in that peer's buffer.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// Every rank that returned a PeerBuffer has ownSlotIsLocal and no addressFindings; where the
// check ran (tableChecked), addresses() has one slot a rank, addressesDevice() read back through
// the backend equals it slot by slot, and each peer's slot is the mapping its open returned (the
// ledger's successful open of that peer before close, else openMemHandle's "ptr=" return
// event). Findings name the rank and the slot. On every outcome, each rank's mappingFindings (a
// mapping of a peer that reached another allocation than the buffer that peer exported: the open
// seam's signature check) fail it. N/A when neither applies: no mapping finding, and the
// scenario expects no buffer or no rank returned one.
model::Verdict checkAddresses(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
