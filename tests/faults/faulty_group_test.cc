// Unit tests of FaultyGroup against a gMock Group: group-fail never calls the inner collective,
// points apply before it, corrupt flips exactly the chosen peer's handle, and stale hands over a
// peer's freed scratch handle; then whole handshakes of the real PeerBuffer on threads over a
// small in-test runtime, checking that a stale handle is refused and nothing stays allocated.
#include "faults/faulty_group.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "errors.h"
#include "exchange_entry.h"
#include "faults/faulty_backend.h"
#include "faults_test_support.h"
#include "mock_seams.h"
#include "peer_buffer.h"

namespace peerconf::faults {
namespace {

using harness::model::FaultSite;
using harness::model::Point;
using harness::model::Scenario;
using peerconf::testing::MockGroup;
using ::testing::_;
using testing::BarrierGroup;
using testing::BarrierWorld;
using testing::Died;
using ::testing::ElementsAreArray;
using testing::fault;
using testing::MockRankControl;
using testing::RankUnderTest;
using ::testing::Return;
using testing::scenario;
using ::testing::SizeIs;
using ::testing::StrictMock;

using Bytes = std::vector<std::byte>;

Bytes handleBytes(int rank, std::byte tag = std::byte{0x10}) {
  Bytes b(IpcHandle::kSize);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>(i * 3 + rank) ^ tag;
  return b;
}
Bytes staleBytes(int rank) { return handleBytes(rank, std::byte{0x55}); }

Bytes inverted(Bytes b) {
  for (auto& x : b) x = ~x;
  return b;
}

IpcHandle asHandle(const Bytes& b) {
  IpcHandle h;
  std::memcpy(h.bytes.data(), b.data(), IpcHandle::kSize);
  return h;
}

std::vector<Bytes> realHandles(int n) {
  std::vector<Bytes> out;
  for (int r = 0; r < n; ++r) out.push_back(handleBytes(r));
  return out;
}

std::vector<Bytes> realAndStale(int n) {
  std::vector<Bytes> out;
  for (int r = 0; r < n; ++r) {
    Bytes both = handleBytes(r);
    const Bytes stale = staleBytes(r);
    both.insert(both.end(), stale.begin(), stale.end());
    out.push_back(both);
  }
  return out;
}

struct GroupFixture {
  RankUnderTest r;
  StrictMock<MockGroup> inner;
  StrictMock<MockRankControl> control;
  FaultyGroup group;

  GroupFixture(const FaultPlan& plan, int rank, int n)
      : r(plan, rank), group(inner, *r.faults, control) {
    EXPECT_CALL(inner, rank()).WillRepeatedly(Return(rank));
    EXPECT_CALL(inner, size()).WillRepeatedly(Return(n));
  }
  std::vector<Bytes> exchange() {
    const Bytes mine = handleBytes(r.faults->rank());
    return group.allGather(mine);
  }
};

TEST(FaultyGroupTest, GroupFailAtExchangeThrowsWithoutCallingTheInnerAllGather) {
  auto f = fault(FaultSite::kGroupFail, {1});
  f.at = Point::kExchange;
  GroupFixture g(faultPlan(scenario(3, {f})), 1, 3);
  try {
    g.exchange();
    FAIL() << "no error";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.op(), Op::kAllGather);
    EXPECT_EQ(e.rank(), 1);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("injected"));
  }
  // The agreement is not affected.
  EXPECT_CALL(g.inner, allReduceMin(1)).WillOnce(Return(1));
  EXPECT_EQ(g.group.allReduceMin(1), 1);
}

TEST(FaultyGroupTest, GroupFailAtAgreeThrowsWithoutCallingTheInnerAllReduce) {
  auto f = fault(FaultSite::kGroupFail, {0});
  f.at = Point::kAgree;
  GroupFixture g(faultPlan(scenario(2, {f})), 0, 2);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realHandles(2)));
  EXPECT_EQ(g.exchange(), realHandles(2));
  try {
    g.group.allReduceMin(1);
    FAIL() << "no error";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.op(), Op::kAllReduce);
    EXPECT_EQ(e.rank(), 0);
  }
}

