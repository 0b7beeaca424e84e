// Unit tests of every branch of PeerBuffer's constructor and close(), against gMock mocks of both
// seams.
#include "peer_buffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "caught.h"
#include "errors.h"
#include "exchange_entry.h"
#include "mock_seams.h"
#include "peer_buffer_fixture.h"
#include "peer_buffer_test_support.h"

namespace peerconf {
namespace {

using ::testing::_;
using testing::caught;
using testing::gathered;
using testing::handleOf;
using ::testing::InSequence;
using testing::IsHandleOf;
using testing::kBytes;
using testing::kLocal;
using testing::kTable;
using testing::mappingOf;
using testing::MockGroup;
using testing::MockIpcBackend;
using ::testing::NiceMock;
using testing::PeerBufferFixture;
using testing::rethrown;
using ::testing::Return;
using ::testing::StrictMock;

enum class FailedOn { kThisRank, kAnotherRank };

// The HandshakeError that constructing f's PeerBuffer raises, checked to say it failed on `where`
// (test failures when the constructor returns or the error says otherwise).
std::optional<HandshakeError> failedHandshake(PeerBufferFixture& f, FailedOn where) {
  auto e = caught<HandshakeError>([&] { PeerBuffer buffer(kBytes, f.backend, &f.group); });
  if (e) {
    const bool thisRank = where == FailedOn::kThisRank;
    EXPECT_EQ(e->thisRank(), thisRank);
    EXPECT_STREQ(e->what(), thisRank ? "peer memory handshake failed on this TP rank"
                                     : "peer memory handshake failed on another TP rank");
  }
  return e;
}

BackendError openError(int rank, int peer) {
  return BackendError(Op::kOpenHandle, rank, peer, 205, "mapping failed");
}

TEST(PeerBufferTest, SuccessOpensEveryPeerInRankOrderButNeverItself) {
  PeerBufferFixture f(1, 4);
  {
    InSequence seq;
    f.expectAllocAndExchange();
    f.expectOpen(0);
    f.expectOpen(2);
    f.expectOpen(3);
    f.expectTable();
    EXPECT_CALL(f.group, allReduceMin(1)).WillOnce(Return(1));
  }
  EXPECT_CALL(f.backend, openMemHandle(_, 1)).Times(0);
  PeerBuffer buffer(kBytes, f.backend, &f.group);
  EXPECT_EQ(buffer.rank(), 1);
  EXPECT_EQ(buffer.size(), 4);
  EXPECT_EQ(buffer.bytes().data, kLocal);
  EXPECT_EQ(buffer.bytes().size, kBytes);
  EXPECT_EQ(buffer.addressesDevice(), kTable);
  EXPECT_THAT(buffer.addresses(),
              ::testing::ElementsAre(mappingOf(0), kLocal, mappingOf(2), mappingOf(3)));

  {
    InSequence seq;
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(0), 0));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(2), 2));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(3), 3));
    EXPECT_CALL(f.backend, freeDeviceMem(kTable));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  buffer.close();
  EXPECT_EQ(buffer.bytes().data, 0u);
  EXPECT_TRUE(buffer.addresses().empty());
  buffer.close();  // idempotent: the StrictMock rejects any second release
}

TEST(PeerBufferTest, TableCopiedToDeviceHoldsTheAddresses) {
  PeerBufferFixture f(0, 2);
  f.expectAllocAndExchange();
  f.expectOpen(1);
  std::vector<std::int64_t> copied;
  EXPECT_CALL(f.backend, allocDevice(2 * sizeof(std::int64_t))).WillOnce(Return(kTable));
  EXPECT_CALL(f.backend, copyToDevice(kTable, _, 2 * sizeof(std::int64_t)))
      .WillOnce([&](DevicePtr, const void* src, std::size_t n) {
        const auto* p = static_cast<const std::int64_t*>(src);
        copied.assign(p, p + n / sizeof(std::int64_t));
      });
  EXPECT_CALL(f.group, allReduceMin(1)).WillOnce(Return(1));
  PeerBuffer buffer(kBytes, f.backend, &f.group);
  EXPECT_EQ(copied, buffer.addresses());
  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
  EXPECT_CALL(f.backend, freeDeviceMem(_)).Times(2);
}

