// Joins the data plane's checkers to the checkers stage: C6 (no_overwrite), C7 (no_stale), and
// C8 extended with the data plane's outcomes (liveness.h).
#pragma once

namespace peerconf::harness::dataplane {

// Registers them through checkers::registerChecker; idempotent, thread-safe. Call it at
// start-up (runDataPlane also calls it, so a process that ran a data plane has them).
void registerCheckers();

}  // namespace peerconf::harness::dataplane
