// The recording decorators (harness/launch/recording.h) over gMock seams: every call becomes a call
// event, then a return or a throw, in the order the calls were made, with what the checkers read
// (peers, "in=", "out=", pointers); the inner seam sees the same arguments, and its results and
// exceptions reach the caller unchanged.
#include "launch/recording.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "errors.h"
#include "mock_seams.h"

namespace peerconf::harness {

using launch::RecordingBackend;
using launch::RecordingGroup;
using model::Event;
using model::EventLog;
namespace {

using ::testing::_;
using ::testing::InSequence;
using ::testing::Return;
using ::testing::StrictMock;
using ::testing::Throw;

// "call openMemHandle peer=1 []" etc.: the parts of an event the decorators set.
std::vector<std::string> lines(const EventLog& log) {
  std::vector<std::string> out;
  for (const Event& e : log.events()) {
    out.push_back(toString(e.kind) + " " + e.what + " peer=" + std::to_string(e.peer) + " [" +
                  e.detail + "]");
  }
  return out;
}

// A recording decorator of `rank` over a strict mock of its seam.
template <typename Mock, typename Recording, int rank>
class RecordingTest : public ::testing::Test {
 protected:
  StrictMock<Mock> inner_;
  EventLog log_{rank, EventLog::Clock::now()};
  Recording recorded_{inner_, log_};
};

using RecordingBackendTest = RecordingTest<peerconf::testing::MockIpcBackend, RecordingBackend, 0>;
using RecordingGroupTest = RecordingTest<peerconf::testing::MockGroup, RecordingGroup, 1>;

TEST_F(RecordingBackendTest, EveryCallIsRecordedWithItsReturnInCallOrder) {
  IpcHandle handle{};
  handle.bytes[0] = std::byte{7};
  {
    InSequence order;
    EXPECT_CALL(inner_, allocUncached(64)).WillOnce(Return(DevicePtr{0x1000}));
    EXPECT_CALL(inner_, getMemHandle(DevicePtr{0x1000})).WillOnce(Return(handle));
    EXPECT_CALL(inner_, openMemHandle(_, 1)).WillOnce(Return(DevicePtr{0x2000}));
    EXPECT_CALL(inner_, allocDevice(16)).WillOnce(Return(DevicePtr{0x3000}));
    EXPECT_CALL(inner_, copyToDevice(DevicePtr{0x3000}, _, 16));
    EXPECT_CALL(inner_, copyToHost(_, DevicePtr{0x3000}, 16));
    EXPECT_CALL(inner_, closeMemHandle(DevicePtr{0x2000}, 1));
    EXPECT_CALL(inner_, freeDeviceMem(DevicePtr{0x1000}));
  }
  EXPECT_EQ(recorded_.allocUncached(64), DevicePtr{0x1000});
  EXPECT_EQ(recorded_.getMemHandle(0x1000), handle);
  EXPECT_EQ(recorded_.openMemHandle(handle, 1), DevicePtr{0x2000});
  EXPECT_EQ(recorded_.allocDevice(16), DevicePtr{0x3000});
  char bytes[16] = {};
  recorded_.copyToDevice(0x3000, bytes, 16);
  recorded_.copyToHost(bytes, 0x3000, 16);
  recorded_.closeMemHandle(0x2000, 1);
  recorded_.freeDeviceMem(0x1000);
  EXPECT_EQ(lines(log_), (std::vector<std::string>{
                             "call allocUncached peer=-1 [bytes=64]",
                             "return allocUncached peer=-1 [ptr=0x1000]",
                             "call getMemHandle peer=-1 [ptr=0x1000]",
                             "return getMemHandle peer=-1 []",
                             "call openMemHandle peer=1 []",
                             "return openMemHandle peer=1 [ptr=0x2000]",
                             "call allocDevice peer=-1 [bytes=16]",
                             "return allocDevice peer=-1 [ptr=0x3000]",
                             "call copyToDevice peer=-1 [ptr=0x3000]",
                             "return copyToDevice peer=-1 []",
                             "call copyToHost peer=-1 [ptr=0x3000]",
                             "return copyToHost peer=-1 []",
                             "call closeMemHandle peer=1 [ptr=0x2000]",
                             "return closeMemHandle peer=1 []",
                             "call freeDeviceMem peer=-1 [ptr=0x1000]",
                             "return freeDeviceMem peer=-1 []",
                         }));
}

TEST_F(RecordingBackendTest, AThrowIsRecordedAndTheSameExceptionReachesTheCaller) {
  const BackendError error(Op::kOpenHandle, 0, 2, 1, "hipErrorInvalidValue", "hipIpcOpenMemHandle");
  EXPECT_CALL(inner_, openMemHandle(_, 2)).WillOnce(Throw(error));
  EXPECT_CALL(inner_, freeDeviceMem(DevicePtr{0x10})).WillOnce(Throw(std::runtime_error("gone")));
  try {
    recorded_.openMemHandle(IpcHandle{}, 2);
    ADD_FAILURE() << "openMemHandle returned";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.peer(), 2);
    EXPECT_EQ(e.code(), 1);
  }
  EXPECT_THROW(recorded_.freeDeviceMem(0x10), std::runtime_error);
  const auto got = lines(log_);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "call openMemHandle peer=2 []");
  EXPECT_EQ(got[1], "throw openMemHandle peer=2 [" + std::string(error.what()) + "]");
  EXPECT_EQ(got[2], "call freeDeviceMem peer=-1 [ptr=0x10]");
  EXPECT_EQ(got[3], "throw freeDeviceMem peer=-1 [gone]");
}

