// RankControl: how a planted death or hang reaches the process or thread that runs a rank. The
// launcher implements it; the fault decorators call it at the scenario's point.
#pragma once

#include <cstdlib>

#include "faults/fault_spec.h"

namespace peerconf::faults {

// One object per launcher (it may serve every rank of a thread launcher). The faults record their
// kFault event before calling, so the event is in the log (and streamed) before the rank stops.
class RankControl {
 public:
  RankControl() = default;
  RankControl(const RankControl&) = delete;
  RankControl& operator=(const RankControl&) = delete;
  virtual ~RankControl() = default;

  // Ends `rank` at `at` and never returns. Threads: throw an exception type the launcher defines
  // (and the decorators never catch; it unwinds through the core like a lost rank, so the core's
  // own release-and-rethrow paths may still run). MPI: flush the event stream, then SIGKILL self.
  [[noreturn]] virtual void die(int rank, Point at) = 0;
  // Stops `rank` at `at` until the launcher releases it. Threads: block until released, then
  // throw (as die). MPI: flush, then SIGSTOP self; if continued, returns and the rank goes on.
  virtual void hang(int rank, Point at) = 0;
  // Ends `rank`'s process at `at` with exit status `code` and never returns (vLLM's CUDACHECK ->
  // exit()). Threads and one shared mpirun: as die, reported exited. MPI --kill-mode signal: flush,
  // then a real _exit(code). A control that knows no exit ends the rank as a death.
  [[noreturn]] virtual void exit(int rank, Point at, int /*code*/) {
    die(rank, at);
    std::abort();  // not reached: die never returns
  }
};

}  // namespace peerconf::faults
