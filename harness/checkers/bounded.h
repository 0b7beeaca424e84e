// C8 bounded: the run ended within its bound, and every dead or hung rank was reported with
// every rank's last known state.
#pragma once

#include <chrono>

#include "model/run_record.h"
#include "model/scenario.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// wallNs <= plannedBound (model/scenario.h); every rank in expect.reported is kDead or kHung and no
// other rank is; no rank is kMissing. Always applicable; the findings list every rank's status and
// last event (kind, what, peer, time) so a reader sees where each rank was.
model::Verdict checkBounded(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