// Failure opening the k-th peer (k counted over the peers this rank opens, 1-based): exactly the
// k-1 opened mappings are closed, the local buffer is freed, the rank says "this" and chains the
// backend error, and it still reaches the agreement with 0.
class OpenFailureTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(OpenFailureTest, ClosesExactlyWhatWasOpenedAndRaisesThis) {
  // Not a structured binding: clang 14 (the asan preset's compiler) cannot capture one.
  const int rank = std::get<0>(GetParam());
  const int n = std::get<1>(GetParam());
  const int k = std::get<2>(GetParam());
  PeerBufferFixture f(rank, n);
  std::vector<int> peers;
  for (int p = 0; p < n; ++p) {
    if (p != rank) peers.push_back(p);
  }
  const int failingPeer = peers[static_cast<std::size_t>(k - 1)];
  {
    InSequence seq;
    f.expectAllocAndExchange();
    for (int i = 0; i < k - 1; ++i) f.expectOpen(peers[static_cast<std::size_t>(i)]);
    EXPECT_CALL(f.backend, openMemHandle(IsHandleOf(failingPeer), failingPeer))
        .WillOnce([&](const IpcHandle&, int peer) -> DevicePtr { throw openError(rank, peer); });
    EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
    for (int i = 0; i < k - 1; ++i) {
      const int p = peers[static_cast<std::size_t>(i)];
      EXPECT_CALL(f.backend, closeMemHandle(mappingOf(p), p));
    }
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  // No open past the failure, and no addresses table.
  EXPECT_CALL(f.backend, allocDevice(_)).Times(0);
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rank(), rank);
  const auto cause = rethrown<BackendError>(e->cause());
  ASSERT_TRUE(cause);
  EXPECT_EQ(cause->peer(), failingPeer);
  EXPECT_EQ(cause->code(), 205);
  EXPECT_EQ(cause->op(), Op::kOpenHandle);
}

std::vector<std::tuple<int, int, int>> openFailureCases() {
  std::vector<std::tuple<int, int, int>> cases;
  for (int n : {2, 3, 4, 8}) {
    for (int rank = 0; rank < n; ++rank) {
      if (rank != 0 && rank != n / 2 && rank != n - 1) continue;
      for (int k = 1; k < n; ++k) cases.emplace_back(rank, n, k);
    }
  }
  return cases;
}

std::string openFailureName(const ::testing::TestParamInfo<std::tuple<int, int, int>>& info) {
  return "rank" + std::to_string(std::get<0>(info.param)) + "of" +
         std::to_string(std::get<1>(info.param)) + "_k" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(EveryK, OpenFailureTest, ::testing::ValuesIn(openFailureCases()),
                         openFailureName);

TEST(PeerBufferTest, AnotherRankFailedRaisesAnotherAndReleasesEverything) {
  PeerBufferFixture f(2, 3);
  {
    InSequence seq;
    f.expectAllocAndExchange();
    f.expectOpen(0);
    f.expectOpen(1);
    f.expectTable();
    EXPECT_CALL(f.group, allReduceMin(1)).WillOnce(Return(0));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(0), 0));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
    EXPECT_CALL(f.backend, freeDeviceMem(kTable));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  const auto e = failedHandshake(f, FailedOn::kAnotherRank);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->cause());
  EXPECT_TRUE(e->cleanupErrors().empty());
}

