// Helpers for gtest binaries run as MPI jobs: one main for all of them, and agreement of every
// rank's result so that each rank reports the job's outcome.
#pragma once

#include <mpi.h>

#include <string>

namespace peerconf::testing {

int worldRank();
int worldSize();

// Called at the end of a test on every rank of `comm`: a rank that passed adds a failure naming
// the ranks that failed, so the test fails on every rank (and every rank's log says why).
void agreeOnFailures(MPI_Comm comm);

}  // namespace peerconf::testing
