// Runs a body on several ranks: as threads of this process (channels over queues), or as forked
// processes (channels over pipes, reports sent back over a pipe).
#include "ranks.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace peerconf::conformance {

namespace {

using SteadyClock = std::chrono::steady_clock;
// Every wait of a test is bounded: a rank waiting on a peer that failed gives up.
constexpr std::chrono::seconds kRankDeadline{30};
constexpr char kSeparator = '\x1e';
// Marks an observation in a forked rank's report (failures are sent unmarked).
constexpr char kObservation = '\x1f';

std::string describeCurrentException() {
  try {
    throw;
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected non-standard exception";
  }
}

// Runs the body and the post-body leak check for one rank, whatever its placement.
void runRank(Rank& rank, const RankBody& body) {
  bool completed = false;
  try {
    body(rank);
    completed = true;
  } catch (...) {
    rank.fail(describeCurrentException());
  }
  if (!completed || !rank.backendCreated()) return;
  if (const auto n = rank.liveAllocations(); n && *n != 0) {
    rank.fail("leak: device still holds " + std::to_string(*n) + " allocation(s)");
  }
  if (const auto n = rank.liveMappings(); n && *n != 0) {
    rank.fail("leak: device still holds " + std::to_string(*n) + " mapping(s)");
  }
}

// ---- Ranks as threads --------------------------------------------------------------------------

class QueueChannel final : public Channel {
 public:
  void send(int from, int to, const void* data, std::size_t size) override {
    const auto* bytes = static_cast<const char*>(data);
    {
      std::lock_guard lock(mu_);
      queues_[{from, to}].emplace_back(bytes, bytes + size);
    }
    cv_.notify_all();
  }

  void recv(int from, int to, void* data, std::size_t size) override {
    std::unique_lock lock(mu_);
    auto& queue = queues_[{from, to}];
    if (!cv_.wait_for(lock, kRankDeadline, [&] { return !queue.empty(); })) {
      throw std::runtime_error("rank " + std::to_string(to) + " timed out waiting for rank " +
                               std::to_string(from));
    }
    std::vector<char> message = std::move(queue.front());
    queue.pop_front();
    if (message.size() != size) throw std::runtime_error("message of unexpected size");
    std::memcpy(data, message.data(), size);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> queues_;
};

std::vector<RankReport> runThreads(const Implementation& impl, int nranks, const RankBody& body) {
  QueueChannel channel;
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < nranks; ++r)
    ranks.push_back(std::make_unique<Rank>(r, nranks, impl, channel));
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] { runRank(*ranks[static_cast<std::size_t>(r)], body); });
  }
  for (auto& t : threads) t.join();
  std::vector<RankReport> reports;
  for (auto& rank : ranks) reports.push_back({rank->failures(), rank->observations()});
  return reports;
}

// ---- Ranks as processes ------------------------------------------------------------------------

void writeAll(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("pipe write: ") + std::strerror(errno));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Reads until `size` bytes, EOF (returns the count so far) or the deadline (throws).
std::size_t readUntil(int fd, void* data, std::size_t size, SteadyClock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) throw std::runtime_error("deadline passed waiting on a pipe");
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) continue;
    const ssize_t n = ::read(fd, p + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("pipe read: ") + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

struct Pipe {
  int read = -1;
  int write = -1;
};

Pipe makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  return {fds[0], fds[1]};
}

class PipeChannel final : public Channel {
 public:
  explicit PipeChannel(const std::vector<std::vector<Pipe>>& pipes) : pipes_(pipes) {}

  void send(int from, int to, const void* data, std::size_t size) override {
    writeAll(pipes_[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)].write, data,
             size);
  }

  void recv(int from, int to, void* data, std::size_t size) override {
    const int fd = pipes_[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)].read;
    if (readUntil(fd, data, size, SteadyClock::now() + kRankDeadline) != size) {
      throw std::runtime_error("rank " + std::to_string(from) + " closed its pipe to rank " +
                               std::to_string(to));
    }
  }

 private:
  const std::vector<std::vector<Pipe>>& pipes_;
};

