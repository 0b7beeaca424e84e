// C8 bounded: the run ended within its bound, and every dead or hung rank was reported with
// every rank's last known state.
#pragma once

#include <chrono>

#include "run_record.h"
#include "scenario.h"
#include "verdict.h"

namespace peerconf::harness::checkers {

// The slack added to a derived bound: process start-up, thread joins, report writing.
inline constexpr std::chrono::milliseconds kBoundSlack{2000};
// Group calls of one handshake that can each wait up to the deadline: exchange and agree.
inline constexpr int kGroupCallsPerRun = 2;

// The bound of a run: expect.within when the scenario sets it; else kGroupCallsPerRun ×
// deadline + the sum of every delay fault's delay (each fault counted once: ranks are late in
// parallel, and a rank meets each point once) + kBoundSlack.
std::chrono::nanoseconds runBound(const Scenario& scenario);

// wallNs <= runBound; every rank in expect.reported is kDead or kHung and no other rank is; no
// rank is kMissing. Always applicable; the findings list every rank's status and last event
// (kind, what, peer, time) so a reader sees where each rank was.
Verdict checkBounded(const RunRecord& record);

}  // namespace peerconf::harness::checkers
