// C2 messages on clean synthetic runs and on planted defects.
#include "checkers/messages.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::FaultSite;
using model::MessageExpectation;
using model::MessageKind;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Verdict;
namespace {

using testing::dump;
using testing::hasFinding;

TEST(Messages, PassesCleanFailureRuns) {
  for (const RunRecord& record : {testing::openFailureRun(), testing::hangRun()}) {
    const Verdict verdict = checkMessages(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  }
}

TEST(Messages, NotApplicableOnSuccess) {
  EXPECT_EQ(checkMessages(testing::successRun()).status, Verdict::Status::kNotApplicable);
}

TEST(Messages, FailsOnWrongMessageNamingTheRank) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[1].message = std::string(kThisRankMessage);  // says "this" but it was elsewhere
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "expected message")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 2)) << dump(verdict);
}

// `ok`: the rank raises nothing (a buffer-count fault's returning rank).
TEST(Messages, AnOkRankMustRaiseNothing) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.scenario.expect.messages[1] = {MessageKind::kOk, {}};
  Verdict verdict = checkMessages(record);  // rank 1 raised "another"
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "expected no error (it returns every buffer it constructed)"))
      << dump(verdict);
  record.ranks[1].status = RankStatus::kOk;
  verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

TEST(Messages, FailsWhenTheFailingRankLostItsCause) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[2].cause.clear();
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "no cause")) << dump(verdict);
}

TEST(Messages, FailsOnWrongThisRankFlagOrType) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[2].thisRank = false;
  record.ranks[0].errorType = "BackendError";
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "thisRank=true")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "expected HandshakeError")) << dump(verdict);
}

TEST(Messages, FailsWhenAnExpectedRaiseReturned) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[3].status = RankStatus::kOk;
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "got ok")) << dump(verdict);
}

TEST(Messages, GroupExpectationNeedsAGroupError) {
  RunRecord record = testing::hangRun(4, 1);
  record.ranks[3].errorType = "GroupError";  // also acceptable
  EXPECT_EQ(checkMessages(record).status, Verdict::Status::kPass);
  record.ranks[0].errorType = "HandshakeError";
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "GroupTimeout or GroupError")) << dump(verdict);
}

TEST(Messages, TextExpectationMatchesASubstring) {
  RunRecord record = testing::hangRun(4, 1);
  record.scenario.expect.others = MessageExpectation{MessageKind::kText, "deadline"};
  EXPECT_EQ(checkMessages(record).status, Verdict::Status::kPass);
  record.scenario.expect.messages[2] = {MessageKind::kText, "out of memory"};
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "out of memory")) << dump(verdict);
}

// C2 checks that the "this" rank's cause is the planted failure that fired on it.
TEST(Messages, ThisRankCauseMustBeTheFiredFaultsOpPeerAndCode) {
  struct Case {
    const char* name;
    std::string op;
    int peer;
    int code;
  };
  for (const Case& c : {Case{"wrong op", "alloc", -1, 1}, Case{"wrong peer", "open", 3, 1},
                        Case{"wrong code", "open", 0, 205}}) {
    SCOPED_TRACE(c.name);
    RunRecord record = testing::openFailureRun(4, 2, 0);
    record.ranks[2].causeOp = c.op;
    record.ranks[2].causePeer = c.peer;
    record.ranks[2].causeCode = c.code;
    const Verdict verdict = checkMessages(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 2, "not the planted failure: the open fault fired for peer 0"))
        << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 2, "the cause must be open (peer 0)")) << dump(verdict);
  }
}

TEST(Messages, ThisRankCauseThatIsNoErrorFails) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.ranks[2].causeOp.clear();
  record.ranks[2].causePeer = -1;
  record.ranks[2].causeCode = 0;
  record.ranks[2].cause = "std::bad_alloc";
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "no peerconf::Error")) << dump(verdict);
}

TEST(Messages, ThisRankWithoutAFiredFaultFails) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  auto& events = record.ranks[2].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const Event& e) { return e.kind == EventKind::kFault; }),
               events.end());
  const Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "no fault fired on this rank")) << dump(verdict);
}

