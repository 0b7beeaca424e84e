// Unit tests of FaultyBackend against a gMock IpcBackend: in seam mode the decorator throws the
// planned BackendError without calling the inner backend; in runtime mode (over a fake hook
// registry that the mock's actions consult, as the mocked HIP runtime does) the inner backend
// meets the error, only for the call the site names; the open point and the stale scratch buffer.
#include "faults/faulty_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "caught.h"
#include "errors.h"
#include "faults_test_support.h"
#include "hip/hip_variants.h"
#include "mock_hip/control.h"
#include "mock_seams.h"
#include "peer_buffer.h"
#include "peer_buffer_test_support.h"

namespace peerconf::faults {
namespace {

using harness::model::FaultSite;
using harness::model::Point;
using peerconf::testing::caught;
using peerconf::testing::gathered;
using peerconf::testing::handleOf;
using peerconf::testing::kBytes;
using peerconf::testing::kLocal;
using peerconf::testing::kTable;
using peerconf::testing::mappingOf;
using peerconf::testing::MockGroup;
using peerconf::testing::MockIpcBackend;
using peerconf::testing::rethrown;
using ::testing::_;
using testing::allowPoisonAndSignatures;
using ::testing::AnyNumber;
using testing::Died;
using testing::fault;
using ::testing::HasSubstr;
using ::testing::InSequence;
using testing::MockRankControl;
using ::testing::NiceMock;
using testing::RankUnderTest;
using ::testing::Return;
using testing::scenario;
using ::testing::StrictMock;

constexpr DevicePtr kScratch = 0x3000;

IpcHandle scratchHandle() {
  IpcHandle h;
  h.bytes[0] = std::byte{0xEE};
  return h;
}

// A StrictMock inner backend for rank `rank`, its faults and a control.
struct SeamFixture {
  RankUnderTest r;
  StrictMock<MockIpcBackend> inner;
  StrictMock<MockRankControl> control;
  FaultyBackend backend;

