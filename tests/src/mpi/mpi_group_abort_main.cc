// Under OnTimeout::kAbort a missed deadline ends the whole job: every rank but the last calls an
// all-reduce the last never joins. Run by mpi_group_abort_check.cmake, which expects exit code 3
// and the rank/operation/deadline message; reaching the end of main is the failure.
#include <mpi.h>

#include <chrono>
#include <cstdio>

#include "mpi/mpi_group.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    peerconf::mpi::MpiGroup group(MPI_COMM_WORLD, std::chrono::milliseconds(300),
                                  peerconf::mpi::OnTimeout::kAbort);
    if (rank != size - 1) group.allReduceMin(rank);
    // The last rank waits here until the job is aborted.
    MPI_Barrier(MPI_COMM_WORLD);
  }
  std::fprintf(stderr, "rank %d: the job was not aborted\n", rank);
  MPI_Finalize();
  return 0;
}
