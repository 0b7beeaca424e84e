// Real-signal mode of the MPI launcher, the supervisor's side: it runs mpirun, reads what the run
// directory's files say (run_dir.h), watches the job's processes (process_watch.h), and cleans up.
// The worker side is signal_rank.cc.
#include "mpirun/supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

#include "launch/interrupt.h"
#include "launch/rank_launch.h"
#include "launch/rank_runner.h"
#include "mock_hip/control.h"
#include "mpirun/mpirun_child.h"
#include "mpirun/process_watch.h"
#include "mpirun/run_dir.h"

namespace peerconf::harness::mpirun {

using launch::newRecord;
using launch::plansStops;
using launch::readRankPayload;
using launch::Runtime;
using model::Event;
using model::EventKind;
using model::EventLog;
using model::plannedBound;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;

namespace {

using SteadyClock = EventLog::Clock;

// How long a new mpirun may take to reach its first scenario, and how long one may take between
// the end of one scenario and the start of the next, before the job is declared lost.
constexpr std::chrono::seconds kStartLimit{60};
// How long mpirun may take to exit on its own after the list's last scenario.
constexpr std::chrono::seconds kExitLimit{15};
// How long mpirun may take to notice its ranks were killed, and the reaping may take, before it is
// killed in turn and the leftovers reported.
constexpr std::chrono::seconds kKillLimit{5};
// The report of a run must be out within its bound plus this (issue 8: deadline + 5 s). Ranks
// still silent at the bound plus kGrace are given up on, leaving a second for the cleanup; the
// grace lets survivors of a run whose bound is too tight (a C8 negative control) still report.
constexpr std::chrono::seconds kReportSlack{5};
constexpr std::chrono::seconds kGrace{4};
constexpr std::chrono::milliseconds kPoll{10};

std::string selfExecutable() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find its own executable to start under mpirun");
  self[n] = '\0';
  return self;
}

}  // namespace

struct Supervisor::Job {
  std::string dir;
  pid_t mpirun = -1;
  bool exited = false;
  int status = 0;
  SteadyClock::time_point lastProgress;  // job start, or the end of its latest scenario
  // The rank processes it announced (pid.R files), each held for a second interrupt
  // (launch/interrupt.h): mpirun, ended by this process's death, cannot end a SIGSTOPped rank.
  std::map<int, pid_t> held;
};

Supervisor::Supervisor(SupervisorOptions options, std::ostream& err)
    : options_(std::move(options)), err_(err) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/peerconf-signal.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a run directory: " + std::string(std::strerror(errno)));
  }
  root_ = pattern;
  launch::holdPath(root_);  // a second interrupt removes it (interrupt.h)
  // Ranks whose mpirun is gone are re-parented to us, so we can kill and reap every one.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

Supervisor::~Supervisor() {
  if (job_) {
    for (const auto& problem : endJob(false)) err_ << "peerconf: cleanup: " << problem << "\n";
  }
  launch::releasePath(root_);
  if (std::getenv("PEERCONF_KEEP_RUN_DIR") == nullptr) {
    removeTree(root_);
  } else {
    err_ << "peerconf: run directory kept: " << root_ << "\n";
  }
}

void Supervisor::startJob() {
  auto job = std::make_unique<Job>();
  job->dir = root_ + "/job" + std::to_string(jobs_++);
  if (::mkdir(job->dir.c_str(), 0700) != 0) {
    throw std::runtime_error("cannot create " + job->dir + ": " + std::strerror(errno));
  }
  const auto timeout = std::chrono::duration_cast<std::chrono::seconds>(options_.remainingBound) +
                       std::chrono::seconds(60);
  std::vector<std::string> args = {"mpirun", "-np", std::to_string(options_.np), "--oversubscribe",
                                   // A rank's real death must not end the job: the survivors
                                   // still report (the supervisor ends it).
                                   "--enable-recovery", "--timeout",
                                   std::to_string(timeout.count())};
  if (::geteuid() == 0) args.emplace_back("--allow-run-as-root");
  args.push_back(selfExecutable());
  args.insert(args.end(), options_.args.begin(), options_.args.end());
  args.insert(args.end(), {"--run-dir", job->dir, "--first", std::to_string(next_)});
  const std::string log = job->dir + "/mpirun.log";

  // mpirun's session directory in the run directory: removed with it, by a second interrupt
  // (launch/interrupt.h) or by mpirun's keeper when this process died first (mpirun_child.h).
  ::setenv("OMPI_MCA_orte_tmpdir_base", root_.c_str(), 0);
  // The ranks share this process's mocked-runtime job (rank 0 reads it and broadcasts it), so
  // that the sweep after the job (sweepStaleSegments, which removes only its own job's
  // segments) finds what killed ranks left.
  if (std::getenv("PEERCONF_MOCK_JOB") == nullptr) {
    char jobText[24];
    std::snprintf(jobText, sizeof jobText, "%llx",
                  static_cast<unsigned long long>(mock_hip::job()));
    ::setenv("PEERCONF_MOCK_JOB", jobText, 0);
  }
  err_.flush();
  // Under its keeper, in a process group of its own (mpirun_child.h): a last-resort kill of the
  // group reaches what it started; a Ctrl-C reaches this process alone, which ends the job itself;
  // mpirun ends its ranks when this process dies, however it dies, and the keeper then removes the
  // run directory.
  const pid_t pid = startMpirun(args, log, root_);
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  job->mpirun = pid;
  job->lastProgress = SteadyClock::now();
  job_ = std::move(job);
}

