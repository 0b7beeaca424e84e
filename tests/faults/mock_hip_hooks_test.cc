// FaultyBackend in runtime mode over the real mocked HIP runtime and the real GPU backend built
// on it: planted errors come back as the backend's own BackendError with the runtime's code, only
// for the chosen call and peer; stale and corrupt handles are refused by the runtime itself; the
// hooks are gone once the decorators are.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"
#include "faults/faulty_backend.h"
#include "faults/faulty_group.h"
#include "faults_test_support.h"
#include "hip/hip_variants.h"
#include "mock_hip/control.h"
#include "peer_buffer.h"

namespace peerconf::faults {
namespace {

using harness::model::FaultSite;
using harness::model::Scenario;
using testing::BarrierGroup;
using testing::BarrierWorld;
using testing::fault;
using ::testing::HasSubstr;
using testing::MockRankControl;
using testing::RankUnderTest;
using testing::scenario;
using ::testing::StrictMock;

constexpr std::size_t kBufferBytes = 4096;

struct RankOutcome {
  bool ok = false;
  bool thisRank = false;
  std::exception_ptr cause;
};

// Every rank r (device r) builds a PeerBuffer through the given decoration, then closes it.
using Decorate = std::function<void(int rank, IpcBackend& real, Group& inner,
                                    const std::function<void(IpcBackend&, Group&)>& run)>;

std::vector<RankOutcome> handshake(int n, const Decorate& decorate) {
  BarrierWorld world(n);
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      auto real = hip_mock::makeHipBackend(rank, rank);
      BarrierGroup inner(world, rank);
      RankOutcome& out = outcomes[static_cast<std::size_t>(rank)];
      decorate(rank, *real, inner, [&](IpcBackend& backend, Group& group) {
        try {
          PeerBuffer buffer(kBufferBytes, backend, &group);
          out.ok = true;
          buffer.close();
        } catch (const HandshakeError& e) {
          out.thisRank = e.thisRank();
          out.cause = e.cause();
        }
      });
    });
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

std::vector<RankOutcome> faultyHandshake(const Scenario& s) {
  const FaultPlan plan = faultPlan(s);
  return handshake(s.ranks, [&](int rank, IpcBackend& real, Group& inner, const auto& run) {
    RankUnderTest r(plan, rank);
    StrictMock<MockRankControl> control;
    FaultyBackend backend(real, *r.faults, control, FaultyBackend::Mode::kRuntime);
    FaultyGroup group(inner, *r.faults, control);
    run(backend, group);
  });
}

std::vector<RankOutcome> plainHandshake(int n) {
  return handshake(n,
                   [](int, IpcBackend& real, Group& inner, const auto& run) { run(real, inner); });
}

std::optional<BackendError> backendError(const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const BackendError& e) {
    return e;
  } catch (...) {
  }
  return std::nullopt;
}

class FaultsRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override { mock_hip::resetAll(); }
  void TearDown() override { mock_hip::resetAll(); }

  static void expectNothingHeld(int devices) {
    for (int d = 0; d < devices; ++d) {
      EXPECT_TRUE(mock_hip::liveAllocations(d).empty()) << "device " << d;
      EXPECT_TRUE(mock_hip::liveMappings(d).empty()) << "device " << d;
    }
  }
};

TEST_F(FaultsRuntimeTest, OpenFaultIsTheRealBackendsErrorWithTheChosenCodeAndHooksGoAway) {
  auto f = fault(FaultSite::kOpen, {1});
  f.peer = 2;
  f.error = 217;  // hipErrorPeerAccessUnsupported
  const auto outcomes = faultyHandshake(scenario(3, {f}));
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_FALSE(outcomes[0].ok);
  EXPECT_FALSE(outcomes[0].thisRank);
  EXPECT_FALSE(outcomes[2].thisRank);
  ASSERT_TRUE(outcomes[1].thisRank);
  const auto error = backendError(outcomes[1].cause);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kOpenHandle);
  EXPECT_EQ(error->rank(), 1);
  EXPECT_EQ(error->peer(), 2);
  EXPECT_EQ(error->code(), 217);
  EXPECT_THAT(error->call(), HasSubstr("hipIpcOpenMemHandle"));  // the backend's own check
  EXPECT_THAT(error->codeText(), HasSubstr("fault hook"));
  expectNothingHeld(3);

  // The decorators are gone, and so are their hooks: the same ranks now shake hands.
  for (const auto& o : plainHandshake(3)) EXPECT_TRUE(o.ok);
  expectNothingHeld(3);
}