TEST_F(RecordingBackendTest, RankIsForwardedAndNotRecorded) {
  EXPECT_CALL(inner_, rank()).WillOnce(Return(5));
  EXPECT_EQ(recorded_.rank(), 5);
  EXPECT_TRUE(log_.events().empty());
}

TEST_F(RecordingGroupTest, AgreementAndGatherAreRecordedWithTheirValues) {
  const std::vector<std::vector<std::byte>> gathered{{std::byte{1}}, {std::byte{2}}};
  {
    InSequence order;
    EXPECT_CALL(inner_, allReduceMin(3)).WillOnce(Return(1));
    EXPECT_CALL(inner_, allGather(_)).WillOnce(Return(gathered));
  }
  EXPECT_EQ(recorded_.allReduceMin(3), 1);
  const std::byte mine[4] = {};
  EXPECT_EQ(recorded_.allGather(mine), gathered);
  EXPECT_EQ(lines(log_), (std::vector<std::string>{
                             "call allReduceMin peer=-1 [in=3]",
                             "return allReduceMin peer=-1 [out=1]",
                             "call allGather peer=-1 [bytes=4]",
                             "return allGather peer=-1 []",
                         }));
  for (const Event& e : log_.events()) EXPECT_EQ(e.rank, 1);
}

TEST_F(RecordingGroupTest, ATimeoutIsRecordedAsAThrowAndRethrown) {
  EXPECT_CALL(inner_, allReduceMin(1)).WillOnce(Throw(GroupTimeout(Op::kAllReduce, 1, 0.5)));
  EXPECT_THROW(recorded_.allReduceMin(1), GroupTimeout);
  const auto got = lines(log_);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "call allReduceMin peer=-1 [in=1]");
  EXPECT_EQ(got[1].rfind("throw allReduceMin peer=-1 [", 0), 0u) << got[1];
}

TEST_F(RecordingGroupTest, RankAndSizeAreForwardedAndNotRecorded) {
  EXPECT_CALL(inner_, rank()).WillOnce(Return(1));
  EXPECT_CALL(inner_, size()).WillOnce(Return(4));
  EXPECT_EQ(recorded_.rank(), 1);
  EXPECT_EQ(recorded_.size(), 4);
  EXPECT_TRUE(log_.events().empty());
}

}  // namespace
}  // namespace peerconf::harness
