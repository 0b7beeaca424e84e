// Isolation: fork, events through a ring in shared memory, the scenario there and the record back
// over a socket in binary frames, and a judgement of how the child ended.
#include "launch/isolation.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "launch/interrupt.h"
#include "launch/kept_thread.h"
#include "mock_hip/control.h"
#include "model/record_binary.h"

namespace peerconf::harness::launch {

using model::Event;
using model::EventKind;
using model::plannedBound;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;

// Where the child's events go as they are recorded: a ring in memory shared with the parent
// (mapped before the fork), so that streaming costs the child no system call and the parent no
// wake-up, and a crash keeps every event committed before it.
//
// Each event is one entry: a fixed header (sizes, time, rank, kind, peer) and the bytes of
// `what` and `detail`. An entry is committed by advancing `written` once its bytes are in place.
// When the ring is full, the oldest entries are given up: `oldest` moves past them *before*
// their bytes are overwritten, so [oldest, written) always holds whole committed entries, even
// when the process dies in the middle of an append. The parent reads the ring only while the
// child is idle or once it is reaped.
class EventRing {
 public:
  static constexpr std::size_t kCapacity = std::size_t{8} << 20;  // pages are touched as used

  EventRing() {
    void* base = ::mmap(nullptr, sizeof(Header) + kCapacity, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      throw std::runtime_error(std::string("mmap of the event ring: ") + std::strerror(errno));
    }
    header_ = new (base) Header;
    data_ = static_cast<char*>(base) + sizeof(Header);
  }
  ~EventRing() { ::munmap(header_, sizeof(Header) + kCapacity); }
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  // Parent, while the child is idle (before a run).
  void reset() {
    header_->oldest.store(0, std::memory_order_relaxed);
    header_->written.store(0, std::memory_order_relaxed);
    header_->dropped = false;
  }