TEST(PeerBufferTest, TableAllocationFailureIsAgreedOnAsThisRank) {
  PeerBufferFixture f(0, 2);
  {
    InSequence seq;
    f.expectAllocAndExchange();
    f.expectOpen(1);
    EXPECT_CALL(f.backend, allocDevice(_)).WillOnce([](std::size_t) -> DevicePtr {
      throw BackendError(Op::kAlloc, 0, kNoPeer, 2, "out of memory");
    });
    EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  EXPECT_TRUE(failedHandshake(f, FailedOn::kThisRank));
}

TEST(PeerBufferTest, CleanupErrorsOnTheFailurePathAreKeptOnTheHandshakeError) {
  PeerBufferFixture f(0, 3);
  f.expectAllocAndExchange();
  f.expectOpen(1);
  EXPECT_CALL(f.backend, openMemHandle(_, 2)).WillOnce([](const IpcHandle&, int peer) -> DevicePtr {
    throw openError(0, peer);
  });
  EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1)).WillOnce([](DevicePtr, int peer) {
    throw BackendError(Op::kCloseHandle, 0, peer, 1, "invalid argument");
  });
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->cleanupErrors().size(), 1u);
  EXPECT_THAT(e->cleanupErrors()[0], ::testing::HasSubstr("peer 1"));
}

TEST(PeerBufferTest, SingleRankWithoutGroupNeitherExchangesNorAgrees) {
  StrictMock<MockIpcBackend> backend;
  EXPECT_CALL(backend, rank()).WillRepeatedly(Return(0));
  EXPECT_CALL(backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(backend, allocDevice(sizeof(std::int64_t))).WillOnce(Return(kTable));
  EXPECT_CALL(backend, copyToDevice(kTable, _, sizeof(std::int64_t)));
  PeerBuffer buffer(kBytes, backend, nullptr);
  EXPECT_THAT(buffer.addresses(), ::testing::ElementsAre(kLocal));
  EXPECT_EQ(buffer.size(), 1);
  EXPECT_CALL(backend, freeDeviceMem(kTable));
  EXPECT_CALL(backend, freeDeviceMem(kLocal));
  buffer.close();
}

TEST(PeerBufferTest, SingleRankGroupNeitherExchangesNorAgrees) {
  PeerBufferFixture f(0, 1);  // StrictMock: any allGather/allReduceMin fails the test
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  f.expectTable();
  PeerBuffer buffer(kBytes, f.backend, &f.group);
  EXPECT_THAT(buffer.addresses(), ::testing::ElementsAre(kLocal));
  EXPECT_CALL(f.backend, freeDeviceMem(_)).Times(2);
}

TEST(PeerBufferTest, CloseErrorOnOneMappingStillClosesTheRestAndFrees) {
  PeerBufferFixture f(0, 4);
  f.expectAllocAndExchange();
  for (int p = 1; p < 4; ++p) f.expectOpen(p);
  f.expectTable();
  EXPECT_CALL(f.group, allReduceMin(1)).WillOnce(Return(1));
  PeerBuffer buffer(kBytes, f.backend, &f.group);

  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(2), 2)).WillOnce([](DevicePtr, int peer) {
    throw BackendError(Op::kCloseHandle, 0, peer, 1, "invalid argument");
  });
  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(3), 3));
  EXPECT_CALL(f.backend, freeDeviceMem(kTable));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = caught<CloseError>([&] { buffer.close(); });  // close() hides no failed release
  ASSERT_TRUE(e);
  ASSERT_EQ(e->failures().size(), 1u);
  EXPECT_THAT(e->failures()[0], ::testing::HasSubstr("peer 2"));
  buffer.close();  // everything was released once; nothing is retried
}

TEST(PeerBufferTest, AllocFailureJoinsTheExchangeWithAFailureRecordAndRaisesThis) {
  PeerBufferFixture f(0, 2);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce([](std::size_t) -> DevicePtr {
    throw BackendError(Op::kAlloc, 0, kNoPeer, 2, "out of memory");
  });
  auto answer = gathered(2);
  answer[0] = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  // StrictMock: no getMemHandle, no open, no agreement, nothing to free.
  EXPECT_CALL(f.group, allGather(::testing::ElementsAreArray(answer[0]))).WillOnce(Return(answer));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  const auto cause = rethrown<BackendError>(e->cause());
  ASSERT_TRUE(cause);
  EXPECT_EQ(cause->op(), Op::kAlloc);
  EXPECT_EQ(cause->code(), 2);
}

