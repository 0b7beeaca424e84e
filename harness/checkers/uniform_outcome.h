// C1 uniform outcome: every rank returns a usable PeerBuffer, or every rank raises.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// Leaving out the ranks the scenario expects to be reported (dead or hung), every rank is ok or
// every rank raised (never mixed, none dead/hung/missing), and that matches expect.outcome:
// success = all ok, raise = all raised, reported = every survivor raised — or every survivor ok
// when the only planted stops are at close(), after the handshake (expectedSurvivorStatus).
// One finding per rank
// with its status; ranks that break the expectation say what was expected. N/A when every rank
// is expected to be reported.
model::Verdict checkUniformOutcome(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