  // Child: appends one event; callers serialize (the sink holds a mutex).
  void append(const Event& event) {
    const EntryHeader head{static_cast<std::uint32_t>(event.what.size()),
                           static_cast<std::uint32_t>(event.detail.size()),
                           event.tNs,
                           event.rank,
                           static_cast<std::int32_t>(event.kind),
                           event.peer,
                           event.fault,
                           event.buffer};
    const std::uint64_t size = sizeof head + head.whatSize + head.detailSize;
    if (size > kCapacity / 2) {
      header_->dropped = true;
      return;
    }
    const std::uint64_t written = header_->written.load(std::memory_order_relaxed);
    std::uint64_t oldest = header_->oldest.load(std::memory_order_relaxed);
    if (written + size - oldest > kCapacity) {
      while (written + size - oldest > kCapacity) {
        EntryHeader gone{};
        copyOut(oldest, &gone, sizeof gone);
        oldest += sizeof gone + gone.whatSize + gone.detailSize;
      }
      header_->oldest.store(oldest, std::memory_order_relaxed);
      // Given up before overwritten (see above): no store below may move ahead of this one.
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    copyIn(written, &head, sizeof head);
    copyIn(written + sizeof head, event.what.data(), head.whatSize);
    copyIn(written + sizeof head + head.whatSize, event.detail.data(), head.detailSize);
    header_->written.store(written + size, std::memory_order_release);
  }

  // Child: whether the ring holds every event of this run as recorded (none dropped, none given
  // up), so that the record need not carry them again.
  bool exact() const {
    return !header_->dropped && header_->oldest.load(std::memory_order_relaxed) == 0;
  }

  // Parent, once the child is idle or reaped: every entry still in the ring, oldest first.
  std::vector<Event> read() const {
    const std::uint64_t written = header_->written.load(std::memory_order_acquire);
    std::uint64_t at = header_->oldest.load(std::memory_order_acquire);
    std::vector<Event> events;
    while (at < written) {
      EntryHeader head{};
      copyOut(at, &head, sizeof head);
      const std::uint64_t size = sizeof head + head.whatSize + head.detailSize;
      if (size > written - at) break;  // cannot happen for committed entries
      Event event;
      event.tNs = head.tNs;
      event.rank = head.rank;
      event.kind = static_cast<EventKind>(head.kind);
      event.peer = head.peer;
      event.fault = head.fault;
      event.buffer = head.buffer;
      event.what.resize(head.whatSize);
      event.detail.resize(head.detailSize);
      copyOut(at + sizeof head, event.what.data(), head.whatSize);
      copyOut(at + sizeof head + head.whatSize, event.detail.data(), head.detailSize);
      events.push_back(std::move(event));
      at += size;
    }
    return events;
  }

 private:
  struct Header {
    std::atomic<std::uint64_t> oldest{0};   // first byte of the oldest whole entry
    std::atomic<std::uint64_t> written{0};  // one past the last committed entry
    bool dropped = false;                   // an event too large for the ring was left out
  };
  struct EntryHeader {
    std::uint32_t whatSize;
    std::uint32_t detailSize;
    std::int64_t tNs;
    std::int32_t rank;
    std::int32_t kind;
    std::int32_t peer;
    std::int32_t fault;
    std::int32_t buffer;
  };
  // An entry holds every field of Event: this stops compiling when Event gains or loses one, so
  // that a new field cannot silently go missing on its way through the ring.
  [[maybe_unused]] static void holdsEveryField(const Event& event) {
    [[maybe_unused]] const auto& [tNs, rank, kind, what, peer, detail, fault, buffer] = event;
  }
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

  // Bytes at ring position `at` (a running count: the ring index is at % kCapacity).
  void copyIn(std::uint64_t at, const void* from, std::size_t n) {
    const auto index = static_cast<std::size_t>(at % kCapacity);
    const std::size_t first = std::min(n, kCapacity - index);
    std::memcpy(data_ + index, from, first);
    std::memcpy(data_, static_cast<const char*>(from) + first, n - first);
  }
  void copyOut(std::uint64_t at, void* to, std::size_t n) const {
    const auto index = static_cast<std::size_t>(at % kCapacity);
    const std::size_t first = std::min(n, kCapacity - index);
    std::memcpy(to, data_ + index, first);
    std::memcpy(static_cast<char*>(to) + first, data_, n - first);
  }

  Header* header_ = nullptr;
  char* data_ = nullptr;
};

namespace {

using SteadyClock = std::chrono::steady_clock;

// Whole `text` to a socket; false when the other end is gone (never SIGPIPE).
bool sendAll(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// What crosses the socket: frames of a kind and a length, the payload binary (record_binary.h):
// a case is no text (JSON stays the traces' and reports' format).
enum class FrameKind : std::uint32_t {
  kRequest = 1,  // parent -> reused child: the seed, the scenario
  kRecord = 2,   // child -> parent: the child's times, whether the events are in the ring, record
  kError = 3,    // child -> parent: why there is no record (text)
};
struct FrameHeader {
  FrameKind kind;
  std::uint32_t reserved;
  std::uint64_t bytes;
};

std::string frame(FrameKind kind, const std::string& payload) {
  const FrameHeader head{kind, 0, payload.size()};
  std::string out(reinterpret_cast<const char*>(&head), sizeof head);
  out += payload;
  return out;
}

// Frames from a socket, each read only once it is whole (a partial last frame of a crashed writer
// is never decoded). The parent's reader also wakes at an interrupt (interrupt.h).
class FrameReader {
 public:
  explicit FrameReader(int fd, int wakeFd = -1) : fd_(fd), wakeFd_(wakeFd) {}

  enum class Status { kFrame, kEof, kTimeout, kInterrupted };

  // The next frame's kind and payload, waiting until `deadline` (nullopt: for ever).
  Status next(FrameKind& kind, std::string& payload,
              std::optional<SteadyClock::time_point> deadline) {
    for (;;) {
      if (buffer_.size() >= sizeof(FrameHeader)) {
        FrameHeader head{};
        std::memcpy(&head, buffer_.data(), sizeof head);
        if (buffer_.size() - sizeof head >= head.bytes) {
          kind = head.kind;
          payload.assign(buffer_, sizeof head, head.bytes);
          buffer_.erase(0, sizeof head + head.bytes);
          return Status::kFrame;
        }
      }
      int timeout = -1;
      if (deadline) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(*deadline - SteadyClock::now()).count();
        if (left <= 0) return Status::kTimeout;
        timeout = static_cast<int>(std::min<long long>(left, 1 << 30));
      }
      pollfd p[2] = {{fd_, POLLIN, 0}, {wakeFd_, POLLIN, 0}};
      const int ready = ::poll(p, wakeFd_ >= 0 ? 2 : 1, timeout);
      if (wakeFd_ >= 0 && (p[1].revents & POLLIN) != 0) return Status::kInterrupted;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return Status::kTimeout;
      char chunk[65536];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::kEof;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  int wakeFd_;
  std::string buffer_;
};

// The child's side: whole frames only (threads share the socket).
class FrameWriter {
 public:
  explicit FrameWriter(int fd) : fd_(fd) {}
  void write(FrameKind kind, const std::string& payload) {
    const std::string bytes = frame(kind, payload);
    std::lock_guard lock(mutex_);
    if (!sendAll(fd_, bytes)) ::_exit(3);  // the parent is gone: nobody to report to
  }

 private:
  int fd_;
  std::mutex mutex_;
};

// A record frame's payload: the child's times, whether the events are in the ring, the record.
struct ChildTimes {
  std::int64_t setupNs = 0;   // from the request read to the ranks' start
  std::int64_t runNs = 0;     // the ranks
  std::int64_t recordNs = 0;  // the record made, the mock reset, the frame encoded
};

std::string recordPayload(const ChildTimes& times, bool eventsInRing, const RunRecord& record) {
  std::string out(reinterpret_cast<const char*>(&times), sizeof times);
  out += eventsInRing ? '\1' : '\0';
  model::encodeBinary(record, out);
  return out;
}

std::uint64_t newJob() {
  static std::mt19937_64 random{std::random_device{}()};
  std::uint64_t job = 0;
  while (job == 0) job = random();
  return job;
}

// What a child does first: its own job (its handles are refused in other children), no core file.
void enterChild(std::uint64_t job) {
  const rlimit noCore{0, 0};
  ::setrlimit(RLIMIT_CORE, &noCore);
  mock_hip::setJob(job);
}

std::int64_t nsSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t).count();
}

// One run inside the child: events go to the ring as they happen, then the record to `writer`.
// The record leaves out what the parent has already: the scenario, and the events when the
// ring holds exactly the events of every rank (the same count a rank, none cut or overwritten).
// `received`: when the request came (the child's setup counts from there).
void runAndReport(FrameWriter& writer, EventRing& ring, const Scenario& scenario,
                  std::uint64_t seed, LaunchOptions options, const LaunchFunction& launch,
                  SteadyClock::time_point received) {
  struct Streamed {
    std::mutex mutex;
    std::vector<std::size_t> perRank;
  };
  auto streamed = std::make_shared<Streamed>();  // rank threads may outlive this call
  streamed->perRank.assign(static_cast<std::size_t>(std::max(scenario.ranks, 0)), 0);
  options.eventSink = [&ring, streamed](const Event& event) {
    std::lock_guard lock(streamed->mutex);
    ring.append(event);
    const auto rank = static_cast<std::size_t>(event.rank);
    if (rank >= streamed->perRank.size()) streamed->perRank.resize(rank + 1, 0);
    ++streamed->perRank[rank];
  };
  RunRecord record;
  const std::int64_t beforeNs = nsSince(received);
  setLastRunPhases({});
  const auto launched = SteadyClock::now();
  try {
    record = launch(scenario, seed, options);
  } catch (const std::exception& e) {
    writer.write(FrameKind::kError, std::string("the launcher threw: ") + e.what());
    ::_exit(4);
  }
  RunPhases phases = lastRunPhases();
  if (phases.runNs == 0) phases.runNs = nsSince(launched);  // a launcher that does not say
  const auto reporting = SteadyClock::now();
  record.scenario = Scenario{};
  bool eventsInRing = false;
  {
    std::lock_guard lock(streamed->mutex);
    eventsInRing =
        ring.exact() &&
        std::all_of(record.ranks.begin(), record.ranks.end(), [&](const RankResult& rank) {
          const auto r = static_cast<std::size_t>(rank.rank);
          return rank.events.size() == (r < streamed->perRank.size() ? streamed->perRank[r] : 0);
        });
    if (eventsInRing) {
      for (RankResult& rank : record.ranks) rank.events.clear();
    }
  }
  ChildTimes times;
  times.setupNs = beforeNs + phases.setupNs;
  times.runNs = phases.runNs;
  // The record's own time: the launcher's after the ranks, and encoding it (this frame's times
  // are taken before its bytes are: the encoding of the last is not counted).
  times.recordNs = phases.recordNs + nsSince(reporting);
  writer.write(FrameKind::kRecord, recordPayload(times, eventsInRing, record));
}

// Puts the ring's events back into a record sent without them, rank by rank, in order.
void restoreEvents(RunRecord& record, const EventRing& ring) {
  std::map<int, std::vector<Event>> byRank;
  for (Event& event : ring.read()) byRank[event.rank].push_back(std::move(event));
  for (RankResult& rank : record.ranks) rank.events = std::move(byRank[rank.rank]);
}

// What the parent heard from one run.
struct Heard {
  std::optional<RunRecord> record;
  bool eventsInRing = false;  // the record came without its events: they are in the ring
  ChildTimes times;           // with the record: where the child's time went
  std::int64_t decodeNs = 0;  // the record's decoding here
  std::vector<Event> events;  // from the ring, when there is no record
  std::string error;          // a message the child sent instead of a record
  bool eof = false;
  bool timedOut = false;
  bool interrupted = false;  // an interrupt came first (interrupt.h): the run is abandoned
};

// Reads until the record (then stops: a worker stays for the next run), EOF or `deadline`.
Heard listen(FrameReader& reader, SteadyClock::time_point deadline) {
  Heard heard;
  std::string payload;
  FrameKind kind{};
  for (;;) {
    const FrameReader::Status status = reader.next(kind, payload, deadline);
    if (status == FrameReader::Status::kEof) {
      heard.eof = true;
      return heard;
    }
    if (status == FrameReader::Status::kTimeout) {
      heard.timedOut = true;
      return heard;
    }
    if (status == FrameReader::Status::kInterrupted) {
      heard.interrupted = true;
      return heard;
    }
    if (kind == FrameKind::kError) {
      heard.error = payload;
      continue;
    }
    try {
      if (kind != FrameKind::kRecord || payload.size() < sizeof(ChildTimes) + 1) {
        throw std::invalid_argument("a frame of kind " +
                                    std::to_string(static_cast<std::uint32_t>(kind)) + " and " +
                                    std::to_string(payload.size()) + " bytes");
      }
      const auto decoding = SteadyClock::now();
      std::memcpy(&heard.times, payload.data(), sizeof heard.times);
      heard.eventsInRing = payload[sizeof heard.times] != 0;
      std::string_view rest(payload);
      rest.remove_prefix(sizeof heard.times + 1);
      heard.record = model::runRecordFromBinary(rest);
      heard.decodeNs = nsSince(decoding);
      return heard;
    } catch (const std::exception& e) {
      heard.error = std::string("unreadable message from the run's process: ") + e.what();
    }
  }
}

std::string signalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  const std::string name =
      abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
  const char* text = ::strsignal(sig);
  return text != nullptr ? name + " (" + text + ")" : name;
}

// How the child ended, as a phrase: "was killed by SIGSEGV (Segmentation fault)".
std::string describeStatus(int status, const Heard& heard, std::chrono::milliseconds limit) {
  if (heard.timedOut) {
    return "did not report within the run's bound + slack (" + std::to_string(limit.count()) +
           " ms) and was killed (SIGKILL)";
  }
  if (WIFSIGNALED(status)) return "was killed by " + signalName(WTERMSIG(status));
  if (WIFEXITED(status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status)) +
           (heard.record ? " after its record" : " without a record");
  }
  return "ended in an unknown state";
}

std::string describeEnd(pid_t pid, int status, const Heard& heard,
                        std::chrono::milliseconds limit) {
  return "(pid " + std::to_string(pid) + ") " + describeStatus(status, heard, limit);
}

std::string lastEventText(const std::vector<Event>& events) {
  if (events.empty()) return "no event";
  const Event& e = events.back();
  std::string text = toString(e.kind) + " " + e.what;
  if (e.peer >= 0) text += " (peer " + std::to_string(e.peer) + ")";
  char at[32];
  std::snprintf(at, sizeof at, " at %.1f ms", static_cast<double>(e.tNs) / 1e6);
  return text + at;
}

// The record of a run whose process ended without one: every rank missing, with what it
// streamed.
RunRecord crashRecord(const Scenario& scenario, std::uint64_t seed, const LaunchOptions& options,
                      const Heard& heard, const std::string& end, std::int64_t wallNs) {
  RunRecord record;
  record.scenario = scenario;
  record.launcher = "threads";
  record.runtime = toString(options.runtime);
  record.seed = seed;
  // The clock the run was on: a crashed run's reproduce line must replay it on the same one
  // (the record's default, real, named the wrong clock after a crash on simulated time).
  record.clock = toString(options.clock);
  record.wallNs = wallNs;
  std::map<int, std::vector<Event>> byRank;
  std::set<std::string> fired;
  for (const Event& e : heard.events) {
    byRank[e.rank].push_back(e);
    if (e.kind == EventKind::kFault) fired.insert(e.what);
  }
  std::string last;
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    RankResult result;
    result.rank = rank;
    result.status = RankStatus::kMissing;
    result.message = "no result: the run's process " + end;
    result.events = std::move(byRank[rank]);
    result.endNs = result.events.empty() ? 0 : result.events.back().tNs;
    last += (rank == 0 ? "" : "; ") + ("rank " + std::to_string(rank) + ": ") +
            lastEventText(result.events);
    record.ranks.push_back(std::move(result));
  }
  record.firedSites.assign(fired.begin(), fired.end());
  std::string error = "the run's process " + end + (heard.timedOut ? "" : " before it reported") +
                      "; last events: " + last;
  if (!heard.error.empty()) error += "; it said: " + heard.error;
  record.harnessErrors.push_back(std::move(error));
  return record;
}