TEST_F(FaultsRuntimeTest, AllocFaultHitsTheUncachedBufferNotTheTable) {
  harness::model::EventLog log(0, harness::model::EventLog::Clock::now());
  auto f = fault(FaultSite::kAlloc, {0});
  f.error = 2;
  const FaultPlan plan = faultPlan(scenario(1, {f}));
  auto faults = plan.forRank(0, log);
  StrictMock<MockRankControl> control;
  auto real = hip_mock::makeHipBackend(0, 0);
  FaultyBackend backend(*real, *faults, control, FaultyBackend::Mode::kRuntime);
  const DevicePtr table = backend.allocDevice(64);
  backend.freeDeviceMem(table);
  try {
    PeerBuffer buffer(kBufferBytes, backend, nullptr);
    FAIL() << "constructed";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.op(), Op::kAlloc);
    EXPECT_EQ(e.code(), 2);
    EXPECT_THAT(e.call(), HasSubstr("hipExtMallocWithFlags"));
  }
  expectNothingHeld(1);
}

TEST_F(FaultsRuntimeTest, FreeFaultHitsTheLocalBufferNotTheTable) {
  harness::model::EventLog log(0, harness::model::EventLog::Clock::now());
  const FaultPlan plan = faultPlan(scenario(1, {fault(FaultSite::kFree, {0})}));
  auto faults = plan.forRank(0, log);
  StrictMock<MockRankControl> control;
  auto real = hip_mock::makeHipBackend(0, 0);
  FaultyBackend backend(*real, *faults, control, FaultyBackend::Mode::kRuntime);
  PeerBuffer buffer(kBufferBytes, backend, nullptr);
  const DevicePtr local = buffer.bytes().data;
  try {
    buffer.close();
    FAIL() << "closed";
  } catch (const CloseError& e) {
    ASSERT_EQ(e.failures().size(), 1u);
    EXPECT_THAT(e.failures()[0], HasSubstr("hipFree"));
  }
  // Only the local buffer is still held: the planted failure is a leak the ledger shows.
  const auto live = mock_hip::liveAllocations(0);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].ptr, local);
  EXPECT_EQ(live[0].size, kBufferBytes);
}

TEST_F(FaultsRuntimeTest, TheRuntimeRefusesAStaleHandleAndNothingStaysAllocated) {
  auto f = fault(FaultSite::kHandleStale, {1});
  f.peer = 0;
  const auto outcomes = faultyHandshake(scenario(3, {f}));
  ASSERT_TRUE(outcomes[1].thisRank);
  const auto error = backendError(outcomes[1].cause);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->peer(), 0);
  EXPECT_THAT(error->codeText(), HasSubstr("stale handle"));
  EXPECT_FALSE(outcomes[0].thisRank);
  EXPECT_FALSE(outcomes[2].thisRank);
  expectNothingHeld(3);
}

TEST_F(FaultsRuntimeTest, TheRuntimeRefusesACorruptHandle) {
  auto f = fault(FaultSite::kHandleCorrupt, {0});
  f.peer = 1;
  const auto outcomes = faultyHandshake(scenario(2, {f}));
  ASSERT_TRUE(outcomes[0].thisRank);
  const auto error = backendError(outcomes[0].cause);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->peer(), 1);
  EXPECT_THAT(error->codeText(), HasSubstr("not a mock HIP IPC memory handle"));
  expectNothingHeld(2);
}

TEST_F(FaultsRuntimeTest, WithoutFaultsTheDecoratedHandshakeSucceeds) {
  // A stale fault that never fires still doubles the exchange on every rank.
  auto f = fault(FaultSite::kHandleStale, {1});
  f.probability = 1e-12;
  for (const auto& o : faultyHandshake(scenario(3, {f}))) EXPECT_TRUE(o.ok);
  expectNothingHeld(3);
}

}  // namespace
}  // namespace peerconf::faults
