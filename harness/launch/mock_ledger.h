// The mocked HIP runtime's ledger of one device, as the harness keeps it in a RankResult.
#pragma once

#include <vector>

#include "model/run_record.h"

namespace peerconf::harness::launch {

// Every ledger entry of `device` (alloc/open/close/free, and failed calls of other kinds).
std::vector<model::LedgerRecord> copyMockLedger(int device);

// How many entries `device`'s ledger holds now (RankResult::ledgerAtClose).
std::size_t mockLedgerLength(int device);

}  // namespace peerconf::harness::launch