// The record the parent reports for one run: the child's, or that of its end.
RunRecord judgeEnd(const Scenario& scenario, std::uint64_t seed, const LaunchOptions& options,
                   Heard heard, pid_t pid, int status, bool reaped, std::chrono::milliseconds limit,
                   SteadyClock::time_point began) {
  const std::int64_t wallNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - began).count();
  const bool clean = heard.record && (!reaped || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
  if (clean) {
    heard.record->scenario = scenario;  // the parent's own copy, not a round trip
    return std::move(*heard.record);
  }
  const std::string end = describeEnd(pid, status, heard, limit);
  if (heard.record) {
    RunRecord record = std::move(*heard.record);
    record.scenario = scenario;
    record.harnessErrors.push_back("the run's process " + end);
    return record;
  }
  return crashRecord(scenario, seed, options, heard, end, wallNs);
}

void reap(pid_t pid, int& status) {
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Output buffered in this process would be written twice if a child flushed its copy.
void flushBeforeFork() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

// The launcher's wall-time net (wallBounds: several bounds on simulated time) + the slack.
std::chrono::milliseconds childLimit(const Scenario& scenario, ClockMode clock,
                                     std::chrono::milliseconds slack) {
  return plannedBound(scenario) * wallBounds(clock) + slack;
}

// Forks a child joined to this process by a socket pair: fds[0] is the parent's end, fds[1] the
// child's. Returns fork's pid (0 in the child); throws, with nothing left open, when either fails.
pid_t forkWithSocket(int fds[2]) {
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  }
  FiberHosts::stopIdle();  // no kept thread of ours alive across the fork (kept_thread.h)
  flushBeforeFork();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  return pid;
}

}  // namespace

