// C7 no stale acceptance: a reader never accepts a pair whose tag belongs to another step,
// including tags left in reused memory by an earlier buffer (the buffer is never zeroed).
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// Not applicable when no rank ran a data plane. Fails on what readers saw in-band (a tag of
// another step or buffer taken, a payload that is not the step's, a wrong all-reduce sum) and on
// what the replay of every rank's history finds: a pair taken with a tag other than the step's,
// one its source never pushed for that step, or one taken before its source had stored its tag
// and payload. Findings name rank, slot and epoch.
model::Verdict checkNoStale(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