// device_memory: the runtime's out-of-memory answer to an allocation is the cause only on a rank
// whose device the scenario made too small for it. The control: the same out-of-memory cause on
// a rank whose device has room (another rank's is too small) has nothing to explain it.
TEST(Messages, AnOutOfMemoryCauseNeedsThisRanksDeviceTooSmall) {
  constexpr int kOutOfMemory = 2;  // hipErrorOutOfMemory: what an allocation past the device gets
  auto outOfMemoryOn = [](int tooSmallRank) {
    RunRecord record = testing::openFailureRun(4, 2, 0);
    record.scenario.faults.clear();
    record.firedSites.clear();
    record.scenario.deviceMemory[tooSmallRank] = record.scenario.bufferBytes / 2;
    RankResult& failing = record.ranks[2];
    auto& events = failing.events;
    events.erase(std::remove_if(events.begin(), events.end(),
                                [](const Event& e) { return e.kind == EventKind::kFault; }),
                 events.end());
    failing.causeOp = "alloc";
    failing.causePeer = -1;
    failing.causeCode = kOutOfMemory;
    failing.cause = "hipMalloc failed: out of memory";
    return checkMessages(record);
  };
  const Verdict tooSmallHere = outOfMemoryOn(2);
  EXPECT_FALSE(hasFinding(tooSmallHere, 2)) << dump(tooSmallHere);
  const Verdict roomHere = outOfMemoryOn(0);
  EXPECT_EQ(roomHere.status, Verdict::Status::kFail) << dump(roomHere);
  EXPECT_TRUE(hasFinding(roomHere, 2, "no fault fired on this rank")) << dump(roomHere);
}

// A handle fault: whatever the runtime answered, but the open of the named peer.
TEST(Messages, HandleFaultCauseMustBeTheOpenOfThatPeer) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.scenario.faults[0].site = FaultSite::kHandleCorrupt;
  for (Event& e : record.ranks[2].events) {
    if (e.kind == EventKind::kFault) e.what = "handle-corrupt";
  }
  record.ranks[2].causeCode = 400;  // the runtime's own answer: not checked
  Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);

  record.ranks[2].causePeer = 1;
  verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "handle-corrupt for peer 0")) << dump(verdict);
}

// A stale handle: the open of the named peer, refused (the mocked runtime's ledger) for an
// allocation that peer freed. A garbage handle in its place (the same code, rank and peer) is not
// the planted failure; without ledgers (real GPUs) nothing tells them apart, so nothing is claimed.
TEST(Messages, StaleHandleCauseMustBeARefusedOpenOfAnAllocationThePeerFreed) {
  RunRecord record = testing::openFailureRun(4, 2, 0);
  record.scenario.faults[0].site = FaultSite::kHandleStale;
  for (Event& e : record.ranks[2].events) {
    if (e.kind == EventKind::kFault) e.what = "handle-stale";
  }
  // Peer 0's earlier buffer, freed; rank 2's runtime refused the handle that names it.
  record.ranks[0].ledger.insert(record.ranks[0].ledger.begin(),
                                {{"alloc", 0x9000, 64, 0, 99, 0}, {"free", 0x9000, 64, 0, 99, 0}});
  record.ranks[2].ledger.push_back({"open", 0, 64, 0, 99, 1});
  Verdict verdict = checkMessages(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);

  // Garbage where the stale handle should be: the runtime decoded no allocation from it.
  RunRecord garbage = record;
  garbage.ranks[2].ledger.back() = {"open", 0, 0, -1, 0, 1};
  verdict = checkMessages(garbage);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "the handle-stale fault for peer 0 fired, but no open"))
      << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "a handle it could not decode")) << dump(verdict);
  EXPECT_EQ(checkMessages(testing::withoutLedgers(garbage)).status, Verdict::Status::kPass);

  // A handle naming another device's allocation 99 is not one of peer 0's.
  RunRecord elsewhere = record;
  elsewhere.ranks[2].ledger.back() = {"open", 0, 64, 1, 99, 1};
  verdict = checkMessages(elsewhere);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "it refused allocation 99 of device 1")) << dump(verdict);

  // The same refusal under a handle-corrupt fault of that peer is the planted failure.
  garbage.scenario.faults.push_back(garbage.scenario.faults[0]);
  garbage.scenario.faults[1].site = FaultSite::kHandleCorrupt;
  std::vector<Event>& events = garbage.ranks[2].events;
  const auto stale = std::find_if(events.begin(), events.end(),
                                  [](const Event& e) { return e.kind == EventKind::kFault; });
  ASSERT_NE(stale, events.end());
  Event corrupt = *stale;
  corrupt.what = "handle-corrupt";
  events.insert(stale + 1, corrupt);
  verdict = checkMessages(garbage);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

}  // namespace
}  // namespace peerconf::harness::checkers
