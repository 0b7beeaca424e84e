// Real-signal mode of the MPI launcher (`peerconf run --launcher mpi --kill-mode signal`): a
// planted death is a real SIGKILL of the rank's process and a hang a real SIGSTOP. Two halves:
// - the worker side, in every rank process under mpirun, streams each rank's events (one line a
//   write, so a killed rank's last event survives) and result to files of a run directory, and
//   stops the process for real;
// - the Supervisor, the `peerconf` process that starts mpirun, watches that directory and
//   mpirun, ends the job once every rank that was not stopped has reported (or at the run's
//   bound), builds the run's record from the files (stopped ranks with their last events), kills
//   every process of the job (SIGSTOPped ones too), reaps them, sweeps /dev/shm, checks that
//   nothing is left, and runs the remaining scenarios in a new mpirun.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "model/event_log.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness {

// ---- Worker side (inside mpirun) ----------------------------------------------------------------

// One rank's files for one scenario (its position `index` in the run's list) in `runDir`.
class SignalRank {
 public:
  SignalRank(std::string runDir, std::size_t index, int rank, EventLog::Clock::time_point start);
  SignalRank(const SignalRank&) = delete;
  SignalRank& operator=(const SignalRank&) = delete;
  ~SignalRank();

  // Streams every event `log` records to this rank's event file, one write(2) a line.
  void attach(EventLog& log);
  // Marks the rank dead at `at` in its event file, then raise(SIGKILL).
  [[noreturn]] void die(Point at);
  // Marks the rank hung at `at`, then raise(SIGSTOP); returns if the process is continued.
  void hang(Point at);
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

// ---- Supervisor side (the peerconf that starts mpirun)
// -------------------------------------------

struct SupervisorOptions {
  int np = 1;                     // mpirun -np
  std::size_t total = 0;          // items (scenario x repeat) of the list, in run order
  std::vector<std::string> args;  // this command's arguments after argv[0]
  std::chrono::milliseconds remainingBound{0};  // sum of every item's bound (mpirun --timeout)
};

class Supervisor {
 public:
  Supervisor(SupervisorOptions options, std::ostream& err);
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  // Ends a job still running and cleans up after it.
  ~Supervisor();

  // Runs the next item of the list (every call in the order the workers walk it) and returns its
  // record; problems of the job or of its cleanup are in record.harnessErrors.
  RunRecord run(const Scenario& scenario, std::uint64_t seed, Runtime runtime);
  int np() const noexcept { return options_.np; }

 private:
  struct Job;
  void startJob();
  // Ends the job: every rank process SIGKILLed (stopped ones included), mpirun waited for (then
  // killed), everything reaped, /dev/shm swept; returns what was left behind.
  std::vector<std::string> endJob(bool waitForExit);

  SupervisorOptions options_;
  std::ostream& err_;
  std::string root_;          // the run directory (one sub-directory a job)
  std::size_t next_ = 0;      // index of the next item
  std::size_t jobs_ = 0;      // jobs started
  std::unique_ptr<Job> job_;  // the running job, if any
};

}  // namespace peerconf::harness
