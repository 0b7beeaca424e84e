// Handshake, the phases of PeerBuffer's constructor that the planted cores (tests/planted) override
// one at a time: a replaced phase leaves every other one to production, in the protocol's order.
#include "handshake.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "caught.h"
#include "errors.h"
#include "exchange_entry.h"
#include "peer_buffer.h"
#include "peer_buffer_fixture.h"
#include "peer_buffer_test_support.h"

namespace peerconf {
namespace {

using ::testing::_;
using testing::caught;
using testing::entryOf;
using testing::gathered;
using testing::handleOf;
using ::testing::InSequence;
using testing::IsHandleOf;
using testing::kBytes;
using testing::kLocal;
using testing::kTable;
using testing::mappingOf;
using testing::PeerBufferFixture;
using ::testing::Return;

// The phases the planted cores (tests/planted) build on: a Handshake that replaces one phase runs
// every other one as production does, in the protocol's order, on the buffer it builds.
class RecordingHandshake : public Handshake {
 public:
  explicit RecordingHandshake(std::vector<std::string>& phases) : phases_(phases) {}

 protected:
  void allocateAndExport(std::size_t nbytes) override {
    phases_.emplace_back("allocateAndExport");
    Handshake::allocateAndExport(nbytes);
  }
  void exchange() override {
    phases_.emplace_back("exchange");
    Handshake::exchange();
  }
  void decode() override {
    phases_.emplace_back("decode");
    Handshake::decode();
  }
  void match() override {
    phases_.emplace_back("match");
    Handshake::match();
  }
  void mapPeers() override {
    phases_.emplace_back("mapPeers");
    Handshake::mapPeers();
  }
  void openPeers() override {
    phases_.emplace_back("openPeers");
    Handshake::openPeers();
  }
  void buildTable() override {
    phases_.emplace_back("buildTable");
    Handshake::buildTable();
  }
  // Replaced: agrees without the group (the StrictMock rejects any allReduceMin).
  bool agree(bool mapped) override {
    phases_.emplace_back(mapped ? "agree(mapped)" : "agree(failed)");
    return true;
  }

 private:
  std::vector<std::string>& phases_;
};

class RecordedBuffer : public PeerBuffer {
 public:
  RecordedBuffer(IpcBackend& backend, Group* group, std::vector<std::string>& phases)
      : PeerBuffer(kBytes, backend, group, RecordingHandshake(phases)) {}
};

TEST(HandshakeTest, AReplacedPhaseLeavesTheOthersToProductionInProtocolOrder) {
  PeerBufferFixture f(0, 3);
  {
    InSequence seq;
    f.expectAllocAndExchange();
    f.expectOpen(1);
    f.expectOpen(2);
    f.expectTable();
  }
  std::vector<std::string> phases;
  RecordedBuffer buffer(f.backend, &f.group, phases);
  EXPECT_EQ(phases,
            (std::vector<std::string>{"allocateAndExport", "exchange", "decode", "match",
                                      "mapPeers", "openPeers", "buildTable", "agree(mapped)"}));
  EXPECT_THAT(buffer.addresses(), ::testing::ElementsAre(kLocal, mappingOf(1), mappingOf(2)));
  EXPECT_EQ(buffer.addressesDevice(), kTable);
  EXPECT_CALL(f.backend, closeMemHandle(_, _)).Times(2);
  EXPECT_CALL(f.backend, freeDeviceMem(_)).Times(2);
}

TEST(HandshakeTest, AReplacedPhaseSeesTheFailureKeptBeforeIt) {
  PeerBufferFixture f(1, 2);
  f.expectAllocAndExchange();
  EXPECT_CALL(f.backend, openMemHandle(IsHandleOf(0), 0))
      .WillOnce([](const IpcHandle&, int) -> DevicePtr {
        throw BackendError(Op::kOpenHandle, 1, 0, 205, "mapping failed");
      });
  std::vector<std::string> phases;
  // The replaced agreement says yes: the buffer is returned, holding what it opened (nothing).
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  {
    RecordedBuffer buffer(f.backend, &f.group, phases);
    EXPECT_EQ(buffer.addressesDevice(), 0u);
  }
  EXPECT_EQ(phases, (std::vector<std::string>{"allocateAndExport", "exchange", "decode", "match",
                                              "mapPeers", "openPeers", "agree(failed)"}));
}

TEST(HandshakeTest, ASingleRankRunsNeitherExchangeNorAgreementPhase) {
  PeerBufferFixture f(0, 1);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  f.expectTable();
  std::vector<std::string> phases;
  RecordedBuffer buffer(f.backend, &f.group, phases);
  EXPECT_EQ(phases,
            (std::vector<std::string>{"allocateAndExport", "mapPeers", "openPeers", "buildTable"}));
  EXPECT_CALL(f.backend, freeDeviceMem(_)).Times(2);
}

// The registration check (match): every rank's entry carries its size and label, and a rank that
// registered another buffer than rank 0 makes every rank raise the same BufferMismatchError
// before opening any peer. StrictMock: no open, no table, no agreement.

// Rank `rank` of `n` constructs kBytes labelled `label`; the exchange answers `answer`. Returns the
// error, expecting the local buffer freed and this rank's own entry sent.
std::optional<BufferMismatchError> mismatchOn(int rank, int n, const std::string& label,
                                              const std::vector<std::vector<std::byte>>& answer) {
  PeerBufferFixture f(rank, n);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce(Return(handleOf(rank)));
  EXPECT_CALL(f.group, allGather(::testing::ElementsAreArray(entryOf(rank, kBytes, label))))
      .WillOnce(Return(answer));
  EXPECT_CALL(f.backend, freeDeviceMem(kLocal));
  return caught<BufferMismatchError>(
      [&] { PeerBuffer buffer(kBytes, f.backend, &f.group, label); });
}

TEST(HandshakeMatchTest, ASizeMismatchIsRaisedByEveryRankBeforeAnyOpen) {
  auto answer = gathered(3);
  answer[2] = entryOf(2, 2 * kBytes);
  for (const int rank : {0, 1}) {
    const auto e = mismatchOn(rank, 3, "", answer);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rank(), rank);
    EXPECT_EQ(e->op(), Op::kHandshake);
    EXPECT_EQ(e->reference(), (RegisteredBuffer{0, kBytes, ""}));
    EXPECT_EQ(e->mismatches(), (std::vector<RegisteredBuffer>{{2, 2 * kBytes, ""}}));
    EXPECT_THAT(e->what(), ::testing::HasSubstr("rank 2 registered an unlabelled buffer (8192 "
                                                "bytes) where rank 0 registered an unlabelled "
                                                "buffer (4096 bytes)"));
  }
}

// PyTorch PR 198024's incident: the sizes match, only the label tells the buffers apart.
TEST(HandshakeMatchTest, ALabelMismatchOfEqualSizesIsRaisedIdenticallyOnEveryRank) {
  std::vector<std::vector<std::byte>> answer = {entryOf(0, kBytes, "weights"),
                                                entryOf(1, kBytes, "kv-cache")};
  const auto on0 = mismatchOn(0, 2, "weights", answer);
  const auto on1 = mismatchOn(1, 2, "kv-cache", answer);
  ASSERT_TRUE(on0);
  ASSERT_TRUE(on1);
  EXPECT_STREQ(on0->what(), on1->what());
  EXPECT_THAT(on0->what(), ::testing::HasSubstr("rank 1 registered 'kv-cache' (4096 bytes) where "
                                                "rank 0 registered 'weights' (4096 bytes)"));
  EXPECT_EQ(on1->mismatches(), (std::vector<RegisteredBuffer>{{1, kBytes, "kv-cache"}}));
}

TEST(HandshakeMatchTest, ALabelOnSomeRanksOnlyIsAMismatch) {
  std::vector<std::vector<std::byte>> answer = {entryOf(0), entryOf(1, kBytes, "weights")};
  const auto e = mismatchOn(0, 2, "", answer);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->mismatches(), (std::vector<RegisteredBuffer>{{1, kBytes, "weights"}}));
}