TEST(FaultyGroupTest, ForeignExceptionAtAGroupCallThrowsWithoutCallingTheInnerOne) {
  auto exchange = fault(FaultSite::kForeignException, {1});
  exchange.call = SeamCall::kExchange;
  GroupFixture g(faultPlan(scenario(2, {exchange})), 1, 2);
  EXPECT_THROW(g.exchange(), ForeignException);
  EXPECT_CALL(g.inner, allReduceMin(1)).WillOnce(Return(1));
  EXPECT_EQ(g.group.allReduceMin(1), 1) << "the agreement is not affected";

  auto agree = fault(FaultSite::kForeignException, {0});
  agree.call = SeamCall::kAgree;
  GroupFixture a(faultPlan(scenario(2, {agree})), 0, 2);
  EXPECT_CALL(a.inner, allGather(_)).WillOnce(Return(realHandles(2)));
  EXPECT_EQ(a.exchange(), realHandles(2));
  EXPECT_THROW(a.group.allReduceMin(1), ForeignException);
  EXPECT_EQ(a.r.faultEvents().at(0).what, "foreign-exception");
}

TEST(FaultyGroupTest, CollectiveOrderAtExchangeCallsTheAgreementFirstAndStopsOnItsError) {
  auto f = fault(FaultSite::kCollectiveOrder, {1});
  f.at = Point::kExchange;
  GroupFixture g(faultPlan(scenario(3, {f})), 1, 3);
  // A correct group fails the all-reduce that met the peers' all-gather: the rank never makes its
  // exchange, and the error is the group's own.
  EXPECT_CALL(g.inner, allReduceMin(1))
      .WillOnce(::testing::Throw(GroupError("mismatch", Op::kAllReduce, 1)));
  EXPECT_THROW(g.exchange(), GroupError);
  ASSERT_EQ(g.r.faultEvents().size(), 1u);
  EXPECT_EQ(g.r.faultEvents().at(0).what, "collective-order");
}

TEST(FaultyGroupTest, CollectiveOrderAtExchangeSwapsTheCallsUnderAGroupThatPairsThem) {
  auto f = fault(FaultSite::kCollectiveOrder, {1});
  f.at = Point::kExchange;
  GroupFixture g(faultPlan(scenario(2, {f})), 1, 2);
  ::testing::InSequence order;
  EXPECT_CALL(g.inner, allReduceMin(1)).WillOnce(Return(1));
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realHandles(2)));
  EXPECT_EQ(g.exchange(), realHandles(2)) << "the rank's own exchange, after the agreement";
}

TEST(FaultyGroupTest, CollectiveOrderAtAgreeCallsAnotherExchangeFirst) {
  auto f = fault(FaultSite::kCollectiveOrder, {0});
  f.at = Point::kAgree;
  GroupFixture g(faultPlan(scenario(2, {f})), 0, 2);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realHandles(2)));
  EXPECT_EQ(g.exchange(), realHandles(2)) << "the exchange is not affected";
  ::testing::InSequence order;
  EXPECT_CALL(g.inner, allGather(SizeIs(ExchangeEntry::kSize)))
      .WillOnce(::testing::Throw(GroupError("mismatch", Op::kAllGather, 0)));
  EXPECT_THROW(g.group.allReduceMin(1), GroupError);
  EXPECT_EQ(g.r.faultEvents().at(0).what, "collective-order");
}

TEST(FaultyGroupTest, CollectiveOrderOfAnotherRankPassesThrough) {
  auto f = fault(FaultSite::kCollectiveOrder, {1});
  f.at = Point::kExchange;
  GroupFixture g(faultPlan(scenario(2, {f})), 0, 2);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realHandles(2)));
  EXPECT_EQ(g.exchange(), realHandles(2));
  EXPECT_CALL(g.inner, allReduceMin(1)).WillOnce(Return(1));
  EXPECT_EQ(g.group.allReduceMin(1), 1);
  EXPECT_TRUE(g.r.faultEvents().empty());
}

TEST(FaultyGroupTest, GroupFailOfAnotherRankPassesThrough) {
  auto f = fault(FaultSite::kGroupFail, {1});
  f.at = Point::kAgree;
  GroupFixture g(faultPlan(scenario(2, {f})), 0, 2);
  EXPECT_CALL(g.inner, allReduceMin(0)).WillOnce(Return(0));
  EXPECT_EQ(g.group.allReduceMin(0), 0);
}

TEST(FaultyGroupTest, AnAllGatherThatIsNotAHandleExchangePassesUntouched) {
  auto f = fault(FaultSite::kGroupFail, {0});
  f.at = Point::kExchange;
  GroupFixture g(faultPlan(scenario(2, {f, fault(FaultSite::kHandleCorrupt, {0})})), 0, 2);
  const Bytes small{std::byte{1}, std::byte{2}};
  const std::vector<Bytes> both{small, small};
  EXPECT_CALL(g.inner, allGather(ElementsAreArray(small))).WillOnce(Return(both));
  EXPECT_EQ(g.group.allGather(small), both);
}

