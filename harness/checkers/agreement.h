// C5 agreement: tpAgree is true iff every rank passed true, read from the group calls' events.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// Reads each rank's allReduceMin calls (kCall what="allReduceMin" detail="in=<v>", then kReturn
// detail="out=<v>" or kThrow). For the k-th call of every rank: each result equals the MIN of
// the inputs of the ranks that made that call (so 0 when any passed 0, and equal across ranks),
// and no rank got a result while a live rank never made the call. For the handshake's own
// agreement (the call inside the "agree" phase, else each rank's last call): a rank that raised
// "another" passed in=1 and saw out=0; a rank that raised "this" passed in=0; a rank that
// returned a buffer passed in=1 and saw out=1; when the scenario expects success every rank did.
// N/A when no rank reached the agreement.
model::Verdict checkAgreement(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
