// Interrupts: Ctrl-C (SIGINT to the process group), SIGTERM (a CI job's timeout) or SIGHUP end a
// peerconf run like a finished one, minus the rest. The first such signal only asks: the process
// that the user started ends what it started (the isolation child, mpirun and its ranks), skips
// the run under way, closes its reports with what ran, says "interrupted after N of M" and exits
// with 128 + the signal (130 for SIGINT, 143 for SIGTERM). A second one ends the process at once:
// it signals the processes and removes the files held here (holdChild, holdPath), then exits.
// Nothing the mocked runtime allocated can outlive its process either way (its segments are
// memfds: mock_hip/control.h).
#pragma once

#include <sys/types.h>

#include <string>

namespace peerconf::harness::launch {

// Installs the handlers of SIGINT, SIGTERM and SIGHUP (once; later calls change nothing). The first
// signal says on stderr that the run is ending and what a second one does. Only the process the
// user started installs them: ranks under mpirun keep the default actions (mpirun ends them with
// SIGTERM) and hear of an interrupt from their parent (mpirun/mpirun_child.h).
void catchInterrupts();

// The signal that interrupted this process (SIGINT, SIGTERM, SIGHUP), or 0.
int interruptSignal() noexcept;
inline bool interrupted() noexcept { return interruptSignal() != 0; }
// 128 + `signal`: the exit status of a run `signal` interrupted (the shell's convention).
inline int interruptedExitCode(int signal) noexcept { return 128 + signal; }
// "SIGINT", "SIGTERM", "SIGHUP" (else "signal N").
std::string signalName(int signal);
// A descriptor that becomes readable at the first interrupt and stays so (for poll), or -1 when
// catchInterrupts was not called in this process.
int interruptFd() noexcept;

// Thrown by what runs a scenario or a case in another process (isolation.h's ChildWorker and
// runInChild, the signal-mode supervisor) when an interrupt came: the run under way was ended,
// its processes reaped, and it has no record. Not a std::exception, so that no handler of errors
// takes it for one; what runs a list catches it and ends the list.
struct Interrupted {
  int signal = 0;
};
// Throws Interrupted when an interrupt has come.
void throwIfInterrupted();

// A process (pid > 0) or process group (-pgid) that a second interrupt sends `signal` before this
// process exits, until released (a fixed table of 256: more are not held, and say nothing): SIGKILL
// for a child that must not outlive this process. (mpirun is not held: it gets its SIGTERM from
// PR_SET_PDEATHSIG when this process exits, and ends its ranks; a second SIGTERM would make it
// exit at once and leave its files behind.)
void holdChild(pid_t pidOrGroup, int signal) noexcept;
void releaseChild(pid_t pidOrGroup) noexcept;
// A file, or a directory and everything below it, that a second interrupt removes (a report being
// written, a run directory), until released (a fixed table of 8).
void holdPath(const std::string& path) noexcept;
void releasePath(const std::string& path) noexcept;

// In a child forked to run cases for this process: interrupts are the parent's to act on (the
// child ignores them; the parent ends it), the child dies with the parent (PR_SET_PDEATHSIG,
// SIGKILL) even if the parent is SIGKILLed, and this module's state is the parent's no more.
// `parent`: the pid that forked it (if that is gone already, the child exits at once).
void leaveInterruptsToParent(pid_t parent);

}  // namespace peerconf::harness::launch