TEST(FaultyGroupTest, DeathAtExchangeAndAtAgreeStopsBeforeTheInnerCall) {
  auto atExchange = fault(FaultSite::kDeath, {0});
  atExchange.at = Point::kExchange;
  auto atAgree = fault(FaultSite::kDeath, {1});
  atAgree.at = Point::kAgree;
  const FaultPlan plan = faultPlan(scenario(2, {atExchange, atAgree}));
  GroupFixture g0(plan, 0, 2);
  EXPECT_CALL(g0.control, onDie(0, Point::kExchange));
  EXPECT_THROW(g0.exchange(), Died);

  GroupFixture g1(plan, 1, 2);
  EXPECT_CALL(g1.inner, allGather(_)).WillOnce(Return(realHandles(2)));
  g1.exchange();
  EXPECT_CALL(g1.control, onDie(1, Point::kAgree));
  EXPECT_THROW(g1.group.allReduceMin(1), Died);
}

// exchange-send stops the rank before it posts its entry (no inner call); exchange-recv after the
// inner all-gather returned: every other rank has its entry.
TEST(FaultyGroupTest, ExchangeSendStopsBeforeAndExchangeRecvAfterTheInnerAllGather) {
  auto send = fault(FaultSite::kHang, {0});
  send.at = Point::kExchangeSend;
  auto recv = fault(FaultSite::kExit, {1});
  recv.at = Point::kExchangeRecv;
  const FaultPlan plan = faultPlan(scenario(2, {send, recv}));
  GroupFixture g0(plan, 0, 2);
  EXPECT_CALL(g0.control, hang(0, Point::kExchangeSend)).WillOnce([](int, Point) {
    throw Died{0, Point::kExchangeSend};
  });
  EXPECT_THROW(g0.exchange(), Died);

  GroupFixture g1(plan, 1, 2);
  {
    ::testing::InSequence seq;
    EXPECT_CALL(g1.inner, allGather(_)).WillOnce(Return(realHandles(2)));
    EXPECT_CALL(g1.control, onExit(1, Point::kExchangeRecv, 1));
  }
  EXPECT_THROW(g1.exchange(), Died);
}

TEST(FaultyGroupTest, HangAtAgreeIsCalledBeforeTheInnerAllReduce) {
  auto f = fault(FaultSite::kHang, {0});
  f.at = Point::kAgree;
  GroupFixture g(faultPlan(scenario(2, {f})), 0, 2);
  ::testing::InSequence seq;
  EXPECT_CALL(g.control, hang(0, Point::kAgree));
  EXPECT_CALL(g.inner, allReduceMin(1)).WillOnce(Return(1));
  EXPECT_EQ(g.group.allReduceMin(1), 1);
}

TEST(FaultyGroupTest, DelayAtExchangeMakesTheRankLateThenExchanges) {
  auto f = fault(FaultSite::kDelay, {0});
  f.at = Point::kExchange;
  f.delay = std::chrono::milliseconds(50);
  GroupFixture g(faultPlan(scenario(2, {f})), 0, 2);
  std::chrono::steady_clock::time_point calledAt;
  EXPECT_CALL(g.inner, allGather(_)).WillOnce([&](std::span<const std::byte>) {
    calledAt = std::chrono::steady_clock::now();
    return realHandles(2);
  });
  const auto start = std::chrono::steady_clock::now();
  g.exchange();
  EXPECT_GE(calledAt - start, std::chrono::milliseconds(50));
}

TEST(FaultyGroupTest, CorruptFlipsExactlyTheChosenPeersHandle) {
  auto f = fault(FaultSite::kHandleCorrupt, {1});
  f.peer = 2;
  GroupFixture g(faultPlan(scenario(4, {f})), 1, 4);
  EXPECT_CALL(g.inner, allGather(ElementsAreArray(handleBytes(1))))
      .WillOnce(Return(realHandles(4)));
  const auto got = g.exchange();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], handleBytes(0));
  EXPECT_EQ(got[1], handleBytes(1));
  EXPECT_EQ(got[2], inverted(handleBytes(2)));
  EXPECT_EQ(got[3], handleBytes(3));
  for (std::size_t i = 0; i < IpcHandle::kSize; ++i) EXPECT_NE(got[2][i], handleBytes(2)[i]);
  const auto events = g.r.faultEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "handle-corrupt");
  EXPECT_EQ(events[0].peer, 2);
}

