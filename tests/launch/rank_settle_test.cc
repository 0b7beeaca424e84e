// GPU isolation (issue 12, item 7), shown on the mock: an injected close/free failure leaves the
// real mapping or buffer held; FaultyBackend remembers it, the launcher releases it through the
// plain backend once the run is over (after the ledger: C3 never sees it), and RankSettle checks
// that the rank's device holds nothing the run created. Negative controls: the check without the
// release, and a planted core that leaks, both caught by name.
#include "launch/rank_settle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "errors.h"
#include "faults/faulty_backend.h"
#include "faults_test_support.h"
#include "hip/hip_variants.h"
#include "judge/judgement.h"
#include "judged_run.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "mock_hip/control.h"
#include "mock_seams.h"
#include "model/core_under_test.h"
#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::faults {
namespace {

using harness::launch::RankSettle;
using harness::model::FaultSite;
using harness::model::RankResult;
using harness::model::RankStatus;
using peerconf::testing::MockIpcBackend;
using testing::allowPoisonAndSignatures;
using ::testing::AnyNumber;
using ::testing::Contains;
using testing::fault;
using ::testing::HasSubstr;
using testing::MockRankControl;
using testing::RankUnderTest;
using ::testing::Return;
using testing::scenario;
using ::testing::StrictMock;

constexpr DevicePtr kLocal = 0x1000;
constexpr DevicePtr kMapping = 0x200000;
constexpr std::size_t kBytes = 4096;

bool threw(const std::function<void()>& call) {
  try {
    call();
  } catch (const BackendError&) {
    return true;
  }
  return false;
}

// ---- The decorator (seam mode, over a StrictMock: no unexpected inner call) --------------------

struct Seam {
  RankUnderTest r;
  StrictMock<MockIpcBackend> inner;
  StrictMock<MockRankControl> control;
  FaultyBackend backend;
  Seam(const FaultPlan& plan, int rank)
      : r(plan, rank), backend(inner, *r.faults, control, FaultyBackend::Mode::kSeam) {
    EXPECT_CALL(inner, rank()).Times(AnyNumber()).WillRepeatedly(Return(rank));
    allowPoisonAndSignatures(inner);
  }
};

TEST(FaultyBackendLeftovers, InjectedCloseLeavesTheMappingAndTheHarnessClosesItOnce) {
  auto close = fault(FaultSite::kClose, {0});
  close.peer = 1;
  Seam s(faultPlan(scenario(2, {close})), 0);
  // The core sees the failure; the real mapping is untouched (no inner call).
  EXPECT_TRUE(threw([&] { s.backend.closeMemHandle(kMapping, 1); }));
  EXPECT_TRUE(threw([&] { s.backend.closeMemHandle(kMapping, 1); }));  // once, however often
  ASSERT_EQ(s.backend.leftovers().size(), 1u);
  EXPECT_EQ(s.backend.leftovers()[0].kind, FaultyBackend::Leftover::Kind::kMapping);
  EXPECT_EQ(s.backend.leftovers()[0].ptr, kMapping);
  EXPECT_EQ(s.backend.leftovers()[0].peer, 1);
  // The release goes to the plain backend, exactly once.
  EXPECT_CALL(s.inner, closeMemHandle(kMapping, 1)).Times(1);
  const auto lines = releaseLeftovers(s.inner, s.backend.leftovers());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("closed mapping of peer 1 at 0x200000"));
}

TEST(FaultyBackendLeftovers, WhatTheCoreReleasesAfterAllIsNoLeftover) {
  auto free = fault(FaultSite::kFree, {0});
  free.count = 1;  // the first free fails, a retry succeeds
  Seam s(faultPlan(scenario(1, {free})), 0);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
  s.backend.allocUncached(kBytes);
  EXPECT_TRUE(threw([&] { s.backend.freeDeviceMem(kLocal); }));
  ASSERT_EQ(s.backend.leftovers().size(), 1u);
  EXPECT_EQ(s.backend.leftovers()[0].kind, FaultyBackend::Leftover::Kind::kBuffer);
  EXPECT_CALL(s.inner, freeDeviceMem(kLocal)).Times(1);
  s.backend.freeDeviceMem(kLocal);
  EXPECT_TRUE(s.backend.leftovers().empty());  // else the harness would free it a second time
}