RunRecord runInChild(const Scenario& scenario, std::uint64_t seed, const LaunchOptions& options,
                     const LaunchFunction& launch, std::chrono::milliseconds slack) {
  throwIfInterrupted();
  const std::uint64_t job = newJob();
  EventRing ring;
  const auto began = SteadyClock::now();
  const pid_t parent = ::getpid();
  int fds[2];
  const pid_t pid = forkWithSocket(fds);
  if (pid == 0) {
    ::close(fds[0]);
    leaveInterruptsToParent(parent);
    enterChild(job);
    FrameWriter writer(fds[1]);
    runAndReport(writer, ring, scenario, seed, options, launch, SteadyClock::now());
    ::_exit(0);
  }
  ::close(fds[1]);
  holdChild(pid, SIGKILL);
  const std::chrono::milliseconds limit = childLimit(scenario, options.clock, slack);
  FrameReader reader(fds[0], interruptFd());
  Heard heard = listen(reader, began + limit);
  if (heard.timedOut || heard.interrupted) {
    ::kill(pid, SIGKILL);
  } else if (heard.record) {
    // The child _exits right after its record: wait for its end (bounded, as above).
    std::string rest;
    FrameKind kind{};
    const FrameReader::Status end = reader.next(kind, rest, began + limit);
    if (end == FrameReader::Status::kTimeout || end == FrameReader::Status::kInterrupted) {
      heard.timedOut = end == FrameReader::Status::kTimeout;
      ::kill(pid, SIGKILL);
    }
  }
  int status = 0;
  reap(pid, status);
  releaseChild(pid);
  ::close(fds[0]);
  if (heard.interrupted) throw Interrupted{interruptSignal()};
  if (!heard.record) heard.events = ring.read();
  if (heard.record && heard.eventsInRing) restoreEvents(*heard.record, ring);
  return judgeEnd(scenario, seed, options, std::move(heard), pid, status, true, limit, began);
}