TEST(FaultyGroupTest, CorruptWithoutAPeerFlipsEveryPeerButNeverTheOwnSlot) {
  GroupFixture g(faultPlan(scenario(3, {fault(FaultSite::kHandleCorrupt, {0})})), 0, 3);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realHandles(3)));
  const auto got = g.exchange();
  EXPECT_EQ(got[0], handleBytes(0));
  EXPECT_EQ(got[1], inverted(handleBytes(1)));
  EXPECT_EQ(got[2], inverted(handleBytes(2)));
}

TEST(FaultyGroupTest, CorruptOfAnotherReceivingRankLeavesThisOneAlone) {
  auto f = fault(FaultSite::kHandleCorrupt, {1});
  f.peer = 0;
  GroupFixture g(faultPlan(scenario(3, {f})), 2, 3);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realHandles(3)));
  EXPECT_EQ(g.exchange(), realHandles(3));
}

TEST(FaultyGroupTest, StaleSendsRealAndStaleAndHandsOverThePeersStaleHandle) {
  auto f = fault(FaultSite::kHandleStale, {1});
  f.peer = 0;
  GroupFixture g(faultPlan(scenario(3, {f})), 1, 3);
  g.r.faults->putStaleHandle(asHandle(staleBytes(1)));
  Bytes sent = handleBytes(1);
  const Bytes myStale = staleBytes(1);
  sent.insert(sent.end(), myStale.begin(), myStale.end());
  EXPECT_CALL(g.inner, allGather(ElementsAreArray(sent))).WillOnce(Return(realAndStale(3)));
  const auto got = g.exchange();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], staleBytes(0));
  EXPECT_EQ(got[1], handleBytes(1));
  EXPECT_EQ(got[2], handleBytes(2));
  EXPECT_EQ(g.r.faultEvents().at(0).what, "handle-stale");
}

TEST(FaultyGroupTest, EveryRankSendsAStaleHandleButOnlyTheFaultedOneReceivesIt) {
  auto f = fault(FaultSite::kHandleStale, {1});
  GroupFixture g(faultPlan(scenario(3, {f})), 2, 3);
  g.r.faults->putStaleHandle(asHandle(staleBytes(2)));
  EXPECT_CALL(g.inner, allGather(::testing::SizeIs(2 * IpcHandle::kSize)))
      .WillOnce(Return(realAndStale(3)));
  EXPECT_EQ(g.exchange(), realHandles(3));
}

TEST(FaultyGroupTest, StaleAndCorruptOfOnePeerCorruptTheStaleHandle) {
  auto stale = fault(FaultSite::kHandleStale, {0});
  stale.peer = 1;
  auto corrupt = fault(FaultSite::kHandleCorrupt, {0});
  corrupt.peer = 1;
  GroupFixture g(faultPlan(scenario(2, {stale, corrupt})), 0, 2);
  g.r.faults->putStaleHandle(asHandle(staleBytes(0)));
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(realAndStale(2)));
  EXPECT_EQ(g.exchange()[1], inverted(staleBytes(1)));
}

// handle-mapped: every rank sends the handle of its previous, live buffer beside its entry (all
// zeros when it has none); only the faulted rank receives it, for the peer the fault names.
TEST(FaultyGroupTest, MappedHandsOverThePeersEarlierHandleAndRecordsIt) {
  auto f = fault(FaultSite::kHandleMapped, {1});
  f.peer = 2;
  GroupFixture g(faultPlan(scenario(3, {f})), 1, 3);
  g.r.faults->putMappedHandle(asHandle(staleBytes(1)));
  Bytes sent = handleBytes(1);
  const Bytes mine = staleBytes(1);
  sent.insert(sent.end(), mine.begin(), mine.end());
  EXPECT_CALL(g.inner, allGather(ElementsAreArray(sent))).WillOnce(Return(realAndStale(3)));
  const auto got = g.exchange();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], handleBytes(0));
  EXPECT_EQ(got[1], handleBytes(1));
  EXPECT_EQ(got[2], staleBytes(2));
  ASSERT_THAT(g.r.faultEvents(), SizeIs(1));
  EXPECT_EQ(g.r.faultEvents().at(0).what, "handle-mapped");
}