  SeamFixture(const FaultPlan& plan, int rank)
      : r(plan, rank), backend(inner, *r.faults, control, FaultyBackend::Mode::kSeam) {
    EXPECT_CALL(inner, rank()).Times(AnyNumber()).WillRepeatedly(Return(rank));
    allowPoisonAndSignatures(inner);
  }
};

TEST(FaultyBackendSeamTest, AllocFaultThrowsWithoutCallingInnerAndSparesTheTable) {
  auto f = fault(FaultSite::kAlloc, {1});
  f.error = 2;
  SeamFixture s(faultPlan(scenario(2, {f})), 1);
  const auto error = caught<BackendError>([&] { s.backend.allocUncached(kBytes); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kAlloc);
  EXPECT_EQ(error->rank(), 1);
  EXPECT_EQ(error->peer(), kNoPeer);
  EXPECT_EQ(error->code(), 2);
  EXPECT_EQ(error->codeText(), "hipErrorOutOfMemory");
  EXPECT_THAT(error->call(), HasSubstr("injected"));

  EXPECT_CALL(s.inner, allocDevice(16)).WillOnce(Return(kTable));
  EXPECT_EQ(s.backend.allocDevice(16), kTable);
}

TEST(FaultyBackendSeamTest, AllocFaultOfAnotherRankPassesThrough) {
  SeamFixture s(faultPlan(scenario(2, {fault(FaultSite::kAlloc, {1})})), 0);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_EQ(s.backend.allocUncached(kBytes), kLocal);
}

TEST(FaultyBackendSeamTest, GetHandleFaultThrowsWithoutCallingInner) {
  auto f = fault(FaultSite::kGetHandle, {0});
  f.error = 400;
  SeamFixture s(faultPlan(scenario(2, {f})), 0);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
  s.backend.allocUncached(kBytes);
  const auto error = caught<BackendError>([&] { s.backend.getMemHandle(kLocal); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kGetHandle);
  EXPECT_EQ(error->rank(), 0);
  EXPECT_EQ(error->code(), 400);
}

TEST(FaultyBackendSeamTest, OpenFaultHitsOnlyItsPeer) {
  auto f = fault(FaultSite::kOpen, {1});
  f.peer = 2;
  f.error = 217;
  SeamFixture s(faultPlan(scenario(3, {f})), 1);
  EXPECT_CALL(s.inner, openMemHandle(handleOf(0), 0)).WillOnce(Return(mappingOf(0)));
  EXPECT_EQ(s.backend.openMemHandle(handleOf(0), 0), mappingOf(0));
  const auto error = caught<BackendError>([&] { s.backend.openMemHandle(handleOf(2), 2); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kOpenHandle);
  EXPECT_EQ(error->rank(), 1);
  EXPECT_EQ(error->peer(), 2);
  EXPECT_EQ(error->code(), 217);
  EXPECT_EQ(error->codeText(), "hipErrorPeerAccessUnsupported");
}

TEST(FaultyBackendSeamTest, CloseFaultHitsOnlyItsPeer) {
  auto f = fault(FaultSite::kClose, {0});
  f.peer = 1;
  f.error = 206;
  SeamFixture s(faultPlan(scenario(3, {f})), 0);
  EXPECT_CALL(s.inner, closeMemHandle(mappingOf(2), 2));
  s.backend.closeMemHandle(mappingOf(2), 2);
  const auto error = caught<BackendError>([&] { s.backend.closeMemHandle(mappingOf(1), 1); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kCloseHandle);
  EXPECT_EQ(error->rank(), 0);
  EXPECT_EQ(error->peer(), 1);
  EXPECT_EQ(error->code(), 206);
}

TEST(FaultyBackendSeamTest, FreeFaultHitsOnlyTheLocalBuffer) {
  SeamFixture s(faultPlan(scenario(2, {fault(FaultSite::kFree, {0})})), 0);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(s.inner, allocDevice(16)).WillOnce(Return(kTable));
  s.backend.allocUncached(kBytes);
  s.backend.allocDevice(16);
  EXPECT_CALL(s.inner, freeDeviceMem(kTable));
  s.backend.freeDeviceMem(kTable);
  const auto error = caught<BackendError>([&] { s.backend.freeDeviceMem(kLocal); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kFree);
  EXPECT_EQ(error->code(), 1);
}

TEST(FaultyBackendSeamTest, CopiesPassThrough) {
  SeamFixture s(faultPlan(scenario(2, {fault(FaultSite::kOpen, {0})})), 0);
  std::int64_t value = 5;
  EXPECT_CALL(s.inner, copyToDevice(kTable, &value, sizeof value));
  EXPECT_CALL(s.inner, copyToHost(&value, kTable, sizeof value));
  s.backend.copyToDevice(kTable, &value, sizeof value);
  s.backend.copyToHost(&value, kTable, sizeof value);
}

TEST(FaultyBackendSeamTest, OpenPointAppliesAtTheFirstOpenOfEachHandshake) {
  auto f = fault(FaultSite::kHang, {1});
  f.at = Point::kOpen;
  SeamFixture s(faultPlan(scenario(3, {f})), 1);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).Times(2).WillRepeatedly(Return(kLocal));
  for (int handshake = 0; handshake < 2; ++handshake) {
    s.backend.allocUncached(kBytes);
    {
      InSequence seq;
      EXPECT_CALL(s.control, hang(1, Point::kOpen));
      EXPECT_CALL(s.inner, openMemHandle(handleOf(0), 0)).WillOnce(Return(mappingOf(0)));
      EXPECT_CALL(s.inner, openMemHandle(handleOf(2), 2)).WillOnce(Return(mappingOf(2)));
    }
    s.backend.openMemHandle(handleOf(0), 0);
    s.backend.openMemHandle(handleOf(2), 2);
    ::testing::Mock::VerifyAndClearExpectations(&s.control);
  }
}

TEST(FaultyBackendSeamTest, DeathAtOpenStopsBeforeTheInnerOpen) {
  auto f = fault(FaultSite::kDeath, {0});
  f.at = Point::kOpen;
  SeamFixture s(faultPlan(scenario(2, {f})), 0);
  EXPECT_CALL(s.control, onDie(0, Point::kOpen));
  EXPECT_THROW(s.backend.openMemHandle(handleOf(1), 1), Died);
}

// vLLM's CUDACHECK(cudaIpcOpenMemHandle) -> exit(): the open of peer 0 fails (the fault is
// recorded), then the rank exits inside that very call, with its code.
TEST(FaultyBackendSeamTest, ExitInsideAFailingOpenComesAfterTheOpenFault) {
  auto open = fault(FaultSite::kOpen, {1});
  open.peer = 0;
  auto exit = fault(FaultSite::kExit, {1});
  exit.at = Point::kOpen;
  exit.peer = 0;
  exit.code = 3;
  SeamFixture s(faultPlan(scenario(3, {open, exit})), 1);
  EXPECT_CALL(s.control, onExit(1, Point::kOpen, 3));
  EXPECT_THROW(s.backend.openMemHandle(handleOf(0), 0), Died);
  const auto events = s.r.faultEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "open");
  EXPECT_EQ(events[1].what, "exit");
  EXPECT_EQ(events[1].peer, 0);
  EXPECT_THAT(events[1].detail, HasSubstr("exits with code 3 inside its open of peer 0"));
}

// A hang aimed at peer 2 happens inside the open of peer 2, after the runtime mapped it; the open
// of peer 0 before it is untouched.
TEST(FaultyBackendSeamTest, HangAtTheOpenOfOnePeerStopsOnlyInThatOpen) {
  auto f = fault(FaultSite::kHang, {1});
  f.at = Point::kOpen;
  f.peer = 2;
  SeamFixture s(faultPlan(scenario(3, {f})), 1);
  {
    InSequence seq;
    EXPECT_CALL(s.inner, openMemHandle(handleOf(0), 0)).WillOnce(Return(mappingOf(0)));
    EXPECT_CALL(s.inner, openMemHandle(handleOf(2), 2)).WillOnce(Return(mappingOf(2)));
    EXPECT_CALL(s.control, hang(1, Point::kOpen));
  }
  EXPECT_EQ(s.backend.openMemHandle(handleOf(0), 0), mappingOf(0));
  s.backend.openMemHandle(handleOf(2), 2);
}

TEST(FaultyBackendSeamTest, StaleScenarioMakesAFreedScratchHandleBeforeTheRealOne) {
  // The stale fault is rank 2's; rank 0 must still export a stale handle for it.
  SeamFixture s(faultPlan(scenario(3, {fault(FaultSite::kHandleStale, {2})})), 0);
  {
    InSequence seq;
    EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(s.inner, allocUncached(kStaleScratchBytes)).WillOnce(Return(kScratch));
    EXPECT_CALL(s.inner, getMemHandle(kScratch)).WillOnce(Return(scratchHandle()));
    EXPECT_CALL(s.inner, freeDeviceMem(kScratch));
    EXPECT_CALL(s.inner, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
  }
  s.backend.allocUncached(kBytes);
  EXPECT_EQ(s.backend.getMemHandle(kLocal), handleOf(0));
  EXPECT_EQ(s.r.faults->takeStaleHandle(), scratchHandle());
  // The scratch buffer met no fault and is not the local buffer for free faults.
  EXPECT_TRUE(s.r.faultEvents().empty());
}

// A second registration round: the buffer the rank exported in the first round was freed and is a
// block of its own, so its handle is the stale one (an earlier registration's), with no scratch.
// Before it (the first round) and while it lives, the scratch block's.
TEST(FaultyBackendSeamTest, StaleHandleIsTheEarlierRegistrationsOnceItWasFreed) {
  SeamFixture s(faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {1})})), 0);
  constexpr DevicePtr kSecond = 0x9000000;
  {
    InSequence seq;
    EXPECT_CALL(s.inner, allocUncached(kStaleScratchBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(s.inner, allocUncached(kStaleScratchBytes)).WillOnce(Return(kScratch));
    EXPECT_CALL(s.inner, getMemHandle(kScratch)).WillOnce(Return(scratchHandle()));
    EXPECT_CALL(s.inner, freeDeviceMem(kScratch));
    EXPECT_CALL(s.inner, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
    EXPECT_CALL(s.inner, freeDeviceMem(kLocal));
    EXPECT_CALL(s.inner, allocUncached(kStaleScratchBytes)).WillOnce(Return(kSecond));
    EXPECT_CALL(s.inner, getMemHandle(kSecond)).WillOnce(Return(handleOf(1)));
  }
  s.backend.allocUncached(kStaleScratchBytes);
  EXPECT_EQ(s.backend.getMemHandle(kLocal), handleOf(0));
  EXPECT_EQ(s.r.faults->takeStaleHandle(), scratchHandle());
  s.backend.freeDeviceMem(kLocal);
  s.backend.allocUncached(kStaleScratchBytes);
  EXPECT_EQ(s.backend.getMemHandle(kSecond), handleOf(1));
  EXPECT_EQ(s.r.faults->takeStaleHandle(), handleOf(0));
}

TEST(FaultyBackendSeamTest, StaleScratchIsFreedWhenItsHandleFails) {
  SeamFixture s(faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {1})})), 0);
  {
    InSequence seq;
    EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(s.inner, allocUncached(kStaleScratchBytes)).WillOnce(Return(kScratch));
    EXPECT_CALL(s.inner, getMemHandle(kScratch)).WillOnce([](DevicePtr) -> IpcHandle {
      throw BackendError(Op::kGetHandle, 0, kNoPeer, 1, "hipErrorInvalidValue");
    });
    EXPECT_CALL(s.inner, freeDeviceMem(kScratch));
  }
  s.backend.allocUncached(kBytes);
  EXPECT_THROW(s.backend.getMemHandle(kLocal), BackendError);
}

TEST(FaultyBackendSeamTest, NoStaleFaultMeansNoScratchBuffer) {
  SeamFixture s(faultPlan(scenario(2, {fault(FaultSite::kHandleCorrupt, {1})})), 0);
  EXPECT_CALL(s.inner, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
  s.backend.getMemHandle(kLocal);
  EXPECT_EQ(s.r.faults->takeStaleHandle(), std::nullopt);
}

TEST(FaultyBackendSeamTest, ThroughPeerBufferTheInjectedOpenErrorIsTheHandshakeCause) {
  auto f = fault(FaultSite::kOpen, {1});
  f.peer = 2;
  f.error = 217;
  SeamFixture s(faultPlan(scenario(3, {f})), 1);
  StrictMock<MockGroup> group;
  EXPECT_CALL(group, rank()).WillRepeatedly(Return(1));
  EXPECT_CALL(group, size()).WillRepeatedly(Return(3));
  {
    InSequence seq;
    EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(s.inner, getMemHandle(kLocal)).WillOnce(Return(handleOf(1)));
    EXPECT_CALL(group, allGather(_)).WillOnce(Return(gathered(3)));
    EXPECT_CALL(s.inner, openMemHandle(handleOf(0), 0)).WillOnce(Return(mappingOf(0)));
    EXPECT_CALL(group, allReduceMin(0)).WillOnce(Return(0));
    EXPECT_CALL(s.inner, closeMemHandle(mappingOf(0), 0));
    EXPECT_CALL(s.inner, freeDeviceMem(kLocal));
  }
  const auto e = caught<HandshakeError>([&] { PeerBuffer buffer(kBytes, s.backend, &group); });
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->thisRank());
  const auto cause = rethrown<BackendError>(e->cause());
  ASSERT_TRUE(cause);
  EXPECT_EQ(cause->op(), Op::kOpenHandle);
  EXPECT_EQ(cause->peer(), 2);
  EXPECT_EQ(cause->code(), 217);
}

// foreign-exception: the named call throws ForeignException, no peerconf::Error, without calling
// the inner backend; other calls and other peers pass through.
TEST(FaultyBackendSeamTest, ForeignExceptionThrowsNoErrorAndOnlyAtItsCall) {
  auto open = fault(FaultSite::kForeignException, {1});
  open.call = SeamCall::kOpen;
  open.peer = 2;
  auto table = fault(FaultSite::kForeignException, {1});
  table.call = SeamCall::kAllocTable;
  SeamFixture s(faultPlan(scenario(3, {open, table})), 1);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_EQ(s.backend.allocUncached(kBytes), kLocal);
  EXPECT_CALL(s.inner, openMemHandle(handleOf(0), 0)).WillOnce(Return(mappingOf(0)));
  EXPECT_EQ(s.backend.openMemHandle(handleOf(0), 0), mappingOf(0));
  try {
    s.backend.openMemHandle(handleOf(2), 2);
    FAIL() << "no exception";
  } catch (const Error&) {
    FAIL() << "a peerconf::Error, not a foreign exception";
  } catch (const ForeignException& e) {
    EXPECT_THAT(e.what(), HasSubstr("foreign exception from open of peer 2 on rank 1"));
  }
  EXPECT_THROW(s.backend.allocDevice(24), ForeignException);
  const auto events = s.r.faultEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "foreign-exception");
  EXPECT_EQ(events[0].peer, 2);
}