TEST(PeerBufferTest, GetHandleFailureFreesTheLocalBufferAndRaisesThis) {
  PeerBufferFixture f(1, 2);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce([](DevicePtr) -> IpcHandle {
    throw BackendError(Op::kGetHandle, 1, kNoPeer, 1, "invalid argument");
  });
  auto answer = gathered(2);
  answer[1] = ExchangeEntry::encode(ExchangeFailure{Op::kGetHandle, 1});
  EXPECT_CALL(f.group, allGather(::testing::ElementsAreArray(answer[1]))).WillOnce(Return(answer));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_THAT(describe(e->cause()), ::testing::HasSubstr("get-handle"));
}

TEST(PeerBufferTest, AnyExceptionFromAllocIsSentAsAFailureRecord) {
  PeerBufferFixture f(0, 2);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce([](std::size_t) -> DevicePtr {
    throw std::bad_alloc();
  });
  auto answer = gathered(2);
  answer[0] = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 0});
  EXPECT_CALL(f.group, allGather(::testing::ElementsAreArray(answer[0]))).WillOnce(Return(answer));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_TRUE(rethrown<std::bad_alloc>(e->cause()));
}

// The other side: a peer's failure record makes this rank release and raise "another" at once,
// before opening anything and without waiting in an agreement.
TEST(PeerBufferTest, APeersFailureRecordRaisesAnotherWithoutOpeningOrAgreeing) {
  PeerBufferFixture f(0, 3);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
  auto answer = gathered(3);
  answer[2] = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  EXPECT_CALL(f.group, allGather(_)).WillOnce(Return(answer));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = failedHandshake(f, FailedOn::kAnotherRank);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->cause(), nullptr);
}

TEST(PeerBufferTest, SingleRankAllocFailureIsRethrownAsIs) {
  StrictMock<MockIpcBackend> backend;
  EXPECT_CALL(backend, rank()).Times(::testing::AnyNumber());
  EXPECT_CALL(backend, allocUncached(kBytes)).WillOnce([](std::size_t) -> DevicePtr {
    throw BackendError(Op::kAlloc, 0, kNoPeer, 2, "out of memory");
  });
  EXPECT_THROW(PeerBuffer(kBytes, backend, nullptr), BackendError);
}

TEST(PeerBufferTest, AgreementTimeoutReleasesThenPropagates) {
  PeerBufferFixture f(0, 2);
  f.expectAllocAndExchange();
  f.expectOpen(1);
  f.expectTable();
  EXPECT_CALL(f.group, allReduceMin(1)).WillOnce([](int) -> int {
    throw GroupTimeout(Op::kAllReduce, 0, 1.0);
  });
  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
  EXPECT_CALL(f.backend, freeDeviceMem(kTable));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  EXPECT_THROW(PeerBuffer(kBytes, f.backend, &f.group), GroupTimeout);
}

TEST(PeerBufferTest, MalformedHandleFromTheGroupIsThisRanksFailure) {
  PeerBufferFixture f(0, 2);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
  auto handles = gathered(2);
  handles[1].resize(7);  // a malformed entry: kept as this rank's failure and agreed on
  EXPECT_CALL(f.group, allGather(_)).WillOnce(Return(handles));
  EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_THAT(describe(e->cause()), ::testing::HasSubstr("peer 1"));
}

TEST(PeerBufferTest, AnExchangeOfTheWrongLengthIsAnAgreedGroupError) {
  PeerBufferFixture f(0, 3);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
  EXPECT_CALL(f.group, allGather(_)).WillOnce(Return(gathered(2)));
  EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_TRUE(rethrown<GroupError>(e->cause()));
}

TEST(PeerBufferTest, AnyExceptionWhileOpeningIsAgreedOnAndReleased) {
  PeerBufferFixture f(0, 3);
  f.expectAllocAndExchange();
  f.expectOpen(1);
  EXPECT_CALL(f.backend, openMemHandle(IsHandleOf(2), 2))
      .WillOnce(
          [](const IpcHandle&, int) -> DevicePtr { throw std::runtime_error("not one of ours"); });
  EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
  EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_EQ(describe(e->cause()), "not one of ours");
}

