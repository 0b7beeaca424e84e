// The seam decorators as the launchers stack them (DecoratedBackend, DecoratedGroup in
// harness/launch/rank_launch.h: Recording over Faulty over the real seam), with an empty fault
// plan, through the seams' conformance suites: a decorated seam must behave exactly as the seam it
// wraps. The backend's fault decorator in both of its modes (the mocked runtime's hooks, and at the
// seam as on GPUs), ranks as threads and as processes; the group over ThreadGroup.
#include <gtest/gtest-spi.h>
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

// What a decorated seam needs besides the seam: a log, the rank's faults (none, but for the
// negative controls), a control.
struct RankPlan {
  explicit RankPlan(int rank, std::vector<faults::FaultSpec> specs = {})
      : log(rank, harness::model::EventLog::Clock::now()), plan(std::move(specs), 0) {
    faults = plan.forRank(rank, log);
  }
  harness::model::EventLog log;
  faults::FaultPlan plan;
  std::unique_ptr<faults::RankFaults> faults;
  NoStops control;
};

// The negative controls' fault: `site` on rank 0, every time.
std::vector<faults::FaultSpec> onRank0(faults::Site site, faults::Point at = {}) {
  faults::FaultSpec spec;
  spec.site = site;
  spec.ranks = {0};
  spec.error = faults::defaultError(site);
  spec.at = at;
  return {spec};
}

// The mocked runtime's backend under the launchers' decorator stack, as one IpcBackend.
class DecoratedMockBackend : public IpcBackend {
 public:
  DecoratedMockBackend(int device, int rank, harness::launch::Runtime mode,
                       std::vector<faults::FaultSpec> faults = {})
      : real_(hip_mock::makeHipBackend(device, rank)),
        plan_(rank, std::move(faults)),
        stack_(*real_, *plan_.faults, plan_.control, mode, plan_.log) {}

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
  RankPlan plan_;
  harness::launch::DecoratedBackend stack_;
};

// The mocked runtime's implementation (ipc_backend_mock_hip.h) with the decorated backend.
conformance::Implementation decorated(conformance::Placement placement,
                                      harness::launch::Runtime mode, std::string name,
                                      std::vector<faults::FaultSpec> faults = {}) {
  conformance::Implementation impl = conformance::mockHipImplementation(placement, std::move(name));
  impl.make = [mode, faults](int device, int rank) -> std::unique_ptr<IpcBackend> {
    return std::make_unique<DecoratedMockBackend>(device, rank, mode, faults);
  };
  return impl;
}

// Negative control: with a planted alloc failure the same decorated backend fails a conformance
// body (in both modes), so the suite's passes above say something.
TEST(DecoratedSeamControl, APlannedAllocFailureFailsTheBackendsConformanceBody) {
  for (const auto mode : {harness::launch::Runtime::kMock, harness::launch::Runtime::kGpu}) {
    const auto impl =
        decorated(conformance::Placement::kThreads, mode, "Control", onRank0(faults::Site::kAlloc));
    if (impl.beforeRanks) impl.beforeRanks();
    const auto failures = conformance::runRanks(impl, 1, [](conformance::Rank& r) {
      const DevicePtr ptr = r.backend().allocUncached(64);
      r.backend().freeDeviceMem(ptr);
    });
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_FALSE(failures[0].failures.empty()) << "the planted alloc failure went unnoticed";
  }
}

}  // namespace

namespace conformance {
namespace {

// kMock: FaultyBackend::Mode::kRuntime (hooks in the mocked runtime); kGpu: Mode::kSeam (the
// decorator decides at the seam, as on GPUs), here over the mocked runtime's backend.
INSTANTIATE_TEST_SUITE_P(
    Decorated, IpcBackendConformance,
    ::testing::Values(decorated(conformance::Placement::kThreads, harness::launch::Runtime::kMock,
                                "RuntimeModeThreads"),
                      decorated(conformance::Placement::kProcesses, harness::launch::Runtime::kMock,
                                "RuntimeModeProcesses"),
                      decorated(conformance::Placement::kThreads, harness::launch::Runtime::kGpu,
                                "SeamModeThreads"),
                      decorated(conformance::Placement::kProcesses, harness::launch::Runtime::kGpu,
                                "SeamModeProcesses")),
    conformance::implementationName);

}  // namespace
}  // namespace conformance

namespace testing {
namespace {

// ThreadGroup under RecordingGroup -> FaultyGroup, each rank with its own empty plan. The world of
// the run in progress is kept for the abort case (the check sees only the decorated group).
GroupHarness decoratedThreads(int ranks, std::vector<faults::FaultSpec> faults = {}) {
  auto world = std::make_shared<std::shared_ptr<thread::ThreadWorld>>();
  GroupHarness h;
  h.name = "DecoratedThreads" + std::to_string(ranks);
  h.ranks = ranks;
  h.run = [ranks, world, faults](std::chrono::milliseconds deadline, const RankCheck& check) {
    *world = std::make_shared<thread::ThreadWorld>(ranks, deadline);
    const auto outcomes = thread::runRanks(*world, [&](int rank, Group& group) {
      RankPlan plan(rank, faults);
      harness::launch::DecoratedGroup stack(group, *plan.faults, plan.control, plan.log);
      check(stack.top());
    });
    ASSERT_EQ(outcomes.size(), static_cast<std::size_t>(ranks));
    for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << outcome;
  };
  h.abort = [world](Group& group, const std::string& why) { (*world)->abort(group.rank(), why); };
  h.shortDeadline = std::chrono::milliseconds(200);
  return h;
}

// Negative control: with a planted group failure at the agreement, the same decorated group fails
// a conformance check on every rank (rank 0 by the fault, rank 1 woken by its abort).
TEST(DecoratedSeamControl, APlannedGroupFailureFailsTheGroupsConformanceCheck) {
  const GroupHarness h =
      decoratedThreads(2, onRank0(faults::Site::kGroupFail, faults::Point::kAgree));
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    h.run(std::chrono::milliseconds(2000),
          [](Group& group) { EXPECT_EQ(group.allReduceMin(group.rank()), 0); });
  }
  ASSERT_EQ(failures.size(), 2);  // one a rank
  for (int i = 0; i < failures.size(); ++i) {
    EXPECT_NE(std::string(failures.GetTestPartResult(i).message()).find("injected group failure"),
              std::string::npos)
        << failures.GetTestPartResult(i).message();
  }
}

INSTANTIATE_TEST_SUITE_P(Decorated, GroupConformance,
                         ::testing::Values(decoratedThreads(2), decoratedThreads(3),
                                           decoratedThreads(4), decoratedThreads(8)),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace testing
}  // namespace peerconf