TEST(FaultyGroupTest, MappedFromAPeerWithoutAnEarlierBufferChangesNothingAndDoesNotFire) {
  GroupFixture g(faultPlan(scenario(2, {fault(FaultSite::kHandleMapped, {0})})), 0, 2);
  g.r.faults->putMappedHandle(IpcHandle{});
  std::vector<Bytes> answer;
  for (int r = 0; r < 2; ++r) {
    Bytes both = handleBytes(r);
    both.resize(2 * IpcHandle::kSize);  // no earlier buffer: an all-zero side handle
    answer.push_back(both);
  }
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(answer));
  EXPECT_EQ(g.exchange(), realHandles(2));
  EXPECT_TRUE(g.r.faultEvents().empty());
}

TEST(FaultyGroupTest, StaleWithoutTheBackendsStaleHandleIsAWiringError) {
  GroupFixture g(faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {0})})), 0, 2);
  EXPECT_THROW(g.exchange(), std::logic_error);
}

TEST(FaultyGroupTest, APeerThatSentNoStaleHandleIsAGroupErrorNamingIt) {
  GroupFixture g(faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {0})})), 0, 2);
  g.r.faults->putStaleHandle(asHandle(staleBytes(0)));
  auto answer = realAndStale(2);
  answer[1].resize(IpcHandle::kSize);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(answer));
  try {
    g.exchange();
    FAIL() << "no error";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_EQ(e.op(), Op::kAllGather);
  }
}

// The core's own wire format: handle faults reach the handle inside an ExchangeEntry and never
// touch a failure record (which no fault can turn into something the core would open).
TEST(FaultyGroupTest, EntryHandlesAreCorruptedAndFailureRecordsAreLeftAlone) {
  GroupFixture g(faultPlan(scenario(3, {fault(FaultSite::kHandleCorrupt, {0})})), 0, 3);
  std::vector<Bytes> answer = {ExchangeEntry::encode(asHandle(handleBytes(0))),
                               ExchangeEntry::encode(asHandle(handleBytes(1))),
                               ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2})};
  EXPECT_CALL(g.inner, allGather(SizeIs(ExchangeEntry::kSize))).WillOnce(Return(answer));
  const auto got = g.group.allGather(answer[0]);
  EXPECT_EQ(got[0], answer[0]);
  EXPECT_EQ(std::get<IpcHandle>(ExchangeEntry::decode(got[1], 0, 1)),
            asHandle(inverted(handleBytes(1))));
  EXPECT_EQ(got[2], answer[2]);
  ASSERT_EQ(g.r.faultEvents().size(), 1u) << "the failure record counted as corrupted";
  EXPECT_EQ(g.r.faultEvents()[0].peer, 1);
}

// entry-corrupt damages the whole entry, a failure record too, each part so that the decoder
// (src/exchange_entry.cc) refuses it and names the peer; bytes outside the part stay as sent.
struct EntryDamage {
  EntryPart part;
  bool failureRecord;
  const char* why;  // what the decoder says
};

class EntryCorruptTest : public ::testing::TestWithParam<EntryDamage> {};

TEST_P(EntryCorruptTest, TheDecoderRefusesTheDamagedEntryNamingThePeer) {
  const EntryDamage damage = GetParam();
  auto f = fault(FaultSite::kEntryCorrupt, {0});
  f.peer = 2;
  f.part = damage.part;
  GroupFixture g(faultPlan(scenario(3, {f})), 0, 3);
  std::vector<Bytes> answer = {ExchangeEntry::encode(asHandle(handleBytes(0))),
                               ExchangeEntry::encode(asHandle(handleBytes(1))),
                               damage.failureRecord
                                   ? ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2})
                                   : ExchangeEntry::encode(asHandle(handleBytes(2)))};
  EXPECT_CALL(g.inner, allGather(SizeIs(ExchangeEntry::kSize))).WillOnce(Return(answer));
  const auto got = g.group.allGather(answer[0]);
  EXPECT_EQ(got[0], answer[0]);
  EXPECT_EQ(got[1], answer[1]);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < ExchangeEntry::kSize; ++i) changed += got[2][i] != answer[2][i];
  EXPECT_EQ(changed, 1u) << "one byte damaged";
  EXPECT_EQ(got[2][0], answer[2][0]) << "the magic's first byte stays: a one-byte check misses it";
  try {
    ExchangeEntry::decode(got[2], 0, 2);
    FAIL() << "the damaged entry decoded";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.peer(), 2);
    EXPECT_EQ(e.op(), Op::kAllGather);
    EXPECT_THAT(e.what(), ::testing::HasSubstr(damage.why));
  }
  const auto events = g.r.faultEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "entry-corrupt");
  EXPECT_EQ(events[0].peer, 2);
}