TEST(FaultyBackendSeamTest, ThroughPeerBufferAForeignOpenExceptionIsAgreedOnAndChained) {
  auto f = fault(FaultSite::kForeignException, {1});
  f.call = SeamCall::kOpen;
  SeamFixture s(faultPlan(scenario(3, {f})), 1);
  StrictMock<MockGroup> group;
  EXPECT_CALL(group, rank()).WillRepeatedly(Return(1));
  EXPECT_CALL(group, size()).WillRepeatedly(Return(3));
  {
    InSequence seq;
    EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(s.inner, getMemHandle(kLocal)).WillOnce(Return(handleOf(1)));
    EXPECT_CALL(group, allGather(_)).WillOnce(Return(gathered(3)));
    EXPECT_CALL(group, allReduceMin(0)).WillOnce(Return(0));
    EXPECT_CALL(s.inner, freeDeviceMem(kLocal));
  }
  const auto e = caught<HandshakeError>([&] { PeerBuffer buffer(kBytes, s.backend, &group); });
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->thisRank());
  EXPECT_TRUE(rethrown<ForeignException>(e->cause()));
}

// ---- Runtime mode --------------------------------------------------------------------------

// A hook registry standing in for the mocked HIP runtime's.
class FakeHooks : public RuntimeHooks {
 public:
  void install(int device, RuntimeHook hook) override { hooks_[device] = std::move(hook); }
  void remove(int device) override { hooks_.erase(device); }
  bool installed(int device) const { return hooks_.count(device) != 0; }
  // What the runtime does at the entry of a call on `device`.
  int enter(RuntimeCall call, int device, int peerDevice = -1) {
    const auto it = hooks_.find(device);
    return it == hooks_.end() ? 0 : it->second(call, device, peerDevice);
  }