std::vector<std::string> Supervisor::endJob(bool waitForExit) {
  Job& job = *job_;
  std::vector<std::string> problems;
  auto waitUntil = [&](SteadyClock::time_point limit, auto done) {
    while (!done() && SteadyClock::now() < limit) {
      reap(job.mpirun, job.exited, job.status);
      if (done()) break;
      std::this_thread::sleep_for(kPoll);
    }
    reap(job.mpirun, job.exited, job.status);
    return done();
  };

  if (waitForExit) waitUntil(SteadyClock::now() + kExitLimit, [&] { return job.exited; });

  // Every rank the job announced; SIGKILL ends SIGSTOPped processes too.
  std::map<int, pid_t> ranks;
  for (int rank = 0; rank < options_.np; ++rank) {
    if (const auto text = readFile(job.dir + "/pid." + std::to_string(rank))) {
      ranks[rank] = static_cast<pid_t>(std::atol(text->c_str()));
    }
  }
  for (const auto& [rank, pid] : ranks) {
    if (alive(pid)) ::kill(pid, SIGKILL);
  }
  if (!waitUntil(SteadyClock::now() + kKillLimit, [&] { return job.exited; })) {
    problems.push_back("mpirun (pid " + std::to_string(job.mpirun) +
                       ") did not exit once its ranks were killed; killed its process group");
    ::kill(-job.mpirun, SIGKILL);
    waitUntil(SteadyClock::now() + kKillLimit, [&] { return job.exited; });
  }
  // Orphans of the job are our children now (subreaper): kill and reap them, then check that no
  // rank process is left anywhere.
  auto leftovers = [&] {
    std::vector<pid_t> out = children();
    for (const auto& [rank, pid] : ranks) {
      if (alive(pid) && std::find(out.begin(), out.end(), pid) == out.end()) out.push_back(pid);
    }
    return out;
  };
  waitUntil(SteadyClock::now() + kKillLimit, [&] {
    const auto left = leftovers();
    for (pid_t pid : left) ::kill(pid, SIGKILL);
    return left.empty();
  });
  for (pid_t pid : leftovers()) {
    problems.push_back("process " + std::to_string(pid) + " of the job is still there (state " +
                       std::string(1, processState(pid)) + ")");
  }

  // Stopped and killed ranks never freed their segments: remove the segments of dead owners.
  mock_hip::sweepStaleSegments();
  if (DIR* dir = ::opendir("/dev/shm")) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.rfind("peerconf.", 0) != 0) continue;
      for (const auto& [rank, pid] : ranks) {
        const std::string owner = "." + std::to_string(pid) + ".";
        if (name.find(owner) != std::string::npos) {
          problems.push_back("segment /dev/shm/" + name + " of rank " + std::to_string(rank) +
                             " is left");
        }
      }
    }
    ::closedir(dir);
  }
  if (!job.exited) problems.push_back("mpirun was never reaped");
  for (const auto& [rank, pid] : job.held) launch::releaseChild(pid);
  job_.reset();
  return problems;
}