INSTANTIATE_TEST_SUITE_P(EveryPart, EntryCorruptTest,
                         ::testing::Values(EntryDamage{EntryPart::kMagic, false, "bad magic"},
                                           EntryDamage{EntryPart::kMagic, true, "bad magic"},
                                           EntryDamage{EntryPart::kKind, false, "unknown kind 254"},
                                           EntryDamage{EntryPart::kKind, true, "unknown kind 253"},
                                           EntryDamage{EntryPart::kTail, false,
                                                       "the label's padding is not NUL"},
                                           EntryDamage{EntryPart::kTail, true,
                                                       "a failure record carries handle bytes"}));

// The tail of a failure record is its handle field's last byte: past any prefix a decoder might
// check alone (mutant ee-failure-partial-zero-check checks 4 bytes), and not the size or label,
// which a decoder checks apart.
TEST(FaultyGroupTest, EntryCorruptTailOfAFailureRecordIsItsLastHandleByte) {
  auto f = fault(FaultSite::kEntryCorrupt, {1});
  f.part = EntryPart::kTail;
  GroupFixture g(faultPlan(scenario(2, {f})), 1, 2);
  const Bytes record = ExchangeEntry::encode(ExchangeFailure{Op::kGetHandle, 1});
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(std::vector<Bytes>{record, record}));
  const auto got = g.group.allGather(record);
  EXPECT_EQ(got[1], record) << "never the own slot";
  for (std::size_t i = 0; i < ExchangeEntry::kSize; ++i) {
    const bool tail = i == ExchangeEntry::kHeaderSize + IpcHandle::kSize - 1;
    EXPECT_EQ(got[0][i], tail ? std::byte{0xff} : record[i]) << "byte " << i;
  }
}

TEST(FaultyGroupTest, EntryCorruptWithoutAPeerDamagesEveryPeerAndLeavesBareHandlesAlone) {
  auto f = fault(FaultSite::kEntryCorrupt, {1});
  f.part = EntryPart::kKind;
  GroupFixture g(faultPlan(scenario(3, {f})), 1, 3);
  std::vector<Bytes> entries;
  for (int r = 0; r < 3; ++r) entries.push_back(ExchangeEntry::encode(asHandle(handleBytes(r))));
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(entries));
  const auto got = g.group.allGather(entries[1]);
  EXPECT_NE(got[0], entries[0]);
  EXPECT_EQ(got[1], entries[1]);
  EXPECT_NE(got[2], entries[2]);
  EXPECT_EQ(g.r.faultEvents().size(), 2u);

  // The seed's wire format (bare handles, spoken by planted copies of the core) has no entry.
  GroupFixture bare(faultPlan(scenario(3, {f})), 1, 3);
  EXPECT_CALL(bare.inner, allGather(_)).WillOnce(Return(realHandles(3)));
  EXPECT_EQ(bare.exchange(), realHandles(3));
  EXPECT_TRUE(bare.r.faultEvents().empty());
}

// exchange-long: the rank receives one entry more than the group has ranks, a well-formed copy of
// its own, the others as they came; recorded once, naming no peer; other ranks get the list as is.
TEST(FaultyGroupTest, ExchangeLongAppendsACopyOfTheRanksOwnEntry) {
  const auto f = fault(FaultSite::kExchangeLong, {1});
  std::vector<Bytes> entries;
  for (int r = 0; r < 3; ++r) entries.push_back(ExchangeEntry::encode(asHandle(handleBytes(r))));
  GroupFixture g(faultPlan(scenario(3, {f})), 1, 3);
  EXPECT_CALL(g.inner, allGather(_)).WillOnce(Return(entries));
  const auto got = g.group.allGather(entries[1]);
  ASSERT_EQ(got.size(), 4u);
  for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(got[r], entries[r]) << r;
  EXPECT_EQ(got[3], entries[1]);
  const auto events = g.r.faultEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "exchange-long");
  EXPECT_EQ(events[0].peer, -1);
  EXPECT_THAT(events[0].detail, ::testing::HasSubstr("holds 4 entries for a group of 3"));

  GroupFixture other(faultPlan(scenario(3, {f})), 0, 3);
  EXPECT_CALL(other.inner, allGather(_)).WillOnce(Return(entries));
  EXPECT_EQ(other.group.allGather(entries[0]), entries);
  EXPECT_TRUE(other.r.faultEvents().empty());
}

