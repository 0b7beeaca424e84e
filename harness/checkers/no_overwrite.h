// C6 no unread data overwritten: in the data plane, a writer never lands a pair on a slot whose
// previous pair its reader has not consumed.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// Not applicable when no rank ran a data plane. Fails on what readers saw in-band (a slot that
// already held a later epoch's pair, a tag or payload that changed while it was read) and on
// what the replay of every rank's history finds: a push into a slot not ordered after the
// reader's acknowledgement of its previous pair, an acknowledgement the reader never wrote, a
// rank zeroing a pair it had not read. Findings name rank, slot and epoch.
model::Verdict checkNoOverwrite(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
