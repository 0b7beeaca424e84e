// `peerconf run --launcher mpi` outside mpirun: mpirun as a child of this process, and how an
// interrupt of this process reaches its ranks. mpirun runs in a process group of its own (Ctrl-C
// reaches this process only: mpirun, signalled itself, would kill its ranks before rank 0 closes
// the reports) and dies with this process (PR_SET_PDEATHSIG). At the first interrupt this process
// writes the stop file named in the ranks' environment (PEERCONF_STOP_FILE); the ranks read it
// between rounds, agree to stop after the round under way (MpiSession::runAll), rank 0 reports
// what ran and every rank exits. A second interrupt ends this process at once; mpirun, told by
// PR_SET_PDEATHSIG, then ends its ranks.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace peerconf::harness::mpirun {

// Runs `args` ("mpirun", ...) as described above and waits for it; its exit status (128 + the
// signal that killed it), or 128 + the interrupt's signal when this process was interrupted
// (launch/interrupt.h). 2 when mpirun cannot be started.
int runMpirunChild(const std::vector<std::string>& args, std::ostream& err);

// Under mpirun: the signal that interrupted this rank's job (the one the stop file names), or 0.
int jobInterrupt();
// Under mpirun, once the ranks have agreed to stop: removes the stop file (rank 0 does), so that it
// is gone even when this process's parent is not there to remove it.
void removeStopFile();

}  // namespace peerconf::harness::mpirun