TEST(FaultyBackendLeftovers, AFailureNotInjectedIsTheCoresNotALeftover) {
  Seam s(faultPlan(scenario(2, {})), 0);
  EXPECT_CALL(s.inner, closeMemHandle(kMapping, 1)).WillOnce([](DevicePtr, int) -> void {
    throw BackendError(Op::kCloseHandle, 0, 1, 1, "x");
  });
  EXPECT_TRUE(threw([&] { s.backend.closeMemHandle(kMapping, 1); }));
  EXPECT_TRUE(s.backend.leftovers().empty());
}

// ---- Runtime mode over the mocked HIP runtime, with RankSettle's device check ------------------

class LeftoversOnTheMock : public ::testing::Test {
 protected:
  void SetUp() override { mock_hip::resetAll(); }
  void TearDown() override { mock_hip::resetAll(); }
};

TEST_F(LeftoversOnTheMock, InjectedFreeHoldsTheBufferUntilTheHarnessFreesIt) {
  const FaultPlan plan = faultPlan(scenario(1, {fault(FaultSite::kFree, {0})}));
  RankUnderTest r(plan, 0);
  StrictMock<MockRankControl> control;
  auto real = hip_mock::makeHipBackend(0, 0);
  const RankSettle settle(Runtime::kMock, 0, *real);
  std::vector<FaultyBackend::Leftover> leftovers;
  {
    FaultyBackend backend(*real, *r.faults, control, FaultyBackend::Mode::kRuntime);
    const DevicePtr buffer = backend.allocUncached(kBytes);
    EXPECT_TRUE(threw([&] { backend.freeDeviceMem(buffer); }));
    leftovers = backend.leftovers();
  }
  ASSERT_EQ(leftovers.size(), 1u);
  ASSERT_EQ(mock_hip::liveAllocations(0).size(), 1u);  // the runtime failed before freeing

  // Planted harness leak: the check without the release names the buffer and the lost bytes.
  RankResult without;
  without.status = RankStatus::kOk;
  settle.check(without);
  EXPECT_THAT(without.deviceLeftovers,
              Contains(HasSubstr("the mocked runtime still holds buffer")));
  EXPECT_THAT(without.deviceLeftovers, Contains(HasSubstr("fell by 4096 bytes")));

  RankResult with;
  with.status = RankStatus::kOk;
  settle.release(*real, leftovers, with);
  settle.check(with);
  EXPECT_THAT(with.harnessReleases, Contains(HasSubstr("freed buffer")));
  EXPECT_TRUE(with.deviceLeftovers.empty()) << with.deviceLeftovers.front();
  EXPECT_TRUE(mock_hip::liveAllocations(0).empty());
}

TEST_F(LeftoversOnTheMock, InjectedCloseHoldsTheMappingUntilTheHarnessClosesIt) {
  auto close = fault(FaultSite::kClose, {1});
  const FaultPlan plan = faultPlan(scenario(2, {close}));
  RankUnderTest r(plan, 1);
  StrictMock<MockRankControl> control;
  auto owner = hip_mock::makeHipBackend(0, 0);
  auto real = hip_mock::makeHipBackend(1, 1);
  const DevicePtr buffer = owner->allocUncached(kBytes);
  const IpcHandle handle = owner->getMemHandle(buffer);
  const RankSettle settle(Runtime::kMock, 1, *real);
  std::vector<FaultyBackend::Leftover> leftovers;
  {
    FaultyBackend backend(*real, *r.faults, control, FaultyBackend::Mode::kRuntime);
    const DevicePtr mapped = backend.openMemHandle(handle, 0);
    EXPECT_TRUE(threw([&] { backend.closeMemHandle(mapped, 0); }));
    leftovers = backend.leftovers();
  }
  ASSERT_EQ(leftovers.size(), 1u);
  EXPECT_EQ(leftovers[0].peer, 0);
  ASSERT_EQ(mock_hip::liveMappings(1).size(), 1u);

  // A mapping costs the device no memory: only the runtime's own state shows it.
  RankResult without;
  without.status = RankStatus::kOk;
  settle.check(without);
  ASSERT_EQ(without.deviceLeftovers.size(), 1u);
  EXPECT_THAT(without.deviceLeftovers[0], HasSubstr("mapping of device 0's buffer"));

  RankResult with;
  with.status = RankStatus::kOk;
  settle.release(*real, leftovers, with);
  settle.check(with);
  EXPECT_TRUE(with.deviceLeftovers.empty()) << with.deviceLeftovers.front();
  EXPECT_TRUE(mock_hip::liveMappings(1).empty());
  owner->freeDeviceMem(buffer);
}

