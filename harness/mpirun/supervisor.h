// Real-signal mode of the MPI launcher (`peerconf run --launcher mpi --kill-mode signal`): a
// planted death is a real SIGKILL of the rank's process and a hang a real SIGSTOP. Two halves:
// - the worker side (signal_rank.h), in every rank process under mpirun, streams each rank's
//   events (one line a write, so a killed rank's last event survives) and result to files of a
//   run directory (run_dir.h), and stops the process for real;
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
#include <set>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "model/event_log.h"
#include "model/run_record.h"
#include "model/scenario.h"
#include "mpirun/run_dir.h"

namespace peerconf::harness::mpirun {

// A rank that wrote no result, as the supervisor reports it from its event stream.
struct StreamedRank {
  model::RankResult result;
  std::string stop;       // "rank R SIGKILLed at P" (or SIGSTOPped) for a rank stopped for real
  bool signalled = true;  // false: its stop marker is there but the signal was not carried out
};

// Pure: the result of `rank` from its event `stream` (run_dir.h). With a stop marker, the rank is
// dead or hung with its streamed events and an outcome event, judged against `state`, its
// process's state letter after the signal (process_watch.h: gone/zombie for SIGKILL, T for
// SIGSTOP); the fault sites its events show are added to `fired`. Without one, it is missing.
StreamedRank rankFromStream(const mpirun::Stream& stream, int rank, char state,
                            std::set<std::string>& fired);

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
  // record; problems of the job or of its cleanup are in record.harnessErrors. Interrupted
  // (launch/interrupt.h): the job is ended (every rank killed, mpirun and all reaped) and
  // launch::Interrupted thrown, without a record.
  model::RunRecord run(const model::Scenario& scenario, std::uint64_t seed,
                       launch::Runtime runtime);
  int np() const noexcept { return options_.np; }

 private:
  struct Job;
  struct Watch;
  void startJob();
  // Holds every rank process the job has announced so far for a second interrupt.
  void holdRanks();
  // Waits for item `index`'s `n` ranks: every one has a result or stopped, its bound (+ grace)
  // passed, it never started, or mpirun ended.
  Watch watch(std::size_t index, int n, std::chrono::milliseconds bound);
  // The account of a job ended after planned stops: what was stopped, what each rank did last.
  void printStops(const model::RunRecord& record, const std::vector<std::string>& stops, bool clean,
                  std::int64_t origin);
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

}  // namespace peerconf::harness::mpirun