 private:
  std::map<int, RuntimeHook> hooks_;
};

// A gMock backend for rank `rank` on device `rank` whose calls consult the fake runtime's hooks
// the way the real backend over the mocked runtime does, throwing the BackendError it would.
struct RuntimeFixture {
  FakeHooks hooks;
  RankUnderTest r;
  NiceMock<MockIpcBackend> inner;
  StrictMock<MockRankControl> control;
  std::optional<FaultyBackend> backend;
  int rank;

  RuntimeFixture(const FaultPlan& plan, int rank) : r(plan, rank), rank(rank) {
    ON_CALL(inner, rank()).WillByDefault(Return(rank));
    ON_CALL(inner, allocUncached(_)).WillByDefault([this](std::size_t) {
      enterOrThrow(RuntimeCall::kMalloc, Op::kAlloc, kNoPeer, -1);
      return kLocal;
    });
    ON_CALL(inner, allocDevice(_)).WillByDefault([this](std::size_t) {
      enterOrThrow(RuntimeCall::kMalloc, Op::kAlloc, kNoPeer, -1);
      return kTable;
    });
    ON_CALL(inner, freeDeviceMem(_)).WillByDefault([this](DevicePtr) {
      enterOrThrow(RuntimeCall::kFree, Op::kFree, kNoPeer, -1);
    });
    ON_CALL(inner, getMemHandle(_)).WillByDefault([this](DevicePtr) {
      enterOrThrow(RuntimeCall::kGetHandle, Op::kGetHandle, kNoPeer, -1);
      return handleOf(this->rank);
    });
    // The handle's owner device is its first byte - 1 (handleOf).
    ON_CALL(inner, openMemHandle(_, _)).WillByDefault([this](const IpcHandle& h, int peer) {
      const int owner = static_cast<int>(h.bytes[0]) - 1;
      enterOrThrow(RuntimeCall::kOpen, Op::kOpenHandle, peer, owner);
      return mappingOf(owner);
    });
    ON_CALL(inner, closeMemHandle(_, _)).WillByDefault([this](DevicePtr ptr, int peer) {
      const int owner = static_cast<int>(ptr / 0x100000) - 1;
      enterOrThrow(RuntimeCall::kClose, Op::kCloseHandle, peer, owner);
    });
    backend.emplace(inner, *r.faults, control, hooks);
  }

