// Real-signal mode of the MPI launcher: the worker side (event streams, results, real SIGKILL and
// SIGSTOP) and the supervisor that runs mpirun, reports what the files say, and cleans up.
#include "launch/supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include "launch/rank_runner.h"
#include "mock_hip/control.h"
#include "model/record_json.h"

namespace peerconf::harness {

namespace {

using Clock = EventLog::Clock;
using nlohmann::json;

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

std::string itemName(std::size_t index, int rank, const char* what) {
  return "s" + std::to_string(index) + ".r" + std::to_string(rank) + "." + what;
}

std::int64_t steadyNs(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

bool writeAll(int fd, const std::string& text) noexcept {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// Writes `text` to `path` through a temporary name, so a reader sees all of it or nothing.
void writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
  const bool ok = writeAll(fd, text);
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  }
}

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The state letter of /proc/<pid>/stat (R, S, T, Z, ...), or 0 when the process is gone.
char processState(pid_t pid) {
  const auto stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return 0;
  const auto close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return 0;
  return (*stat)[close + 2];
}

pid_t parentOf(pid_t pid) {
  const auto stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return -1;
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat->substr(close + 2));
  char state = 0;
  pid_t parent = -1;
  rest >> state >> parent;
  return parent;
}

// Processes whose parent is this one (orphans of a job end up here: we are their subreaper).
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    if (parentOf(static_cast<pid_t>(pid)) == self) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return out;
}

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const char state = processState(pid);
  return state != 0 && state != 'Z' && state != 'X';
}

void removeTree(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      const std::string child = path + "/" + name;
      struct stat st {};
      if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        removeTree(child);
      } else {
        ::unlink(child.c_str());
      }
    }
    ::closedir(dir);
  }
  ::rmdir(path.c_str());
}

std::string lastLines(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  while (lines-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

// What one rank's event file says: its header, complete event lines, and a stop marker.
struct Stream {
  bool found = false;  // the header is there
  pid_t pid = -1;
  std::int64_t startNs = 0;  // steady clock, absolute
  std::vector<Event> events;
  std::optional<RankStatus> stopped;  // kDead or kHung
  std::string stopAt;
};

Stream readStream(const std::string& path) {
  Stream stream;
  const auto text = readFile(path);
  if (!text) return stream;
  std::size_t begin = 0;
  while (begin < text->size()) {
    const std::size_t end = text->find('\n', begin);
    if (end == std::string::npos) break;  // a line still being written
    const std::string line = text->substr(begin, end - begin);
    begin = end + 1;
    try {
      const json j = json::parse(line);
      if (j.contains("header")) {
        stream.pid = j["header"].at("pid").get<pid_t>();
        stream.startNs = j["header"].at("startNs").get<std::int64_t>();
        stream.found = true;
      } else if (j.contains("event")) {
        stream.events.push_back(eventFromJson(j["event"]));
      } else if (j.contains("stop")) {
        stream.stopped = j["stop"].at("status") == "hung" ? RankStatus::kHung : RankStatus::kDead;
        stream.stopAt = j["stop"].at("at").get<std::string>();
      }
    } catch (const std::exception&) {
      // A torn line cannot happen (one write a line); skip anything unreadable.
    }
  }
  return stream;
}

std::string selfExecutable() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find its own executable to start under mpirun");
  self[n] = '\0';
  return self;
}

}  // namespace

// ---- Worker side --------------------------------------------------------------------------------

SignalRank::SignalRank(std::string runDir, std::size_t index, int rank,
                       EventLog::Clock::time_point start)
    : runDir_(std::move(runDir)), index_(index), rank_(rank) {
  const std::string path = runDir_ + "/" + itemName(index_, rank_, "events");
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  writeLine(json{{"header", {{"rank", rank_}, {"pid", ::getpid()}, {"startNs", steadyNs(start)}}}}
                .dump());
}

SignalRank::~SignalRank() {
  if (fd_ >= 0) ::close(fd_);
}

void SignalRank::writeLine(const std::string& line) noexcept { (void)writeAll(fd_, line + "\n"); }

