// Real-signal mode, the worker side (inside mpirun; the supervisor is supervisor.h): each rank
// streams its events and writes its result to the run directory's files (run_dir.h), and a planted
// death or hang stops its process for real (SIGKILL, SIGSTOP).
#pragma once

#include <cstddef>
#include <string>

#include "model/event_log.h"
#include "model/scenario.h"

namespace peerconf::harness::mpirun {

// One rank's files for one scenario (its position `index` in the run's list) in `runDir`.
class SignalRank {
 public:
  SignalRank(std::string runDir, std::size_t index, int rank,
             model::EventLog::Clock::time_point start);
  SignalRank(const SignalRank&) = delete;
  SignalRank& operator=(const SignalRank&) = delete;
  ~SignalRank();

  // Streams every event `log` records to this rank's event file, one write(2) a line.
  void attach(model::EventLog& log);
  // Marks the rank dead at `at` in its event file, then raise(SIGKILL).
  [[noreturn]] void die(model::Point at);
  // Marks the rank hung at `at`, then raise(SIGSTOP); returns if the process is continued.
  void hang(model::Point at);
  // Marks the rank exited at `at` with `code`, then _exit(code) (no atexit handlers, no
  // MPI_Finalize: vLLM's exit() after a failed CUDA call, as mpirun sees it).
  [[noreturn]] void exit(model::Point at, int code);
  // The rank's whole result (RankResult JSON plus "fired"), written then renamed into place.
  void writeResult(const std::string& json);

 private:
  void writeLine(const std::string& line) noexcept;

  std::string runDir_;
  std::size_t index_;
  int rank_;
  int fd_ = -1;
};

// Records this process's pid for world rank `rank` in `runDir` (once a process), so that the
// supervisor can end it whatever state it is in.
void announceSignalRank(const std::string& runDir, int rank);

// In a scenario with planned stops the world's collectives cannot complete (a rank is gone or
// stopped): once its result is written, every process of the job waits here to be killed.
[[noreturn]] void awaitSupervisor();

}  // namespace peerconf::harness::mpirun