TEST(PeerBufferTest, DestructorReleasesWhatCloseWasNotCalledFor) {
  PeerBufferFixture f(0, 2);
  f.expectAllocAndExchange();
  f.expectOpen(1);
  f.expectTable();
  EXPECT_CALL(f.group, allReduceMin(1)).WillOnce(Return(1));
  {
    PeerBuffer buffer(kBytes, f.backend, &f.group);
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
    EXPECT_CALL(f.backend, freeDeviceMem(kTable));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
}

// Any std::exception from the open phase, not only peerconf::Error, is this rank's failure: kept,
// agreed on (in=0, so no peer waits out its deadline), released, and chained as the cause.
TEST(PeerBufferTest, NonErrorExceptionWhileOpeningIsAgreedOnAndChained) {
  PeerBufferFixture f(0, 3);
  {
    InSequence seq;
    f.expectAllocAndExchange();
    f.expectOpen(1);
    EXPECT_CALL(f.backend, openMemHandle(IsHandleOf(2), 2))
        .WillOnce([](const IpcHandle&, int) -> DevicePtr { throw std::bad_alloc(); });
    EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(1), 1));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  EXPECT_CALL(f.backend, allocDevice(_)).Times(0);
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_TRUE(rethrown<std::bad_alloc>(e->cause()));
}

TEST(PeerBufferTest, NonErrorExceptionWhileBuildingTheTableIsAgreedOnAndReleased) {
  PeerBufferFixture f(1, 2);
  {
    InSequence seq;
    f.expectAllocAndExchange();
    f.expectOpen(0);
    EXPECT_CALL(f.backend, allocDevice(2 * sizeof(std::int64_t))).WillOnce(Return(kTable));
    EXPECT_CALL(f.backend, copyToDevice(kTable, _, _))
        .WillOnce([](DevicePtr, const void*, std::size_t) {
          throw std::runtime_error("driver said no");
        });
    EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(0), 0));
    EXPECT_CALL(f.backend, freeDeviceMem(kTable));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  EXPECT_EQ(describe(e->cause()), "driver said no");
}

TEST(PeerBufferTest, SingleRankNonErrorExceptionReleasesThenPropagates) {
  StrictMock<MockIpcBackend> backend;
  EXPECT_CALL(backend, rank()).WillRepeatedly(Return(0));
  EXPECT_CALL(backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(backend, allocDevice(_)).WillOnce([](std::size_t) -> DevicePtr {
    throw std::bad_alloc();
  });
  EXPECT_CALL(backend, freeDeviceMem(kLocal));
  EXPECT_THROW(PeerBuffer(kBytes, backend, nullptr), std::bad_alloc);
}

// The exchange must return one handle per rank. A list of another length is a GroupError kept as
// this rank's failure: agreed on (so the other ranks raise "another" instead of timing out),
// released, and chained. Longer and shorter lists alike.
class HandleCountTest : public ::testing::TestWithParam<int> {};

TEST_P(HandleCountTest, WrongNumberOfHandlesIsAGroupErrorAgreedOn) {
  const int count = GetParam();
  PeerBufferFixture f(0, 3);
  auto handles = gathered(3);
  handles.resize(static_cast<std::size_t>(count), handles.front());
  {
    InSequence seq;
    EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce(Return(handleOf(0)));
    EXPECT_CALL(f.group, allGather(_)).WillOnce(Return(handles));
    EXPECT_CALL(f.group, allReduceMin(0)).WillOnce(Return(0));
    EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  }
  EXPECT_CALL(f.backend, openMemHandle(_, _)).Times(0);
  EXPECT_CALL(f.backend, allocDevice(_)).Times(0);
  const auto e = failedHandshake(f, FailedOn::kThisRank);
  ASSERT_TRUE(e);
  const auto cause = rethrown<GroupError>(e->cause());
  ASSERT_TRUE(cause);
  EXPECT_EQ(cause->op(), Op::kAllGather);
  EXPECT_THAT(cause->what(), ::testing::HasSubstr("returned " + std::to_string(count) +
                                                  " entries for a group of 3"));
}

INSTANTIATE_TEST_SUITE_P(LongerAndShorter, HandleCountTest, ::testing::Values(0, 2, 4));

}  // namespace
}  // namespace peerconf
