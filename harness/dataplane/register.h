// Joins the data plane's checkers to the checkers stage: C6 (no_overwrite), C7 (no_stale), and
// C8 extended with the data plane's outcomes (liveness.h).
#pragma once

namespace peerconf::harness::dataplane {

// Registers them through checkers::registerChecker; idempotent, thread-safe. A program that links
// runDataPlane gets them at static initialization; call it at start-up anyway where the harness
// may judge a data plane without linking that entry.
void registerCheckers();

}  // namespace peerconf::harness::dataplane