  void enterOrThrow(RuntimeCall call, Op op, int peer, int peerDevice) {
    hooks.enter(RuntimeCall::kSetDevice, rank);  // the real backend selects its device first
    if (const int code = hooks.enter(call, rank, peerDevice); code != 0) {
      throw BackendError(op, rank, peer, code, "from the runtime", "hipCall(...)", "file.cc:1");
    }
  }
};

TEST(FaultyBackendRuntimeTest, InstallsTheHookForItsDeviceAndRemovesIt) {
  RuntimeFixture f(faultPlan(scenario(3, {fault(FaultSite::kOpen, {2})})), 2);
  EXPECT_EQ(f.backend->mode(), FaultyBackend::Mode::kRuntime);
  EXPECT_TRUE(f.hooks.installed(2));
  EXPECT_FALSE(f.hooks.installed(0));
  f.backend.reset();
  EXPECT_FALSE(f.hooks.installed(2));
}

TEST(FaultyBackendRuntimeTest, AllocFaultReachesOnlyAllocUncached) {
  auto a = fault(FaultSite::kAlloc, {0});
  a.error = 2;
  RuntimeFixture f(faultPlan(scenario(2, {a})), 0);
  EXPECT_EQ(f.backend->allocDevice(16), kTable);  // the table's hipMalloc is not faulted
  const auto error = caught<BackendError>([&] { f.backend->allocUncached(kBytes); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), 2);
  EXPECT_EQ(error->call(), "hipCall(...)");  // the inner backend's own error, not a seam one
  EXPECT_EQ(f.r.faultEvents().size(), 1u);
}

