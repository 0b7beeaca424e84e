// Runs a body on several ranks of one IpcBackend implementation: as threads of this process or as
// forked processes (a GPU IPC handle opens only in another process, and a process must not use the
// GPU runtime before fork, so the calling process never touches the device), each wait bounded by
// a deadline. Used by the IpcBackend conformance suite and by the runtime table program; no gtest.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hip/hip_variants.h"
#include "ipc_backend.h"

namespace peerconf::conformance {

enum class Placement { kThreads, kProcesses };

struct Implementation {
  std::string name;  // test-name suffix
  Placement placement;
  std::function<std::unique_ptr<IpcBackend>(int device, int rank)> make;
  std::function<hip::DeviceCount()> deviceCount;
  // What the runtime still holds for `device` (leak checks); null when the runtime cannot tell.
  std::function<int(int device)> liveAllocations;
  std::function<int(int device)> liveMappings;
  // Runs in the test process before the ranks start (e.g. pins the mock's job id so that forked
  // ranks share it); may be null.
  std::function<void()> beforeRanks;
  // Every rank on device 0 (processes sharing one GPU, as the nightly runs them); else rank r on
  // device r.
  bool sharedDevice = false;
};

// gtest prints the parameter by name, not as bytes.
void PrintTo(const Implementation& impl, std::ostream* out);

// Point-to-point messages between the ranks of one test, each wait bounded by a deadline.
class Channel {
 public:
  virtual ~Channel() = default;
  virtual void send(int from, int to, const void* data, std::size_t size) = 0;
  virtual void recv(int from, int to, void* data, std::size_t size) = 0;
};

// One rank's view inside a test body. Checks record failures instead of aborting the rank so that
// a rank whose peers wait on it still runs to its end.
class Rank {
 public:
  Rank(int rank, int size, const Implementation& impl, Channel& channel)
      : rank_(rank), size_(size), impl_(impl), channel_(channel) {}

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The device this rank uses: 0 when the implementation shares one device, else its rank.
  int device() const { return impl_.sharedDevice ? 0 : rank_; }
  // This rank's backend (on device()), created on first use.
  IpcBackend& backend();
  bool backendCreated() const { return backend_ != nullptr; }

  void sendHandle(int to, const IpcHandle& handle);
  IpcHandle recvHandle(int from);
  void signal(int to);
  void wait(int from);
  // Every rank signals every other rank, then waits for every other rank.
  void barrier();

  // What the runtime holds for this rank's device; nullopt when the implementation cannot tell.
  std::optional<int> liveAllocations() const;
  std::optional<int> liveMappings() const;

  void check(bool ok, const char* what, int line);
  void fail(const std::string& message) { failures_.push_back(message); }
  const std::vector<std::string>& failures() const { return failures_; }
  // What the body saw, for a caller that records behaviour rather than checking it (the runtime
  // table): returned with the failures, in order.
  void observe(const std::string& line) { observations_.push_back(line); }
  const std::vector<std::string>& observations() const { return observations_; }

 private:
  int rank_;
  int size_;
  const Implementation& impl_;
  Channel& channel_;
  std::unique_ptr<IpcBackend> backend_;
  std::vector<std::string> failures_;
  std::vector<std::string> observations_;
};

#define RANK_CHECK(r, cond) (r).check(static_cast<bool>(cond), #cond, __LINE__)

// What one rank reported: its failures (a body's failed checks, an exception that escaped it, a
// rank that died or overran its deadline, anything its device still holds after a body that
// completed) and its observations.
struct RankReport {
  std::vector<std::string> failures;
  std::vector<std::string> observations;
};

// Runs `body` on `nranks` ranks placed as the implementation says. Returns every rank's report,
// indexed by rank.
using RankBody = std::function<void(Rank&)>;
std::vector<RankReport> runRanks(const Implementation& impl, int nranks, const RankBody& body);

// hipGetDeviceCount as the ranks would see it (asked from a child process for kProcesses).
hip::DeviceCount probeDevices(const Implementation& impl);

}  // namespace peerconf::conformance
