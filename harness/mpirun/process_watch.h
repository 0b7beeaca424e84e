// Process watching for the supervisor (supervisor.h): what state a process is in, whose children
// are whose, reaping, and how a wait status reads. Linux (/proc).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace peerconf::harness::mpirun {

// The state letter of /proc/<pid>/stat (R, S, T, Z, ...), or 0 when the process is gone.
char processState(pid_t pid);
// The parent of `pid`, or -1 when it cannot be read.
pid_t parentOf(pid_t pid);
// Processes whose parent is this one (orphans of a job end up here when this process is their
// subreaper).
std::vector<pid_t> children();
// Whether `pid` exists and is neither a zombie nor dead.
bool alive(pid_t pid);
// Reaps every child that has ended; when `mpirun` is one of them, sets `exited` and its `status`.
void reap(pid_t mpirun, bool& exited, int& status);
// "exit code N", "signal N" or "status N".
std::string describeStatus(int status);

// Whether `state` (processState's letter) shows a real SIGKILL (`dead`: gone, zombie or dead) or a
// real SIGSTOP (stopped, T).
bool signalCarriedOut(bool dead, char state);
// `pid`'s state once a SIGKILL (`dead`) or SIGSTOP it raised itself has been carried out, polling
// for at most two seconds (the rank streams its stop before it raises the signal, so the watcher
// can look first).
char awaitSignal(pid_t pid, bool dead);

}  // namespace peerconf::harness::mpirun