ChildWorker::ChildWorker(LaunchOptions options, std::function<LaunchFunction()> makeLaunch)
    : options_(std::move(options)), makeLaunch_(std::move(makeLaunch)) {}

ChildWorker::~ChildWorker() { stop(); }

void ChildWorker::start() {
  job_ = newJob();
  ring_ = std::make_unique<EventRing>();
  const pid_t parent = ::getpid();
  int fds[2];
  const pid_t pid = forkWithSocket(fds);
  if (pid == 0) {
    ::close(fds[0]);
    leaveInterruptsToParent(parent);
    enterChild(job_);
    const LaunchFunction launch = makeLaunch_();
    FrameWriter writer(fds[1]);
    FrameReader reader(fds[1]);
    std::string payload;
    FrameKind kind{};
    while (reader.next(kind, payload, std::nullopt) == FrameReader::Status::kFrame) {
      const auto received = SteadyClock::now();
      Scenario scenario;
      std::uint64_t seed = 0;
      try {
        if (kind != FrameKind::kRequest || payload.size() < sizeof seed) {
          throw std::invalid_argument("a frame of kind " +
                                      std::to_string(static_cast<std::uint32_t>(kind)));
        }
        std::memcpy(&seed, payload.data(), sizeof seed);
        std::string_view rest(payload);
        rest.remove_prefix(sizeof seed);
        scenario = model::scenarioFromBinary(rest);
      } catch (const std::exception& e) {
        writer.write(FrameKind::kError, std::string("unreadable request: ") + e.what());
        ::_exit(5);
      }
      runAndReport(writer, *ring_, scenario, seed, options_, launch, received);
    }
    ::_exit(0);  // the parent closed its end
  }
  ::close(fds[1]);
  holdChild(pid, SIGKILL);
  pid_ = pid;
  fd_ = fds[0];
  ++started_;
}

