// C8 with the data plane: the built-in bounded-run checker, plus how every rank's data plane
// ended — a data-plane wait that timed out is a hang the run survived only by its deadline.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// checkers::checkBounded(record), then, for every rank that has a data-plane result: completed
// is fine; a planted stop must show as "stopped" on its rank, and then the others may time out
// or be aborted, provided at least one timeout names a stopped rank; without a planted stop any
// timeout, abort or error fails. A `dataplane.stop` whose rank's data plane completed did not
// happen ("the planned stop did not happen": a run capped short of it), and fails. The findings
// name rank, peer, slot and epoch of each wait.
model::Verdict checkBoundedWithDataPlane(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