TEST(FaultyGroupTest, AStaleHandleNeverReplacesAFailureRecord) {
  GroupFixture g(faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {0})})), 0, 2);
  g.r.faults->putStaleHandle(asHandle(staleBytes(0)));
  std::vector<Bytes> answer;
  for (const Bytes& entry : {ExchangeEntry::encode(asHandle(handleBytes(0))),
                             ExchangeEntry::encode(ExchangeFailure{Op::kGetHandle, 1})}) {
    Bytes both = entry;
    const Bytes stale = staleBytes(0);
    both.insert(both.end(), stale.begin(), stale.end());
    answer.push_back(both);
  }
  EXPECT_CALL(g.inner, allGather(SizeIs(ExchangeEntry::kSize + IpcHandle::kSize)))
      .WillOnce(Return(answer));
  const auto got = g.group.allGather(ExchangeEntry::encode(asHandle(handleBytes(0))));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1], ExchangeEntry::encode(ExchangeFailure{Op::kGetHandle, 1}));
}

TEST(FaultyGroupTest, ARankSendingAFailureRecordSendsNoStaleHandleAndNoWiringError) {
  // Its alloc failed, so its FaultyBackend never exported a handle to make a stale one from.
  GroupFixture g(faultPlan(scenario(2, {fault(FaultSite::kHandleStale, {0})})), 0, 2);
  Bytes sent = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  Bytes expected = sent;
  expected.resize(ExchangeEntry::kSize + IpcHandle::kSize, std::byte{0});
  Bytes peer = ExchangeEntry::encode(asHandle(handleBytes(1)));
  const Bytes stale = staleBytes(1);
  peer.insert(peer.end(), stale.begin(), stale.end());
  EXPECT_CALL(g.inner, allGather(ElementsAreArray(expected)))
      .WillOnce(Return(std::vector<Bytes>{expected, peer}));
  const auto got = g.group.allGather(sent);
  EXPECT_EQ(got[0], sent);
  EXPECT_EQ(std::get<IpcHandle>(ExchangeEntry::decode(got[1], 0, 1)), asHandle(staleBytes(1)));
}

// ---- Whole handshakes on threads -----------------------------------------------------------

// A device runtime in miniature: every allocation has an id that is never reused, a handle names
// it, and opening the handle of a freed allocation fails like a real runtime's stale handle.
class TinyRuntime {
 public:
  DevicePtr alloc(int device) {
    std::lock_guard lock(mutex_);
    const DevicePtr ptr = (static_cast<DevicePtr>(device + 1) << 32) | ++next_;
    live_.insert(ptr);
    return ptr;
  }
  bool free(DevicePtr ptr) {
    std::lock_guard lock(mutex_);
    return live_.erase(ptr) == 1;
  }
  IpcHandle handle(DevicePtr ptr) {
    IpcHandle h;
    std::memcpy(h.bytes.data(), &kMagic, sizeof kMagic);
    std::memcpy(h.bytes.data() + 8, &ptr, sizeof ptr);
    return h;
  }
  // The mapping's address, or 0 when the handle is garbage (bad magic) or of freed memory.
  DevicePtr open(const IpcHandle& h, int device, std::string& why) {
    std::uint64_t magic = 0;
    DevicePtr ptr = 0;
    std::memcpy(&magic, h.bytes.data(), sizeof magic);
    std::memcpy(&ptr, h.bytes.data() + 8, sizeof ptr);
    std::lock_guard lock(mutex_);
    if (magic != kMagic) return why = "not a handle", 0;
    if (live_.count(ptr) == 0) return why = "stale handle: the allocation was freed", 0;
    const DevicePtr mapping = (static_cast<DevicePtr>(device + 1) << 48) | ++next_;
    mappings_.insert(mapping);
    return mapping;
  }
  bool close(DevicePtr mapping) {
    std::lock_guard lock(mutex_);
    return mappings_.erase(mapping) == 1;
  }
  std::size_t held() {
    std::lock_guard lock(mutex_);
    return live_.size() + mappings_.size();
  }

 private:
  static constexpr std::uint64_t kMagic = 0x70656572636f6e66;
  std::mutex mutex_;
  std::uint64_t next_ = 0;
  std::set<DevicePtr> live_;
  std::set<DevicePtr> mappings_;
};

