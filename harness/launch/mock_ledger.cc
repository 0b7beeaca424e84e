// Copies the mocked runtime's ledger into the harness's own record type.
#include "launch/mock_ledger.h"

#include <string>

#include "mock_hip/control.h"

namespace peerconf::harness::launch {

using model::LedgerRecord;

std::vector<LedgerRecord> copyMockLedger(int device) {
  std::vector<LedgerRecord> out;
  for (const auto& e : mock_hip::ledger(device)) {
    LedgerRecord r;
    r.op = std::string(mock_hip::ledgerOpName(e.op));
    r.ptr = e.ptr;
    r.size = e.size;
    r.ownerDevice = e.ownerDevice;
    r.generation = e.generation;
    r.error = e.error;
    out.push_back(std::move(r));
  }
  return out;
}

std::size_t mockLedgerLength(int device) { return mock_hip::ledger(device).size(); }

}  // namespace peerconf::harness::launch