std::vector<RankReport> runProcesses(const Implementation& impl, int nranks, const RankBody& body) {
  const auto n = static_cast<std::size_t>(nranks);
  std::vector<std::vector<Pipe>> pipes(n, std::vector<Pipe>(n));
  for (auto& row : pipes) {
    for (auto& p : row) p = makePipe();
  }
  std::vector<Pipe> results(n);
  for (auto& p : results) p = makePipe();

  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids(n, -1);
  for (std::size_t r = 0; r < n; ++r) {
    pids[r] = ::fork();
    if (pids[r] < 0) throw std::runtime_error("fork failed");
    if (pids[r] == 0) {
      for (std::size_t other = 0; other < n; ++other) {
        if (other != r) ::close(results[other].write);
      }
      PipeChannel channel(pipes);
      Rank rank(static_cast<int>(r), nranks, impl, channel);
      runRank(rank, body);
      std::string report;
      for (const auto& f : rank.failures()) report += f + kSeparator;
      for (const auto& o : rank.observations()) report += kObservation + o + kSeparator;
      try {
        writeAll(results[r].write, report.data(), report.size());
      } catch (...) {
      }
      ::_exit(0);  // no atexit handlers, no gtest teardown in the child
    }
  }
  for (auto& p : results) ::close(p.write);

  std::vector<RankReport> reports(n);
  const auto deadline = SteadyClock::now() + 2 * kRankDeadline;
  for (std::size_t r = 0; r < n; ++r) {
    std::string report;
    try {
      std::array<char, 4096> buffer;
      while (true) {
        const std::size_t got = readUntil(results[r].read, buffer.data(), buffer.size(), deadline);
        report.append(buffer.data(), got);
        if (got < buffer.size()) break;
      }
    } catch (const std::exception& e) {
      reports[r].failures.push_back(std::string("no result from the rank: ") + e.what());
      ::kill(pids[r], SIGKILL);
    }
    for (std::size_t start = 0, end; (end = report.find(kSeparator, start)) != std::string::npos;
         start = end + 1) {
      std::string item = report.substr(start, end - start);
      if (!item.empty() && item.front() == kObservation) {
        reports[r].observations.push_back(item.substr(1));
      } else {
        reports[r].failures.push_back(std::move(item));
      }
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    int status = 0;
    ::waitpid(pids[r], &status, 0);
    if (WIFSIGNALED(status)) {
      reports[r].failures.push_back("rank process died of signal " +
                                    std::to_string(WTERMSIG(status)));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      reports[r].failures.push_back("rank process exited with " +
                                    std::to_string(WEXITSTATUS(status)));
    }
    ::close(results[r].read);
  }
  for (auto& row : pipes) {
    for (auto& p : row) {
      ::close(p.read);
      ::close(p.write);
    }
  }
  return reports;
}

}  // namespace

// ---- Rank --------------------------------------------------------------------------------------

IpcBackend& Rank::backend() {
  if (!backend_) backend_ = impl_.make(device(), rank_);
  return *backend_;
}

void Rank::sendHandle(int to, const IpcHandle& handle) {
  channel_.send(rank_, to, handle.bytes.data(), IpcHandle::kSize);
}

IpcHandle Rank::recvHandle(int from) {
  IpcHandle handle;
  channel_.recv(from, rank_, handle.bytes.data(), IpcHandle::kSize);
  return handle;
}

void Rank::signal(int to) {
  const char token = 's';
  channel_.send(rank_, to, &token, 1);
}

void Rank::wait(int from) {
  char token = 0;
  channel_.recv(from, rank_, &token, 1);
}

void Rank::barrier() {
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) signal(r);
  }
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) wait(r);
  }
}

std::optional<int> Rank::liveAllocations() const {
  if (!impl_.liveAllocations) return std::nullopt;
  return impl_.liveAllocations(device());
}

std::optional<int> Rank::liveMappings() const {
  if (!impl_.liveMappings) return std::nullopt;
  return impl_.liveMappings(device());
}

void Rank::check(bool ok, const char* what, int line) {
  if (!ok) failures_.push_back("line " + std::to_string(line) + ": check failed: " + what);
}

// ---- Runner, probe --------------------------------------------------------------------

std::vector<RankReport> runRanks(const Implementation& impl, int nranks, const RankBody& body) {
  if (impl.beforeRanks) impl.beforeRanks();
  return impl.placement == Placement::kThreads ? runThreads(impl, nranks, body)
                                               : runProcesses(impl, nranks, body);
}

hip::DeviceCount probeDevices(const Implementation& impl) {
  static std::mutex mu;
  static std::map<std::string, hip::DeviceCount> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(impl.name); it != cache.end()) return it->second;
  hip::DeviceCount count;
  if (impl.placement == Placement::kThreads) {
    count = impl.deviceCount();
  } else {
    const Pipe pipe = makePipe();
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      const hip::DeviceCount child = impl.deviceCount();
      const std::string report = std::to_string(child.count) + kSeparator +
                                 std::to_string(child.code) + kSeparator + child.text;
      try {
        writeAll(pipe.write, report.data(), report.size());
      } catch (...) {
      }
      ::_exit(0);
    }
    ::close(pipe.write);
    std::string report;
    std::array<char, 512> buffer;
    try {
      while (true) {
        const std::size_t got =
            readUntil(pipe.read, buffer.data(), buffer.size(), SteadyClock::now() + kRankDeadline);
        report.append(buffer.data(), got);
        if (got < buffer.size()) break;
      }
    } catch (const std::exception& e) {
      ::kill(pid, SIGKILL);
      report.clear();
    }
    ::close(pipe.read);
    ::waitpid(pid, nullptr, 0);
    const auto first = report.find(kSeparator);
    const auto second = report.find(kSeparator, first == std::string::npos ? first : first + 1);
    if (first == std::string::npos || second == std::string::npos) {
      count = {0, -1, "the probe process gave no answer"};
    } else {
      count.count = std::stoi(report.substr(0, first));
      count.code = std::stoi(report.substr(first + 1, second - first - 1));
      count.text = report.substr(second + 1);
    }
  }
  cache.emplace(impl.name, count);
  return count;
}

void PrintTo(const Implementation& impl, std::ostream* out) { *out << impl.name; }

}  // namespace peerconf::conformance