StreamedRank rankFromStream(const mpirun::Stream& stream, int rank, char state,
                            std::set<std::string>& fired) {
  StreamedRank out;
  RankResult& result = out.result;
  result.rank = rank;
  result.events = stream.events;
  result.endNs = stream.events.empty() ? 0 : stream.events.back().tNs;
  if (!stream.stopped) {
    result.status = RankStatus::kMissing;
    result.message = stream.found ? "no result (last event streamed is kept)"
                                  : "nothing came back from this rank";
    return out;
  }
  result.status = *stream.stopped;
  const bool exited = result.status == RankStatus::kExited;
  const bool dead = result.status == RankStatus::kDead || exited;  // either way the process is gone
  const bool real = signalCarriedOut(dead, state);
  const std::string seen =
      dead ? (real ? "process gone" : "process still there, state " + std::string(1, state))
           : (real ? "process stopped (state T)"
                   : "process not stopped, state " +
                         std::string(state == 0 ? "gone" : std::string(1, state)));
  const std::string pid = "pid " + std::to_string(stream.pid) + ": " + seen;
  result.message = exited ? "exited with code " + std::to_string(stream.exitCode) + " at " +
                                stream.stopAt + " (_exit, " + pid + ")"
                          : "stopped at " + stream.stopAt + " by " +
                                (dead ? "SIGKILL" : "SIGSTOP") + " (" + pid + ")";
  out.signalled = real;
  out.stop = "rank " + std::to_string(rank) + " " +
             (exited ? "exited with code " + std::to_string(stream.exitCode)
              : dead ? std::string("SIGKILLed")
                     : std::string("SIGSTOPped")) +
             " at " + stream.stopAt;
  // The outcome the rank could not record itself, as the simulated modes record it.
  result.events.push_back(
      {result.endNs, rank, EventKind::kOutcome, toString(result.status), -1, result.message});
  for (const Event& e : stream.events) {
    if (e.kind == EventKind::kFault) fired.insert(e.what);
  }
  return out;
}

// What the files of one item said when the supervisor stopped waiting, and why it stopped.
struct Supervisor::Watch {
  enum class End { kComplete, kBound, kNoStart, kMpirunGone, kInterrupted };
  std::vector<mpirun::Stream> streams;
  std::vector<bool> hasResult;
  std::optional<std::int64_t> startNs;  // the earliest start a rank streamed
  End end = End::kComplete;
  SteadyClock::time_point completedAt;

  void noteStart(const mpirun::Stream& stream) {
    if (stream.found && (!startNs || stream.startNs < *startNs)) startNs = stream.startNs;
  }
};

void Supervisor::holdRanks() {
  Job& job = *job_;
  for (int rank = 0; rank < options_.np && static_cast<int>(job.held.size()) < options_.np;
       ++rank) {
    if (job.held.count(rank) != 0) continue;
    if (const auto text = readFile(job.dir + "/pid." + std::to_string(rank))) {
      const auto pid = static_cast<pid_t>(std::atol(text->c_str()));
      if (pid <= 0) continue;
      launch::holdChild(pid, SIGKILL);
      job.held[rank] = pid;
    }
  }
}