class TinyBackend : public IpcBackend {
 public:
  TinyBackend(TinyRuntime& rt, int rank) : rt_(rt), rank_(rank) {}
  int rank() const override { return rank_; }
  DevicePtr allocUncached(std::size_t) override { return rt_.alloc(rank_); }
  DevicePtr allocDevice(std::size_t) override { return rt_.alloc(rank_); }
  void freeDeviceMem(DevicePtr ptr) override {
    if (!rt_.free(ptr)) throw BackendError(Op::kFree, rank_, kNoPeer, 1, "not allocated");
  }
  IpcHandle getMemHandle(DevicePtr ptr) override { return rt_.handle(ptr); }
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override {
    std::string why;
    const DevicePtr mapping = rt_.open(handle, rank_, why);
    if (mapping == 0) throw BackendError(Op::kOpenHandle, rank_, peer, 1, why);
    return mapping;
  }
  void closeMemHandle(DevicePtr ptr, int peer) override {
    if (!rt_.close(ptr)) throw BackendError(Op::kCloseHandle, rank_, peer, 1, "not mapped");
  }
  void copyToDevice(DevicePtr, const void*, std::size_t) override {}
  void copyToHost(void*, DevicePtr, std::size_t) override {}

 private:
  TinyRuntime& rt_;
  int rank_;
};

struct Outcome {
  bool ok = false;
  bool thisRank = false;
  std::string cause;
};

// Every rank builds a PeerBuffer through FaultyBackend (seam mode) and FaultyGroup over the tiny
// runtime, then closes it when it got one.
std::vector<Outcome> handshake(const Scenario& s, TinyRuntime& rt) {
  const FaultPlan plan = faultPlan(s);
  const int n = s.ranks;
  BarrierWorld world(n);
  std::vector<Outcome> outcomes(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      RankUnderTest r(plan, rank);
      StrictMock<MockRankControl> control;
      TinyBackend real(rt, rank);
      FaultyBackend backend(real, *r.faults, control, FaultyBackend::Mode::kSeam);
      BarrierGroup inner(world, rank);
      FaultyGroup group(inner, *r.faults, control);
      Outcome& out = outcomes[static_cast<std::size_t>(rank)];
      try {
        PeerBuffer buffer(s.bufferBytes, backend, &group);
        out.ok = true;
        buffer.close();
      } catch (const HandshakeError& e) {
        out.thisRank = e.thisRank();
        out.cause = describe(e.cause());
      }
    });
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

TEST(FaultyGroupHandshakeTest, AStaleHandleIsAFreedBuffersAndIsRefusedAndNothingStaysAllocated) {
  auto f = fault(FaultSite::kHandleStale, {1});
  f.peer = 0;
  TinyRuntime rt;
  const auto outcomes = handshake(scenario(3, {f}), rt);
  EXPECT_FALSE(outcomes[0].ok);
  EXPECT_FALSE(outcomes[0].thisRank);
  EXPECT_TRUE(outcomes[1].thisRank);
  EXPECT_THAT(outcomes[1].cause, ::testing::HasSubstr("stale handle"));
  EXPECT_THAT(outcomes[1].cause, ::testing::HasSubstr("peer 0"));
  EXPECT_FALSE(outcomes[2].ok);
  EXPECT_FALSE(outcomes[2].thisRank);
  EXPECT_EQ(rt.held(), 0u);
}

TEST(FaultyGroupHandshakeTest, AStaleExchangeThatNeverFiresStillSucceedsAndLeavesNothing) {
  auto f = fault(FaultSite::kHandleStale, {1});
  f.probability = 1e-12;
  TinyRuntime rt;
  const auto outcomes = handshake(scenario(3, {f}), rt);
  for (const auto& o : outcomes) EXPECT_TRUE(o.ok) << o.cause;
  EXPECT_EQ(rt.held(), 0u);
}

TEST(FaultyGroupHandshakeTest, ACorruptHandleIsRefusedOnlyByTheReceivingRank) {
  auto f = fault(FaultSite::kHandleCorrupt, {2});
  f.peer = 1;
  TinyRuntime rt;
  const auto outcomes = handshake(scenario(3, {f}), rt);
  EXPECT_FALSE(outcomes[0].thisRank);
  EXPECT_FALSE(outcomes[1].thisRank);
  EXPECT_TRUE(outcomes[2].thisRank);
  EXPECT_THAT(outcomes[2].cause, ::testing::HasSubstr("not a handle"));
  EXPECT_EQ(rt.held(), 0u);
}

}  // namespace
}  // namespace peerconf::faults
