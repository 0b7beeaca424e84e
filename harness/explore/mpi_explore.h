// `peerconf explore` under mpirun: every process explores its own seed (the base seed plus its
// world rank), so the processes search disjoint parts of the space at once; failures and
// counts are gathered to world rank 0, which reports the total.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "explore/command.h"

namespace peerconf::harness::explore {

// Collective over MPI_COMM_WORLD (initializes and finalizes MPI). Exit code as
// runExploreCommand's, the same on every process. Exhaustive mode is not sharded (exit 2).
int runExploreUnderMpi(const ExploreCommand& command, int* argc, char*** argv, std::ostream& out,
                       std::ostream& err);

// The parts without MPI (tested alone):
// What process `rank` explores: seed base + rank, its own directory under outDir ("rank-N"),
// quiet, in this process (no fork after MPI_Init).
ExploreOptions shardOptions(const ExploreOptions& search, std::uint64_t base, int rank);
// One process's result as it travels to world rank 0 (a JSON object).
std::string shardReport(const ExploreResult& result, double seconds);
// World rank 0's summary of every process's report (in rank order) on `out`: each failure, then
// the totals. Returns the exit code: 0 when no process found a failure, else 1.
int summarizeShards(const std::vector<std::string>& reports, std::uint64_t base, std::ostream& out);

}  // namespace peerconf::harness::explore
