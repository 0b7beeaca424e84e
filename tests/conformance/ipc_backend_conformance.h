// The IpcBackend conformance suite, written once (ipc_backend_conformance.cc) and instantiated per
// implementation: the mocked HIP runtime with ranks as threads and as forked processes, and the
// CUDA / ROCm builds of the GPU backend with ranks as forked processes (GPU IPC handles cannot be
// opened by the process that exported them, and a process must not use the GPU runtime before
// fork, so the test process itself never touches the GPU).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
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
  // This rank's backend (device = rank), created on first use.
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

 private:
  int rank_;
  int size_;
  const Implementation& impl_;
  Channel& channel_;
  std::unique_ptr<IpcBackend> backend_;
  std::vector<std::string> failures_;
};

#define RANK_CHECK(r, cond) (r).check(static_cast<bool>(cond), #cond, __LINE__)

// Runs `body` on `nranks` ranks placed as the implementation says. Returns every rank's failures,
// indexed by rank: a body's failed checks, an exception that escaped it, a rank that died or
// overran its deadline, and anything the rank's device still holds after a body that completed.
using RankBody = std::function<void(Rank&)>;
std::vector<std::vector<std::string>> runRanks(const Implementation& impl, int nranks,
                                               const RankBody& body);

// hipGetDeviceCount as the ranks would see it (asked from a child process for kProcesses).
hip::DeviceCount probeDevices(const Implementation& impl);

// The BackendError `f` throws, or nullopt when it returns. Other exceptions propagate.
template <typename F>
std::optional<BackendError> backendErrorOf(F&& f) {
  try {
    f();
  } catch (const BackendError& e) {
    return e;
  }
  return std::nullopt;
}

class IpcBackendConformance : public ::testing::TestWithParam<Implementation> {
 protected:
  // Empty when `n` devices are present, else why the test is skipped.
  std::string missingDevices(int n) const;
  // Runs the body and reports every rank's failures, labelled by rank.
  void run(int nranks, const RankBody& body);
};

// Skips the current test (with hipGetDeviceCount's answer) unless `n` devices are present.
#define CONFORMANCE_REQUIRE_DEVICES(n)                                                \
  do {                                                                                \
    if (const std::string why = missingDevices(n); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

std::string implementationName(const ::testing::TestParamInfo<Implementation>& info);

}  // namespace peerconf::conformance