// ---- End to end through the thread launcher and C3 ---------------------------------------------

struct Checked : harness::testing::JudgedRun {
  const harness::model::Verdict& c3() const {
    return verdict(harness::model::Property::kC3Cleanup);
  }
};

Checked run(const harness::model::Scenario& s,
            const harness::model::CoreFactory& core = harness::model::productionCore()) {
  harness::launch::LaunchOptions options;
  options.core = core;
  return {harness::testing::runAndJudge(s, options)};
}

harness::model::Scenario gpuScenario(const std::string& file) {
  return harness::scenario::loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/gpu/" + file);
}

TEST(LeftoversEndToEnd, InjectedCloseAndFreeAreReleasedAfterTheRunAndC3JudgesAsBefore) {
  for (const auto& [file, rank, line] :
       {std::tuple{"close-fails.yaml", 1, "closed mapping of peer 0"},
        std::tuple{"free-fails.yaml", 0, "freed buffer"}}) {
    const Checked checked = run(gpuScenario(file));
    EXPECT_TRUE(checked.judgement.passed) << checked.story();
    EXPECT_EQ(checked.c3().status, harness::model::Verdict::Status::kPass) << checked.story();
    for (const RankResult& r : checked.record.ranks) {
      EXPECT_TRUE(r.deviceLeftovers.empty()) << file << " rank " << r.rank;
      if (r.rank == rank) {
        EXPECT_THAT(r.harnessReleases, Contains(HasSubstr(line))) << file;
        EXPECT_FALSE(r.closeErrors.empty()) << file;  // the core saw the failure, as before
      } else {
        EXPECT_TRUE(r.harnessReleases.empty()) << file << " rank " << r.rank;
      }
    }
  }
}

// A planted core that leaks: its buffer is allocated and never freed, by close() or otherwise.
class LeaksItsBuffer : public harness::model::CoreBuffer {
 public:
  LeaksItsBuffer(std::size_t nbytes, IpcBackend& backend)
      : bytes_{backend.allocUncached(nbytes), nbytes},
        addresses_{static_cast<int64_t>(bytes_.data)} {}
  int size() const override { return 1; }
  DeviceBytes bytes() const override { return bytes_; }
  const std::vector<std::int64_t>& addresses() const override { return addresses_; }
  DevicePtr addressesDevice() const override { return 0; }
  void close() override {}

 private:
  DeviceBytes bytes_;
  std::vector<std::int64_t> addresses_;
};

TEST(LeftoversEndToEnd, APlantedLeakIsNamedByTheDeviceCheck) {
  harness::model::Scenario s = scenario(1, {});
  s.name = "planted-leak";
  const Checked checked =
      run(s, [](std::size_t nbytes, IpcBackend& backend, Group*, std::string_view) {
        return std::make_unique<LeaksItsBuffer>(nbytes, backend);
      });
  EXPECT_FALSE(checked.judgement.passed);
  EXPECT_EQ(checked.c3().status, harness::model::Verdict::Status::kFail);
  std::vector<std::string> texts;
  for (const auto& f : checked.c3().findings) texts.push_back(f.text);
  EXPECT_THAT(texts, Contains(HasSubstr("after the run (and the harness's own releases): the "
                                        "mocked runtime still holds buffer")))
      << checked.story();
  EXPECT_THAT(texts, Contains(HasSubstr("free memory (hipMemGetInfo) fell by 4096 bytes")))
      << checked.story();
  // Judged first, then released: the rank's process goes on to the next scenario (a GPU rank's
  // does), so what the core leaked must not stay for it.
  std::vector<std::string> releases;
  for (const RankResult& r : checked.record.ranks) {
    releases.insert(releases.end(), r.harnessReleases.begin(), r.harnessReleases.end());
  }
  EXPECT_THAT(releases, Contains(HasSubstr("left by the core: released after the checks")))
      << checked.story();
}

}  // namespace
}  // namespace peerconf::faults
