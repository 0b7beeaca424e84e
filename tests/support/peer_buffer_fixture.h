// The mocked seams (mock_seams.h) wired for rank `rank` of `n`: the fixture of PeerBuffer's and
// Handshake's tests, with the expectations of a handshake's allocation, exchange, opens and table.
#pragma once

#include <gmock/gmock.h>

#include <cstdint>

#include "mock_seams.h"
#include "peer_buffer_test_support.h"

namespace peerconf::testing {

MATCHER_P(IsHandleOf, rank, "") { return arg == handleOf(rank); }

struct PeerBufferFixture {
  ::testing::StrictMock<MockIpcBackend> backend;
  ::testing::StrictMock<MockGroup> group;
  int rank;
  int n;

  PeerBufferFixture(int rank, int n) : rank(rank), n(n) {
    ON_CALL(backend, rank()).WillByDefault(::testing::Return(rank));
    EXPECT_CALL(backend, rank()).Times(::testing::AnyNumber());
    EXPECT_CALL(group, rank()).WillRepeatedly(::testing::Return(rank));
    EXPECT_CALL(group, size()).WillRepeatedly(::testing::Return(n));
  }
  void expectAllocAndExchange() {
    EXPECT_CALL(backend, allocUncached(kBytes)).WillOnce(::testing::Return(kLocal));
    EXPECT_CALL(backend, getMemHandle(kLocal)).WillOnce(::testing::Return(handleOf(rank)));
    EXPECT_CALL(group, allGather(::testing::_)).WillOnce(::testing::Return(gathered(n)));
  }
  void expectOpen(int peer) {
    EXPECT_CALL(backend, openMemHandle(IsHandleOf(peer), peer))
        .WillOnce(::testing::Return(mappingOf(peer)));
  }
  void expectTable() {
    EXPECT_CALL(backend, allocDevice(n * sizeof(std::int64_t))).WillOnce(::testing::Return(kTable));
    EXPECT_CALL(backend, copyToDevice(kTable, ::testing::_, n * sizeof(std::int64_t)));
  }
};

}  // namespace peerconf::testing
