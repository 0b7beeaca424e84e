// HeldBackend counts what the runtime granted and forgets what it released, as a process's end
// would find it: a failed release keeps the resource held, mappings come before buffers, and what
// it lists released through it leaves nothing held. The suite's control: without the launcher's
// release, lifecycle/*-at-open* fail C3 for the stopped rank ("a later scenario in this process
// meets it"); on GPUs the later two-buffer scenarios failed to open.
#include "launch/held_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "errors.h"
#include "faults/faulty_backend.h"
#include "mock_seams.h"

namespace peerconf::harness::launch {
namespace {

using Held = HeldBackend::Held;
using peerconf::testing::MockIpcBackend;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Return;
using ::testing::StrictMock;
using ::testing::Throw;

constexpr DevicePtr kBuffer = 0x1000;
constexpr DevicePtr kTable = 0x2000;
constexpr DevicePtr kMapping = 0x200000;

auto isHeld(Held::Kind kind, DevicePtr ptr, int peer) {
  return ::testing::AllOf(Field(&Held::kind, kind), Field(&Held::ptr, ptr),
                          Field(&Held::peer, peer));
}

TEST(HeldBackend, ListsWhatTheRuntimeGrantedMappingsFirst) {
  StrictMock<MockIpcBackend> inner;
  EXPECT_CALL(inner, allocUncached(4096)).WillOnce(Return(kBuffer));
  EXPECT_CALL(inner, allocDevice(16)).WillOnce(Return(kTable));
  EXPECT_CALL(inner, openMemHandle(_, 2)).WillOnce(Return(kMapping));
  HeldBackend held(inner);
  held.allocUncached(4096);
  held.allocDevice(16);
  held.openMemHandle(IpcHandle{}, 2);
  EXPECT_THAT(held.held(), ElementsAre(isHeld(Held::Kind::kMapping, kMapping, 2),
                                       isHeld(Held::Kind::kBuffer, kBuffer, kNoPeer),
                                       isHeld(Held::Kind::kBuffer, kTable, kNoPeer)));
}

TEST(HeldBackend, ForgetsWhatWasReleasedAndKeepsWhatFailedToRelease) {
  StrictMock<MockIpcBackend> inner;
  EXPECT_CALL(inner, allocUncached(4096)).WillOnce(Return(kBuffer));
  EXPECT_CALL(inner, openMemHandle(_, 1)).WillOnce(Return(kMapping));
  EXPECT_CALL(inner, closeMemHandle(kMapping, 1))
      .WillOnce(Throw(BackendError(Op::kCloseHandle, 0, 1, 1, "hipErrorInvalidValue", "no")))
      .WillOnce(Return());
  EXPECT_CALL(inner, freeDeviceMem(kBuffer)).WillOnce(Return());
  HeldBackend held(inner);
  held.allocUncached(4096);
  held.openMemHandle(IpcHandle{}, 1);
  EXPECT_THROW(held.closeMemHandle(kMapping, 1), BackendError);
  held.freeDeviceMem(kBuffer);
  EXPECT_THAT(held.held(), ElementsAre(isHeld(Held::Kind::kMapping, kMapping, 1)));
  held.closeMemHandle(kMapping, 1);
  EXPECT_THAT(held.held(), IsEmpty());
}

TEST(HeldBackend, AFailedGrantHoldsNothing) {
  StrictMock<MockIpcBackend> inner;
  EXPECT_CALL(inner, allocUncached(_))
      .WillOnce(Throw(BackendError(Op::kAlloc, 0, kNoPeer, 2, "hipErrorOutOfMemory", "oom")));
  EXPECT_CALL(inner, openMemHandle(_, 3))
      .WillOnce(Throw(BackendError(Op::kOpenHandle, 0, 3, 1, "hipErrorInvalidValue", "bad")));
  HeldBackend held(inner);
  EXPECT_THROW(held.allocUncached(64), BackendError);
  EXPECT_THROW(held.openMemHandle(IpcHandle{}, 3), BackendError);
  EXPECT_THAT(held.held(), IsEmpty());
}

TEST(HeldBackend, ReleasingWhatItHoldsThroughItLeavesNothing) {
  StrictMock<MockIpcBackend> inner;
  EXPECT_CALL(inner, allocUncached(_)).WillOnce(Return(kBuffer));
  EXPECT_CALL(inner, openMemHandle(_, 2)).WillOnce(Return(kMapping));
  EXPECT_CALL(inner, closeMemHandle(kMapping, 2)).WillOnce(Return());
  EXPECT_CALL(inner, freeDeviceMem(kBuffer)).WillOnce(Return());
  HeldBackend held(inner);
  held.allocUncached(64);
  held.openMemHandle(IpcHandle{}, 2);
  const auto lines = faults::releaseLeftovers(held, held.held(), "held by the dead rank");
  EXPECT_THAT(lines, ElementsAre("closed mapping of peer 2 at 0x200000 (held by the dead rank)",
                                 "freed buffer 0x1000 (held by the dead rank)"));
  EXPECT_THAT(held.held(), IsEmpty());
}

}  // namespace
}  // namespace peerconf::harness::launch