void ChildWorker::stop() {
  if (pid_ <= 0) return;
  endChild(true);
}

int ChildWorker::endChild(bool kill) {
  if (kill) ::kill(pid_, SIGKILL);
  int status = 0;
  reap(pid_, status);
  releaseChild(pid_);
  ::close(fd_);
  pid_ = -1;
  fd_ = -1;
  return status;
}

RunRecord ChildWorker::run(const Scenario& scenario, std::uint64_t seed) {
  throwIfInterrupted();
  if (pid_ <= 0) start();
  const auto began = SteadyClock::now();
  const std::chrono::milliseconds limit = childLimit(scenario, options_.clock, kChildSlack);
  FrameReader reader(fd_, interruptFd());
  Heard heard;
  ring_->reset();
  std::string request(sizeof seed, '\0');
  std::memcpy(request.data(), &seed, sizeof seed);
  model::encodeBinary(scenario, request);
  const std::int64_t encodeNs = nsSince(began);
  const auto sent = SteadyClock::now();
  if (sendAll(fd_, frame(FrameKind::kRequest, request))) {
    heard = listen(reader, began + limit);
  } else {
    heard.eof = true;  // the child is gone already
  }
  if (heard.interrupted) {
    stop();  // the run under way is abandoned with its child
    throw Interrupted{interruptSignal()};
  }
  if (heard.record) {
    const bool leftBehind =
        std::any_of(heard.record->ranks.begin(), heard.record->ranks.end(),
                    [](const RankResult& r) { return r.status == RankStatus::kMissing; });
    const pid_t pid = pid_;
    if (leftBehind) stop();  // before reading the ring: an abandoned rank may still write
    const auto restoring = SteadyClock::now();
    if (heard.eventsInRing) restoreEvents(*heard.record, *ring_);
    // The child's times; the way there and back (the wake-ups of both processes) with the
    // record's, as the decoding and the events' restoring.
    const ChildTimes& child = heard.times;
    const std::int64_t waited =
        std::chrono::duration_cast<std::chrono::nanoseconds>(restoring - sent).count() -
        heard.decodeNs;
    const std::int64_t trip = waited - child.setupNs - child.runNs - child.recordNs;
    setLastRunPhases(
        {encodeNs + child.setupNs, child.runNs,
         child.recordNs + std::max<std::int64_t>(trip, 0) + heard.decodeNs + nsSince(restoring)});
    return judgeEnd(scenario, seed, options_, std::move(heard), pid, 0, false, limit, began);
  }
  const pid_t pid = pid_;
  const int status = endChild(heard.timedOut);
  heard.events = ring_->read();
  return judgeEnd(scenario, seed, options_, std::move(heard), pid, status, true, limit, began);
}

}  // namespace peerconf::harness::launch