Supervisor::Watch Supervisor::watch(std::size_t index, int n, std::chrono::milliseconds bound) {
  Job& job = *job_;
  Watch w;
  w.streams.resize(static_cast<std::size_t>(n));
  w.hasResult.assign(static_cast<std::size_t>(n), false);
  // Until every rank has a result or a stop marker, the bound (+ kGrace) has passed since the
  // scenario started, or mpirun is gone.
  for (;;) {
    reap(job.mpirun, job.exited, job.status);
    holdRanks();
    const bool gone = job.exited;  // read the files once more after mpirun ended
    bool complete = true;
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (!w.hasResult[i]) w.hasResult[i] = exists(job.dir + "/" + itemName(index, r, "result"));
      if (w.hasResult[i]) continue;
      w.streams[i] = readStream(job.dir + "/" + itemName(index, r, "events"));
      w.noteStart(w.streams[i]);
      if (!w.streams[i].stopped) complete = false;
    }
    if (complete) break;
    if (launch::interrupted()) {
      w.end = Watch::End::kInterrupted;
      break;
    }
    const auto now = SteadyClock::now();
    if (gone) {
      w.end = Watch::End::kMpirunGone;
      break;
    }
    if (w.startNs &&
        steadyNs(now) - *w.startNs >=
            std::chrono::duration_cast<std::chrono::nanoseconds>(bound + kGrace).count()) {
      w.end = Watch::End::kBound;
      break;
    }
    if (!w.startNs && now - job.lastProgress > kStartLimit) {
      w.end = Watch::End::kNoStart;
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  w.completedAt = SteadyClock::now();
  return w;
}

void Supervisor::printStops(const RunRecord& record, const std::vector<std::string>& stops,
                            bool clean, std::int64_t origin) {
  std::string line = "peerconf: [signal] " + record.scenario.name + ":";
  for (const auto& s : stops) line += " " + s + ";";
  line += " job ended, ranks killed and reaped, /dev/shm swept" +
          std::string(clean ? ", nothing left" : ", LEFTOVERS") + "; reported " +
          std::to_string((steadyNs(SteadyClock::now()) - origin) / 1000000) + " ms after the start";
  err_ << line << "\n";
  // Every rank's last state: its outcome, and the last thing it did before it.
  for (const RankResult& rank : record.ranks) {
    err_ << "    rank " << rank.rank << ": " << toString(rank.status);
    if (!rank.message.empty()) err_ << " (" << rank.message << ")";
    const auto last = std::find_if(rank.events.rbegin(), rank.events.rend(),
                                   [](const Event& e) { return e.kind != EventKind::kOutcome; });
    if (last != rank.events.rend()) {
      err_ << "; last event " << toString(last->kind) << " " << last->what
           << (last->peer >= 0 ? " (peer " + std::to_string(last->peer) + ")" : "") << " at "
           << last->tNs / 1000000 << " ms";
    }
    err_ << "\n";
  }
}

// NOLINTNEXTLINE(readability-function-size): the supervisor's run, phase by phase; to be split
RunRecord Supervisor::run(const Scenario& scenario, std::uint64_t seed, Runtime runtime) {
  launch::throwIfInterrupted();
  const std::size_t index = next_;
  if (!job_) startJob();
  ++next_;
  Job& job = *job_;
  const int n = scenario.ranks;
  const auto bound = plannedBound(scenario);
  RunRecord record = newRecord(scenario, seed, "mpi --kill-mode signal", runtime);
  Watch w = watch(index, n, bound);
  if (w.end == Watch::End::kInterrupted) {
    // The run under way is abandoned: its job ended (ranks killed and reaped), no record.
    for (const auto& problem : endJob(false)) err_ << "peerconf: cleanup: " << problem << "\n";
    throw launch::Interrupted{launch::interruptSignal()};
  }

  std::set<std::string> fired;
  std::vector<std::string> stops;
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (w.hasResult[i]) {
      w.streams[i] = readStream(job.dir + "/" + itemName(index, r, "events"));
      w.noteStart(w.streams[i]);
      try {
        const auto text = readFile(job.dir + "/" + itemName(index, r, "result"));
        record.ranks.push_back(readRankPayload(text.value_or(""), fired));
        continue;
      } catch (const std::exception& e) {
        record.harnessErrors.push_back("rank " + std::to_string(r) +
                                       " wrote an unreadable result: " + e.what());
      }
    }
    const mpirun::Stream& stream = w.streams[i];
    const char state = stream.stopped
                           ? awaitSignal(stream.pid, *stream.stopped != RankStatus::kHung)
                           : static_cast<char>(0);
    StreamedRank streamed = rankFromStream(stream, r, state, fired);
    if (!streamed.signalled) {
      record.harnessErrors.push_back("rank " + std::to_string(r) + " " + streamed.result.message);
    }
    if (!streamed.stop.empty()) stops.push_back(streamed.stop);
    record.ranks.push_back(std::move(streamed.result));
  }
  record.firedSites.assign(fired.begin(), fired.end());
  const std::int64_t origin = w.startNs.value_or(steadyNs(job.lastProgress));
  record.wallNs = steadyNs(w.completedAt) - origin;

  switch (w.end) {
    case Watch::End::kComplete:
      break;
    case Watch::End::kBound:
      record.harnessErrors.push_back("not every rank reported within the run's bound + " +
                                     std::to_string(kGrace.count()) + " s; job ended");
      break;
    case Watch::End::kNoStart:
      record.harnessErrors.push_back("mpirun did not start this scenario within " +
                                     std::to_string(kStartLimit.count()) + " s; job ended");
      break;
    case Watch::End::kInterrupted:  // handled above
      break;
    case Watch::End::kMpirunGone:
      record.harnessErrors.push_back("mpirun ended (" + describeStatus(job.status) +
                                     ") before every rank reported; its log ends:\n" +
                                     lastLines(readFile(job.dir + "/mpirun.log").value_or(""), 15));
      break;
  }

  // A job whose ranks were stopped cannot go on (its world collectives never complete): end it,
  // as any job that failed, and the last one.
  const bool last = index + 1 >= options_.total;
  const bool stopPlanned = plansStops(scenario);
  const bool complete = w.end == Watch::End::kComplete;
  if (stopPlanned || !complete || last) {
    const auto problems = endJob(!stopPlanned && complete);
    for (const auto& problem : problems) record.harnessErrors.push_back("cleanup: " + problem);
    if (stopPlanned) printStops(record, stops, problems.empty(), origin);
  } else {
    job.lastProgress = w.completedAt;
  }
  const auto reportedNs = steadyNs(SteadyClock::now()) - origin;
  const auto limit = std::chrono::duration_cast<std::chrono::nanoseconds>(bound + kReportSlack);
  if (reportedNs > limit.count()) {
    record.harnessErrors.push_back("reported " + std::to_string(reportedNs / 1000000) +
                                   " ms after the start, past the bound + " +
                                   std::to_string(kReportSlack.count()) + " s (" +
                                   std::to_string(limit.count() / 1000000) + " ms)");
  }
  return record;
}

}  // namespace peerconf::harness::mpirun
