// The seam decorators as the launchers stack them (DecoratedBackend, DecoratedGroup in
// harness/launch/rank_launch.h: Recording over Faulty over the real seam), with an empty fault
// plan, through the seams' conformance suites: a decorated seam must behave exactly as the seam it
// wraps. The backend's fault decorator in both of its modes (the mocked runtime's hooks, and at the
// seam as on GPUs), ranks as threads and as processes; the group over ThreadGroup.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "faults/fault_plan.h"
#include "faults/rank_control.h"
#include "group_conformance.h"
#include "ipc_backend_conformance.h"
#include "ipc_backend_mock_hip.h"
#include "launch/rank_launch.h"
#include "mock_hip/control.h"
#include "thread/run_ranks.h"
#include "thread/thread_group.h"

namespace peerconf {
namespace {

// With an empty plan nothing may stop a rank: a call here is a bug of the decorators.
class NoStops : public faults::RankControl {
 public:
  [[noreturn]] void die(int rank, faults::Point) override {
    throw std::logic_error("rank " + std::to_string(rank) + " told to die by an empty plan");
  }
  void hang(int rank, faults::Point) override {
    throw std::logic_error("rank " + std::to_string(rank) + " told to hang by an empty plan");
  }
};

// What a decorated seam needs besides the seam: a log, the rank's (empty) faults, a control.
struct EmptyPlan {
  explicit EmptyPlan(int rank) : log(rank, harness::EventLog::Clock::now()) {
    faults = plan.forRank(rank, log);
  }
  harness::EventLog log;
  faults::FaultPlan plan{{}, 0};
  std::unique_ptr<faults::RankFaults> faults;
  NoStops control;
};

// The mocked runtime's backend under the launchers' decorator stack, as one IpcBackend.
class DecoratedMockBackend : public IpcBackend {
 public:
  DecoratedMockBackend(int device, int rank, harness::Runtime mode)
      : real_(hip_mock::makeHipBackend(device, rank)),
        empty_(rank),
        stack_(*real_, *empty_.faults, empty_.control, mode, empty_.log) {}

  int rank() const override { return real_->rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override { return top().allocUncached(nbytes); }
  DevicePtr allocDevice(std::size_t nbytes) override { return top().allocDevice(nbytes); }
  void freeDeviceMem(DevicePtr ptr) override { top().freeDeviceMem(ptr); }
  IpcHandle getMemHandle(DevicePtr ptr) override { return top().getMemHandle(ptr); }
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override {
    return top().openMemHandle(handle, peer);
  }
  void closeMemHandle(DevicePtr ptr, int peer) override { top().closeMemHandle(ptr, peer); }
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override {
    top().copyToDevice(dst, src, nbytes);
  }
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override {
    top().copyToHost(dst, src, nbytes);
  }

 private:
  IpcBackend& top() { return stack_.top(); }

  std::unique_ptr<IpcBackend> real_;
  EmptyPlan empty_;
  harness::DecoratedBackend stack_;
};

// The mocked runtime's implementation (ipc_backend_mock_hip.h) with the decorated backend.
conformance::Implementation decorated(conformance::Placement placement, harness::Runtime mode,
                                      std::string name) {
  conformance::Implementation impl = conformance::mockHipImplementation(placement, std::move(name));
  impl.make = [mode](int device, int rank) -> std::unique_ptr<IpcBackend> {
    return std::make_unique<DecoratedMockBackend>(device, rank, mode);
  };
  return impl;
}

}  // namespace

namespace conformance {
namespace {

// kMock: FaultyBackend::Mode::kRuntime (hooks in the mocked runtime); kGpu: Mode::kSeam (the
// decorator decides at the seam, as on GPUs), here over the mocked runtime's backend.
INSTANTIATE_TEST_SUITE_P(
    Decorated, IpcBackendConformance,
    ::testing::Values(
        decorated(conformance::Placement::kThreads, harness::Runtime::kMock, "RuntimeModeThreads"),
        decorated(conformance::Placement::kProcesses, harness::Runtime::kMock,
                  "RuntimeModeProcesses"),
        decorated(conformance::Placement::kThreads, harness::Runtime::kGpu, "SeamModeThreads"),
        decorated(conformance::Placement::kProcesses, harness::Runtime::kGpu, "SeamModeProcesses")),
    conformance::implementationName);

}  // namespace
}  // namespace conformance

namespace testing {
namespace {

// ThreadGroup under RecordingGroup -> FaultyGroup, each rank with its own empty plan. The world of
// the run in progress is kept for the abort case (the check sees only the decorated group).
GroupHarness decoratedThreads(int ranks) {
  auto world = std::make_shared<std::shared_ptr<thread::ThreadWorld>>();
  GroupHarness h;
  h.name = "DecoratedThreads" + std::to_string(ranks);
  h.ranks = ranks;
  h.run = [ranks, world](std::chrono::milliseconds deadline, const RankCheck& check) {
    *world = std::make_shared<thread::ThreadWorld>(ranks, deadline);
    const auto outcomes = thread::runRanks(*world, [&](int rank, Group& group) {
      EmptyPlan empty(rank);
      harness::DecoratedGroup stack(group, *empty.faults, empty.control, empty.log);
      check(stack.top());
    });
    ASSERT_EQ(outcomes.size(), static_cast<std::size_t>(ranks));
    for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << outcome;
  };
  h.abort = [world](Group& group, const std::string& why) { (*world)->abort(group.rank(), why); };
  h.shortDeadline = std::chrono::milliseconds(200);
  return h;
}

INSTANTIATE_TEST_SUITE_P(Decorated, GroupConformance,
                         ::testing::Values(decoratedThreads(2), decoratedThreads(3),
                                           decoratedThreads(4), decoratedThreads(8)),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace testing
}  // namespace peerconf