TEST(FaultyBackendRuntimeTest, OpenAndCloseFaultsFireOnlyForThePeersOwnerDevice) {
  auto open = fault(FaultSite::kOpen, {1});
  open.peer = 2;
  open.error = 205;
  auto close = fault(FaultSite::kClose, {1});
  close.peer = 0;
  close.error = 206;
  RuntimeFixture f(faultPlan(scenario(3, {open, close})), 1);
  EXPECT_EQ(f.backend->openMemHandle(handleOf(0), 0), mappingOf(0));
  auto error = caught<BackendError>([&] { f.backend->openMemHandle(handleOf(2), 2); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), 205);
  EXPECT_EQ(error->peer(), 2);
  f.backend->closeMemHandle(mappingOf(2), 2);
  error = caught<BackendError>([&] { f.backend->closeMemHandle(mappingOf(0), 0); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), 206);
  EXPECT_EQ(error->op(), Op::kCloseHandle);
}

TEST(FaultyBackendRuntimeTest, FreeFaultHitsOnlyTheLocalBuffersFree) {
  RuntimeFixture f(faultPlan(scenario(2, {fault(FaultSite::kFree, {1})})), 1);
  f.backend->allocUncached(kBytes);
  f.backend->allocDevice(16);
  f.backend->freeDeviceMem(kTable);
  const auto error = caught<BackendError>([&] { f.backend->freeDeviceMem(kLocal); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kFree);
}

TEST(FaultyBackendRuntimeTest, CallsOutsideTheDecoratorNeverFire) {
  RuntimeFixture f(faultPlan(scenario(2, {fault(FaultSite::kOpen, {0})})), 0);
  EXPECT_EQ(f.hooks.enter(RuntimeCall::kOpen, 0, 1), 0);
  EXPECT_TRUE(f.r.faultEvents().empty());
}

TEST(FaultyBackendRuntimeTest, TheHookIsConsultedAtMostOncePerCall) {
  RuntimeFixture f(faultPlan(scenario(2, {fault(FaultSite::kGetHandle, {0})})), 0);
  int second = -1;
  EXPECT_CALL(f.inner, getMemHandle(kLocal)).WillOnce([&](DevicePtr) {
    const int first = f.hooks.enter(RuntimeCall::kGetHandle, 0);
    second = f.hooks.enter(RuntimeCall::kGetHandle, 0);
    EXPECT_EQ(first, 1);
    return handleOf(0);
  });
  f.backend->getMemHandle(kLocal);
  EXPECT_EQ(second, 0);
  EXPECT_EQ(f.r.faultEvents().size(), 1u);
}

TEST(FaultyBackendRuntimeTest, StaleScratchMeetsNoFault) {
  auto gh = fault(FaultSite::kGetHandle, {0});
  gh.error = 400;
  RuntimeFixture f(faultPlan(scenario(2, {gh, fault(FaultSite::kHandleStale, {1})})), 0);
  int getHandles = 0;
  EXPECT_CALL(f.inner, getMemHandle(_)).Times(2).WillRepeatedly([&](DevicePtr) {
    ++getHandles;
    f.enterOrThrow(RuntimeCall::kGetHandle, Op::kGetHandle, kNoPeer, -1);
    return scratchHandle();
  });
  const auto error = caught<BackendError>([&] { f.backend->getMemHandle(kLocal); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), 400);
  EXPECT_EQ(getHandles, 2);  // the scratch handle came first and did not fail
  EXPECT_EQ(f.r.faults->takeStaleHandle(), scratchHandle());
}

TEST(FaultyBackendRuntimeTest, ARuntimeThatNeverConsultsTheHookIsAnError) {
  RuntimeFixture f(faultPlan(scenario(2, {fault(FaultSite::kOpen, {0})})), 0);
  EXPECT_CALL(f.inner, openMemHandle(_, _)).WillOnce(Return(mappingOf(1)));
  EXPECT_THROW(f.backend->openMemHandle(handleOf(1), 1), std::logic_error);
}

TEST(FaultyBackendRuntimeTest, SeamAndRuntimeModesDrawTheSameSequence) {
  auto coin = fault(FaultSite::kOpen, {0});
  coin.probability = 0.5;
  const FaultPlan plan = faultPlan(scenario(2, {coin}, 1234));
  std::vector<bool> seam;
  {
    SeamFixture s(plan, 0);
    EXPECT_CALL(s.inner, openMemHandle(_, _)).WillRepeatedly(Return(mappingOf(1)));
    for (int i = 0; i < 200; ++i) {
      try {
        s.backend.openMemHandle(handleOf(1), 1);
        seam.push_back(false);
      } catch (const BackendError&) {
        seam.push_back(true);
      }
    }
  }
  std::vector<bool> runtime;
  RuntimeFixture f(plan, 0);
  for (int i = 0; i < 200; ++i) {
    try {
      f.backend->openMemHandle(handleOf(1), 1);
      runtime.push_back(false);
    } catch (const BackendError&) {
      runtime.push_back(true);
    }
  }
  EXPECT_EQ(seam, runtime);
  EXPECT_NE(std::count(seam.begin(), seam.end(), true), 0);
  EXPECT_NE(std::count(seam.begin(), seam.end(), false), 0);
}

// The device address table's sites: alloc-table fails allocDevice only, copy-table fails
// copyToDevice only; alloc and free faults never touch the table, copyToHost is never faulted.
TEST(FaultyBackendTableTest, SeamModeThrowsWithoutCallingInner) {
  auto alloc = fault(FaultSite::kAllocTable, {1});
  alloc.error = 2;
  auto copy = fault(FaultSite::kCopyTable, {1});
  copy.error = 999;
  SeamFixture s(faultPlan(scenario(2, {alloc, copy})), 1);
  EXPECT_CALL(s.inner, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_EQ(s.backend.allocUncached(kBytes), kLocal);  // the buffer's allocation is not faulted
  auto error = caught<BackendError>([&] { s.backend.allocDevice(16); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kAlloc);
  EXPECT_EQ(error->rank(), 1);
  EXPECT_EQ(error->peer(), kNoPeer);
  EXPECT_EQ(error->code(), 2);
  EXPECT_THAT(error->call(), HasSubstr("allocDevice (injected"));

  std::int64_t value = 5;
  error = caught<BackendError>([&] { s.backend.copyToDevice(kTable, &value, sizeof value); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kCopy);
  EXPECT_EQ(error->code(), 999);
  EXPECT_THAT(error->call(), HasSubstr("copyToDevice (injected"));
  EXPECT_CALL(s.inner, copyToHost(&value, kTable, sizeof value));
  s.backend.copyToHost(&value, kTable, sizeof value);

  const auto events = s.r.faultEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "alloc-table");
  EXPECT_THAT(events[0].detail, HasSubstr("allocDevice of the address table"));
  EXPECT_EQ(events[1].what, "copy-table");
  EXPECT_EQ(s.r.faults->fired(),
            (std::set<FaultSite>{FaultSite::kAllocTable, FaultSite::kCopyTable}));
}

TEST(FaultyBackendTableTest, SeamModeCountsAndOtherRanksPassThrough) {
  auto copy = fault(FaultSite::kCopyTable, {0});
  copy.count = 1;
  SeamFixture s(faultPlan(scenario(2, {copy, fault(FaultSite::kAllocTable, {1})})), 0);
  EXPECT_CALL(s.inner, allocDevice(16)).WillOnce(Return(kTable));
  EXPECT_EQ(s.backend.allocDevice(16), kTable);  // rank 1's alloc-table is not this rank's
  std::int64_t value = 5;
  EXPECT_TRUE(caught<BackendError>([&] { s.backend.copyToDevice(kTable, &value, sizeof value); }));
  EXPECT_CALL(s.inner, copyToDevice(kTable, &value, sizeof value));
  s.backend.copyToDevice(kTable, &value, sizeof value);  // count 1: used up
}

TEST(FaultyBackendTableTest, RuntimeModeFailsOnlyTheTablesCalls) {
  auto alloc = fault(FaultSite::kAllocTable, {0});
  alloc.error = 2;
  RuntimeFixture f(faultPlan(scenario(2, {alloc, fault(FaultSite::kCopyTable, {0})})), 0);
  EXPECT_EQ(f.backend->allocUncached(kBytes), kLocal);  // its hipMalloc is not the table's
  auto error = caught<BackendError>([&] { f.backend->allocDevice(16); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), 2);
  EXPECT_EQ(error->call(), "hipCall(...)");  // the inner backend's own error, not a seam one

  // The copies consult the runtime's memcpy hook, as the mocked runtime's hipMemcpy does.
  std::int64_t value = 5;
  EXPECT_CALL(f.inner, copyToHost(_, _, _)).WillOnce([&](void*, DevicePtr, std::size_t) {
    f.enterOrThrow(RuntimeCall::kMemcpy, Op::kCopy, kNoPeer, -1);
  });
  f.backend->copyToHost(&value, kTable, sizeof value);  // never faulted
  EXPECT_CALL(f.inner, copyToDevice(kTable, &value, sizeof value))
      .WillOnce([&](DevicePtr, const void*, std::size_t) {
        f.enterOrThrow(RuntimeCall::kMemcpy, Op::kCopy, kNoPeer, -1);
      });
  error = caught<BackendError>([&] { f.backend->copyToDevice(kTable, &value, sizeof value); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->op(), Op::kCopy);
  EXPECT_EQ(error->code(), 1);  // the default, hipErrorInvalidValue
  EXPECT_EQ(f.r.faultEvents().size(), 2u);
}

TEST(FaultyBackendTableTest, RuntimeModeNoticesAnUnconsultedHook) {
  RuntimeFixture f(faultPlan(scenario(2, {fault(FaultSite::kCopyTable, {0})})), 0);
  std::int64_t value = 5;
  EXPECT_CALL(f.inner, copyToDevice(_, _, _));  // does not consult the hook
  EXPECT_THROW(f.backend->copyToDevice(kTable, &value, sizeof value), std::logic_error);
}

}  // namespace
}  // namespace peerconf::faults

namespace peerconf::faults {
namespace {

// The open seam's check of what a mapping reaches, over the mocked runtime: the buffer a peer
// exported (signed at its export) passes; a handle that opens onto another live allocation of
// the peer (never exported: poison, no signature) or onto another exported buffer is a finding,
// whatever the core does next. Without the record of what the peer exported, nothing is judged.
TEST(FaultyBackendMappingCheck, AMappingOntoAnotherAllocationThanThePeerExportedIsAFinding) {
  mock_hip::resetAll();
  const FaultPlan plan = faultPlan(scenario(2, {}));
  RankUnderTest owner(plan, 0);
  RankUnderTest opener(plan, 1);
  ::testing::NiceMock<MockRankControl> control;
  const auto ownerRuntime = hip_mock::makeHipBackend(0, 0);
  const auto openerRuntime = hip_mock::makeHipBackend(1, 1);
  FaultyBackend exporter(*ownerRuntime, *owner.faults, control, FaultyBackend::Mode::kSeam);
  FaultyBackend mapper(*openerRuntime, *opener.faults, control, FaultyBackend::Mode::kSeam);

  const DevicePtr buffer = exporter.allocUncached(kBytes);
  const IpcHandle exported = exporter.getMemHandle(buffer);
  const DevicePtr sibling = exporter.allocUncached(kBytes);  // another buffer, also exported
  const IpcHandle siblingHandle = exporter.getMemHandle(sibling);
  const DevicePtr hidden = ownerRuntime->allocUncached(kBytes);  // a live block never exported
  const IpcHandle hiddenHandle = ownerRuntime->getMemHandle(hidden);

  const DevicePtr unjudged = mapper.openMemHandle(hiddenHandle, 0);
  EXPECT_TRUE(mapper.mappingFindings().empty()) << "no record of what peer 0 exported";
  mapper.closeMemHandle(unjudged, 0);

  opener.faults->putExported(0, {exported, kBytes});
  const DevicePtr right = mapper.openMemHandle(exported, 0);
  EXPECT_TRUE(mapper.mappingFindings().empty());
  const DevicePtr wrong = mapper.openMemHandle(hiddenHandle, 0);
  const DevicePtr other = mapper.openMemHandle(siblingHandle, 0);
  ASSERT_EQ(mapper.mappingFindings().size(), 2u);
  EXPECT_THAT(mapper.mappingFindings()[0],
              HasSubstr("the mapping of peer 0 reaches another allocation than the buffer peer 0 "
                        "exported: memory no rank exported"));
  EXPECT_THAT(mapper.mappingFindings()[1], HasSubstr("a buffer exported with another handle"));
  for (const DevicePtr mapped : {right, wrong, other}) mapper.closeMemHandle(mapped, 0);
  ownerRuntime->freeDeviceMem(hidden);
  exporter.freeDeviceMem(sibling);
  exporter.freeDeviceMem(buffer);
  mock_hip::resetAll();
}

}  // namespace
}  // namespace peerconf::faults
