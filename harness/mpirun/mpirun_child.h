// mpirun as a child of the `peerconf` the user started (`--launcher mpi` outside mpirun, and the
// supervisor of `--kill-mode signal`), and how an interrupt reaches its ranks.
//
// mpirun runs under a keeper process, in a process group of their own (Ctrl-C reaches peerconf
// only: mpirun, signalled itself, would kill its ranks before rank 0 closes the reports), stdin
// from /dev/null. The keeper's exit status is mpirun's. When peerconf dies first, however it dies
// (a second interrupt, SIGKILL), the keeper (told by PR_SET_PDEATHSIG) sends mpirun one SIGTERM,
// on which mpirun ends its ranks and removes its own files, waits for it, and then removes the
// run's directory, which peerconf can no longer remove (mpirun may have made files there again
// since peerconf's last look). A second SIGTERM would make mpirun exit at once without its cleanup:
// nothing else sends one.
//
// `--launcher mpi`: at the first interrupt peerconf writes the stop file named in the ranks'
// environment (PEERCONF_STOP_FILE, in the run's directory, which also holds mpirun's session
// directory); the ranks read it between rounds, agree to stop after the round under way
// (MpiSession::runAll), rank 0 reports what ran and every rank exits.
#pragma once

#include <sys/types.h>

#include <iosfwd>
#include <string>
#include <vector>

namespace peerconf::harness::mpirun {

// Starts `args` ("mpirun", ...) under its keeper as described above, its output to `log` (empty:
// this process's), `cleanup` the directory the keeper removes if this process dies first; the
// keeper's pid, the leader of the process group (wait for it as for mpirun), or -1 (errno).
pid_t startMpirun(const std::vector<std::string>& args, const std::string& log,
                  const std::string& cleanup);

// `--launcher mpi` outside mpirun: runs `args` as described above and waits for it; its exit
// status (128 + the signal that killed it), or 128 + the interrupt's signal when this process was
// interrupted (launch/interrupt.h). 2 when mpirun cannot be started.
int runMpirunChild(const std::vector<std::string>& args, std::ostream& err);

// Under mpirun: the signal that interrupted this rank's job (the one the stop file names), or 0.
int jobInterrupt();
// Under mpirun, once the ranks have agreed to stop: removes the stop file (rank 0 does), so that it
// is gone even when this process's parent is not there to remove it.
void removeStopFile();

}  // namespace peerconf::harness::mpirun
