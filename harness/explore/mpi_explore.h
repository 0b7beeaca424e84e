// `peerconf explore` under mpirun: every process explores its own seed (the base seed plus its
// world rank), so the processes search disjoint parts of the space at once; failures and
// counts are gathered to world rank 0, which reports the total.
#pragma once

#include <iosfwd>

#include "explore/command.h"

namespace peerconf::harness::explore {

// Collective over MPI_COMM_WORLD (initializes and finalizes MPI). Exit code as
// runExploreCommand's, the same on every process. Exhaustive mode is not sharded (exit 2).
int runExploreUnderMpi(const ExploreCommand& command, int* argc, char*** argv, std::ostream& out,
                       std::ostream& err);

}  // namespace peerconf::harness::explore