void SignalRank::attach(EventLog& log) {
  log.setSink([this](const Event& event) { writeLine(dumpJson(json{{"event", toJson(event)}})); });
}

void SignalRank::die(Point at) {
  writeLine(json{{"stop", {{"status", "dead"}, {"at", toString(at)}}}}.dump());
  ::raise(SIGKILL);
  for (;;) ::pause();  // not reached
}

void SignalRank::hang(Point at) {
  writeLine(json{{"stop", {{"status", "hung"}, {"at", toString(at)}}}}.dump());
  ::raise(SIGSTOP);
  writeLine(json{{"continued", toString(at)}}.dump());
}

void SignalRank::writeResult(const std::string& text) {
  writeFileAtomically(runDir_ + "/" + itemName(index_, rank_, "result"), text);
}

void announceSignalRank(const std::string& runDir, int rank) {
  static std::once_flag once;
  std::call_once(once, [&] {
    writeFileAtomically(runDir + "/pid." + std::to_string(rank), std::to_string(::getpid()));
  });
}

void awaitSupervisor() {
  for (;;) ::pause();
}

// ---- Supervisor ---------------------------------------------------------------------------------

struct Supervisor::Job {
  std::string dir;
  pid_t mpirun = -1;
  bool exited = false;
  int status = 0;
  Clock::time_point lastProgress;  // job start, or the end of its latest scenario
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
  // Ranks whose mpirun is gone are re-parented to us, so we can kill and reap every one.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

Supervisor::~Supervisor() {
  if (job_) {
    for (const auto& problem : endJob(false)) err_ << "peerconf: cleanup: " << problem << "\n";
  }
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
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = job->dir + "/mpirun.log";

  // The ranks share this process's mocked-runtime job (rank 0 reads it and broadcasts it), so
  // that the sweep after the job (sweepStaleSegments, which removes only its own job's
  // segments) finds what killed ranks left.
  if (std::getenv("PEERCONF_MOCK_JOB") == nullptr) {
    char jobText[24];
    std::snprintf(jobText, sizeof jobText, "%llx",
                  static_cast<unsigned long long>(mock_hip::job()));
    ::setenv("PEERCONF_MOCK_JOB", jobText, 0);
  }
  std::cout.flush();
  err_.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group, so a last-resort kill reaches what it started
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    if (in >= 0) ::dup2(in, 0);
    ::execvp("mpirun", argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  job->mpirun = pid;
  job->lastProgress = Clock::now();
  job_ = std::move(job);
}

namespace {

// Reaps every child that has ended; notes mpirun's status.
void reap(pid_t mpirun, bool& exited, int& status) {
  for (;;) {
    int st = 0;
    const pid_t pid = ::waitpid(-1, &st, WNOHANG);
    if (pid <= 0) return;
    if (pid == mpirun) {
      exited = true;
      status = st;
    }
  }
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

std::vector<std::string> Supervisor::endJob(bool waitForExit) {
  Job& job = *job_;
  std::vector<std::string> problems;
  auto waitUntil = [&](Clock::time_point limit, auto done) {
    while (!done() && Clock::now() < limit) {
      reap(job.mpirun, job.exited, job.status);
      if (done()) break;
      std::this_thread::sleep_for(kPoll);
    }
    reap(job.mpirun, job.exited, job.status);
    return done();
  };

  if (waitForExit) waitUntil(Clock::now() + kExitLimit, [&] { return job.exited; });

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
  if (!waitUntil(Clock::now() + kKillLimit, [&] { return job.exited; })) {
    problems.push_back("mpirun (pid " + std::to_string(job.mpirun) +
                       ") did not exit once its ranks were killed; killed its process group");
    ::kill(-job.mpirun, SIGKILL);
    waitUntil(Clock::now() + kKillLimit, [&] { return job.exited; });
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
  waitUntil(Clock::now() + kKillLimit, [&] {
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
  job_.reset();
  return problems;
}

RunRecord Supervisor::run(const Scenario& scenario, std::uint64_t seed, Runtime runtime) {
  const std::size_t index = next_;
  if (!job_) startJob();
  ++next_;
  Job& job = *job_;
  const int n = scenario.ranks;
  const auto bound = runBound(scenario);

  RunRecord record;
  record.scenario = scenario;
  record.launcher = "mpi --kill-mode signal";
  record.runtime = toString(runtime);
  record.seed = seed;

  // Wait until every rank has a result or a stop marker, the bound (+ kGrace) has passed since the
  // scenario started, or mpirun is gone.
  std::vector<Stream> streams(static_cast<std::size_t>(n));
  std::vector<bool> hasResult(static_cast<std::size_t>(n), false);
  std::optional<std::int64_t> startNs;
  enum class End { kComplete, kBound, kNoStart, kMpirunGone } end = End::kComplete;
  for (;;) {
    reap(job.mpirun, job.exited, job.status);
    const bool gone = job.exited;  // read the files once more after mpirun ended
    bool complete = true;
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (!hasResult[i]) hasResult[i] = exists(job.dir + "/" + itemName(index, r, "result"));
      if (hasResult[i]) continue;
      streams[i] = readStream(job.dir + "/" + itemName(index, r, "events"));
      if (streams[i].found && (!startNs || streams[i].startNs < *startNs)) {
        startNs = streams[i].startNs;
      }
      if (!streams[i].stopped) complete = false;
    }
    if (complete) break;
    const auto now = Clock::now();
    if (gone) {
      end = End::kMpirunGone;
      break;
    }
    if (startNs &&
        steadyNs(now) - *startNs >=
            std::chrono::duration_cast<std::chrono::nanoseconds>(bound + kGrace).count()) {
      end = End::kBound;
      break;
    }
    if (!startNs && now - job.lastProgress > kStartLimit) {
      end = End::kNoStart;
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  const auto completedAt = Clock::now();

  std::set<std::string> fired;
  std::vector<std::string> stops;
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    RankResult result;
    result.rank = r;
    bool read = false;
    if (hasResult[i]) {
      try {
        const auto text = readFile(job.dir + "/" + itemName(index, r, "result"));
        const json j = json::parse(text.value_or(""));
        result = rankResultFromJson(j);
        for (const auto& site : j.at("fired")) fired.insert(site.get<std::string>());
        read = true;
      } catch (const std::exception& e) {
        record.harnessErrors.push_back("rank " + std::to_string(r) +
                                       " wrote an unreadable result: " + e.what());
      }
      streams[i] = readStream(job.dir + "/" + itemName(index, r, "events"));
      if (streams[i].found && (!startNs || streams[i].startNs < *startNs)) {
        startNs = streams[i].startNs;
      }
    }
    if (!read) {
      const Stream& stream = streams[i];
      result.rank = r;
      result.events = stream.events;
      result.endNs = stream.events.empty() ? 0 : stream.events.back().tNs;
      if (stream.stopped) {
        result.status = *stream.stopped;
        const bool dead = result.status == RankStatus::kDead;
        // The rank streams its stop before it raises the signal, so the supervisor can get here
        // first: give the kernel a bounded moment to carry the signal out before judging.
        auto settled = [dead](char s) {
          return dead ? (s == 0 || s == 'Z' || s == 'X') : s == 'T';
        };
        char state = processState(stream.pid);
        for (int poll = 0; !settled(state) && poll < 200; ++poll) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          state = processState(stream.pid);
        }
        std::string seen =
            dead ? (state == 0 || state == 'Z' || state == 'X'
                        ? "process gone"
                        : "process still there, state " + std::string(1, state))
                 : (state == 'T' ? "process stopped (state T)"
                                 : "process not stopped, state " +
                                       std::string(state == 0 ? "gone" : std::string(1, state)));
        result.message = "stopped at " + stream.stopAt + " by " + (dead ? "SIGKILL" : "SIGSTOP") +
                         " (pid " + std::to_string(stream.pid) + ": " + seen + ")";
        const bool real = dead ? (state == 0 || state == 'Z' || state == 'X') : state == 'T';
        if (!real) {
          record.harnessErrors.push_back("rank " + std::to_string(r) + " " + result.message);
        }
        stops.push_back("rank " + std::to_string(r) + " " + (dead ? "SIGKILLed" : "SIGSTOPped") +
                        " at " + stream.stopAt);
        // The outcome the rank could not record itself, as the simulated modes record it.
        result.events.push_back(
            {result.endNs, r, EventKind::kOutcome, toString(result.status), -1, result.message});
        for (const Event& e : stream.events) {
          if (e.kind == EventKind::kFault) fired.insert(e.what);
        }
      } else {
        result.status = RankStatus::kMissing;
        result.message = stream.found ? "no result (last event streamed is kept)"
                                      : "nothing came back from this rank";
      }
    }
    record.ranks.push_back(std::move(result));
  }
  record.firedSites.assign(fired.begin(), fired.end());
  const std::int64_t origin = startNs.value_or(steadyNs(job.lastProgress));
  record.wallNs = steadyNs(completedAt) - origin;

  const std::string logPath = job.dir + "/mpirun.log";
  switch (end) {
    case End::kComplete:
      break;
    case End::kBound:
      record.harnessErrors.push_back("not every rank reported within the run's bound + " +
                                     std::to_string(kGrace.count()) + " s; job ended");
      break;
    case End::kNoStart:
      record.harnessErrors.push_back("mpirun did not start this scenario within " +
                                     std::to_string(kStartLimit.count()) + " s; job ended");
      break;
    case End::kMpirunGone:
      record.harnessErrors.push_back("mpirun ended (" + describeStatus(job.status) +
                                     ") before every rank reported; its log ends:\n" +
                                     lastLines(readFile(logPath).value_or(""), 15));
      break;
  }

  // A job whose ranks were stopped cannot go on (its world collectives never complete): end it,
  // as any job that failed, and the last one.
  const bool last = index + 1 >= options_.total;
  const bool stopPlanned = plansStoppedRanks(scenario);
  if (stopPlanned || end != End::kComplete || last) {
    const std::string pids = [&] {
      std::string out;
      for (const auto& s : streams) {
        if (s.pid > 0) out += (out.empty() ? "" : ",") + std::to_string(s.pid);
      }
      return out;
    }();
    const auto problems = endJob(!stopPlanned && end == End::kComplete);
    for (const auto& problem : problems) record.harnessErrors.push_back("cleanup: " + problem);
    if (stopPlanned) {
      std::string line = "peerconf: [signal] " + scenario.name + ":";
      for (const auto& s : stops) line += " " + s + ";";
      line += " job ended, ranks killed and reaped, /dev/shm swept" +
              std::string(problems.empty() ? ", nothing left" : ", LEFTOVERS") + "; reported " +
              std::to_string((steadyNs(Clock::now()) - origin) / 1000000) + " ms after the start";
      err_ << line << "\n";
      // Every rank's last state: its outcome, and the last thing it did before it.
      for (const RankResult& rank : record.ranks) {
        err_ << "    rank " << rank.rank << ": " << toString(rank.status);
        if (!rank.message.empty()) err_ << " (" << rank.message << ")";
        const auto last =
            std::find_if(rank.events.rbegin(), rank.events.rend(),
                         [](const Event& e) { return e.kind != EventKind::kOutcome; });
        if (last != rank.events.rend()) {
          err_ << "; last event " << toString(last->kind) << " " << last->what
               << (last->peer >= 0 ? " (peer " + std::to_string(last->peer) + ")" : "") << " at "
               << last->tNs / 1000000 << " ms";
        }
        err_ << "\n";
      }
    }
  } else {
    job.lastProgress = completedAt;
  }
  const auto reportedNs = steadyNs(Clock::now()) - origin;
  const auto limit = std::chrono::duration_cast<std::chrono::nanoseconds>(bound + kReportSlack);
  if (reportedNs > limit.count()) {
    record.harnessErrors.push_back("reported " + std::to_string(reportedNs / 1000000) +
                                   " ms after the start, past the bound + " +
                                   std::to_string(kReportSlack.count()) + " s (" +
                                   std::to_string(limit.count() / 1000000) + " ms)");
  }
  return record;
}

}  // namespace peerconf::harness
