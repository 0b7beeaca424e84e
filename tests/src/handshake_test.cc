// Handshake, the phases of PeerBuffer's constructor that the planted cores (tests/planted) override
// one at a time: a replaced phase leaves every other one to production, in the protocol's order.
#include "handshake.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "errors.h"
#include "peer_buffer.h"
#include "peer_buffer_fixture.h"
#include "peer_buffer_test_support.h"

namespace peerconf {
namespace {

using ::testing::_;
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
  EXPECT_EQ(phases, (std::vector<std::string>{"allocateAndExport", "exchange", "decode", "mapPeers",
                                              "openPeers", "buildTable", "agree(mapped)"}));
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
  EXPECT_EQ(phases, (std::vector<std::string>{"allocateAndExport", "exchange", "decode", "mapPeers",
                                              "openPeers", "agree(failed)"}));
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

}  // namespace
}  // namespace peerconf