TEST(HandshakeMatchTest, EqualLabelsOrNoLabelsAtAllCheckNothingBeyondTheSize) {
  for (const std::string label : {"", "weights"}) {
    PeerBufferFixture f(1, 2);
    EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
    EXPECT_CALL(f.backend, getMemHandle(kLocal)).WillOnce(Return(handleOf(1)));
    EXPECT_CALL(f.group, allGather(::testing::ElementsAreArray(entryOf(1, kBytes, label))))
        .WillOnce(Return(gathered(2, label)));
    f.expectOpen(0);
    f.expectTable();
    EXPECT_CALL(f.group, allReduceMin(1)).WillOnce(Return(1));
    PeerBuffer buffer(kBytes, f.backend, &f.group, label);
    EXPECT_EQ(buffer.label(), label);
    EXPECT_CALL(f.backend, closeMemHandle(mappingOf(0), 0));
    EXPECT_CALL(f.backend, freeDeviceMem(_)).Times(2);
  }
}

// A label that cannot travel is this rank's failure, sent as a failure record like an alloc
// failure: every rank raises together, nothing is allocated.
TEST(HandshakeMatchTest, ALabelTooLongIsSentAsAFailureRecordAndRaisesThis) {
  PeerBufferFixture f(0, 2);
  auto answer = gathered(2);
  answer[0] = ExchangeEntry::encode(ExchangeFailure{Op::kHandshake, 0});
  EXPECT_CALL(f.group, allGather(::testing::ElementsAreArray(answer[0]))).WillOnce(Return(answer));
  const std::string label(ExchangeEntry::kLabelSize + 1, 'x');
  const auto e =
      caught<HandshakeError>([&] { PeerBuffer buffer(kBytes, f.backend, &f.group, label); });
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->thisRank());
  EXPECT_THAT(describe(e->cause()), ::testing::HasSubstr("label"));
}

TEST(HandshakeMatchTest, ASingleRankChecksItsLabelAndNothingElse) {
  PeerBufferFixture f(0, 1);
  EXPECT_THROW(PeerBuffer(kBytes, f.backend, nullptr, "tab\there"), std::invalid_argument);
  EXPECT_CALL(f.backend, allocUncached(kBytes)).WillOnce(Return(kLocal));
  f.expectTable();
  PeerBuffer buffer(kBytes, f.backend, nullptr, "weights");
  EXPECT_CALL(f.backend, freeDeviceMem(_)).Times(2);
}

}  // namespace
}  // namespace peerconf
