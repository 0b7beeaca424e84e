// C3 cleanup from the ledger and from seam events, on clean runs and planted leaks/double frees.
#include <gtest/gtest.h>

#include <algorithm>

#include "cleanup.h"
#include "synthetic_run.h"

namespace peerconf::harness::checkers {
namespace {

using testing::dump;
using testing::hasFinding;

// Removes the first ledger record of `op` about peer `owner` (-1: any) on `rank`.
void dropLedger(RunRecord& record, int rank, const std::string& op, int owner = -1) {
  auto& ledger = record.ranks[rank].ledger;
  auto it = std::find_if(ledger.begin(), ledger.end(), [&](const LedgerRecord& r) {
    return r.op == op && (owner < 0 || r.ownerDevice == owner);
  });
  ASSERT_NE(it, ledger.end());
  ledger.erase(it);
}

// Removes the call and return of `what` for `peer` on `rank`.
void dropCall(RunRecord& record, int rank, const std::string& what, int peer) {
  auto& events = record.ranks[rank].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [&](const Event& e) { return e.what == what && e.peer == peer; }),
               events.end());
}

Fault releaseFault(FaultSite site, int rank, std::optional<int> peer = std::nullopt) {
  Fault fault;
  fault.site = site;
  fault.ranks = {rank};
  fault.peer = peer;
  fault.error = 1;
  return fault;
}

TEST(Cleanup, PassesCleanRunsFromLedgerAndFromEvents) {
  for (const RunRecord& record :
       {testing::successRun(), testing::openFailureRun(), testing::hangRun()}) {
    Verdict verdict = checkCleanup(record);
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
    verdict = checkCleanup(testing::withoutLedgers(record));
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  }
}

TEST(Cleanup, HungRankIsNotChecked) {
  // The hung rank's ledger holds its buffer and mappings: it is outside C3.
  const Verdict verdict = checkCleanup(testing::hangRun(4, 1));
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "not checked")) << dump(verdict);
}

TEST(Cleanup, LedgerUnclosedMappingNamesRankPeerAndGeneration) {
  RunRecord record = testing::openFailureRun(4, 3, 1);
  dropLedger(record, 2, "close", 0);
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "mapping of peer 0 (gen 10) opened, never closed"))
      << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 1)) << dump(verdict);
}

TEST(Cleanup, LedgerDoubleFree) {
  RunRecord record = testing::successRun();
  record.ranks[1].ledger.push_back(record.ranks[1].ledger.back());
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "freed twice")) << dump(verdict);
}

TEST(Cleanup, LedgerLeakedBuffer) {
  RunRecord record = testing::successRun();
  dropLedger(record, 0, "free");
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "allocated, never freed")) << dump(verdict);
}

TEST(Cleanup, FailedCloseCountsOnlyWithAPlantedFault) {
  RunRecord record = testing::successRun();
  auto& ledger = record.ranks[2].ledger;
  auto close = std::find_if(ledger.begin(), ledger.end(),
                            [](const LedgerRecord& r) { return r.op == "close"; });
  ASSERT_NE(close, ledger.end());
  close->error = 1;
  const int peer = close->ownerDevice;
  Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "no close fault was planted")) << dump(verdict);

  // Planted on another peer: still unexplained.
  record.scenario.faults.push_back(releaseFault(FaultSite::kClose, 2, peer + 1));
  EXPECT_EQ(checkCleanup(record).status, Verdict::Status::kFail);

  // Planted on this rank and peer: the mapping counts as released (the core does not retry).
  record.scenario.faults.push_back(releaseFault(FaultSite::kClose, 2, peer));
  verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

TEST(Cleanup, SeamCloseFaultNeverReachesTheLedger) {
  // A fault planted at the seam throws before the runtime: the ledger keeps the mapping open and
  // only the events show the failed close.
  RunRecord record = testing::successRun();
  dropLedger(record, 2, "close", 0);
  auto& events = record.ranks[2].events;
  auto ret = std::find_if(events.begin(), events.end(), [](const Event& e) {
    return e.what == "closeMemHandle" && e.peer == 0 && e.kind == EventKind::kReturn;
  });
  ASSERT_NE(ret, events.end());
  ret->kind = EventKind::kThrow;
  ret->detail = "close-handle failed on rank 2 (peer 0): invalid argument (1)";
  Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "no close fault was planted")) << dump(verdict);

  record.scenario.faults.push_back(releaseFault(FaultSite::kClose, 2, 0));
  verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

TEST(Cleanup, RetryAfterFailedFreeIsADoubleFree) {
  RunRecord record = testing::successRun();
  record.scenario.faults.push_back(releaseFault(FaultSite::kFree, 1));
  auto& ledger = record.ranks[1].ledger;
  ledger.back().error = 1;
  LedgerRecord retry = ledger.back();
  retry.error = 0;
  ledger.push_back(retry);
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "freed twice")) << dump(verdict);
}

TEST(Cleanup, CloseTwiceAndCloseErrors) {
  RunRecord record = testing::successRun();
  record.ranks[3].closeTwiceOk = false;
  record.ranks[0].closeErrors = {"close on rank 0 failed 1 release(s): [boom]"};
  Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "second time")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "no close/free fault")) << dump(verdict);

  record.ranks[3].closeTwiceOk = true;
  record.scenario.faults.push_back(releaseFault(FaultSite::kFree, 0));
  verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);
}

TEST(Cleanup, EventsUnclosedMapping) {
  RunRecord record = testing::withoutLedgers(testing::successRun());
  dropCall(record, 2, "closeMemHandle", 0);
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "mapping of peer 0")) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "never closed")) << dump(verdict);
}

TEST(Cleanup, EventsDoubleFree) {
  RunRecord record = testing::withoutLedgers(testing::openFailureRun());
  auto& events = record.ranks[1].events;
  // Repeat the last freeDeviceMem call and return.
  auto last = std::find_if(events.rbegin(), events.rend(), [](const Event& e) {
    return e.what == "freeDeviceMem" && e.kind == EventKind::kCall;
  });
  ASSERT_NE(last, events.rend());
  const Event call = *last;
  Event ret = call;
  ret.kind = EventKind::kReturn;
  ret.detail.clear();
  events.push_back(call);
  events.push_back(ret);
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "freed twice")) << dump(verdict);
}

TEST(Cleanup, EventsWithoutPointersMatchByPeerAndCount) {
  RunRecord record = testing::withoutLedgers(testing::successRun(3));
  for (RankResult& rank : record.ranks) {
    for (Event& event : rank.events) event.detail.clear();
  }
  EXPECT_EQ(checkCleanup(record).status, Verdict::Status::kPass) << dump(checkCleanup(record));
  dropCall(record, 0, "freeDeviceMem", -1);  // both frees of rank 0 gone
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "never freed")) << dump(verdict);
}

TEST(Cleanup, EventsThrownCloseWithoutFault) {
  RunRecord record = testing::withoutLedgers(testing::successRun());
  auto& events = record.ranks[3].events;
  auto ret = std::find_if(events.begin(), events.end(), [](const Event& e) {
    return e.what == "closeMemHandle" && e.kind == EventKind::kReturn;
  });
  ASSERT_NE(ret, events.end());
  ret->kind = EventKind::kThrow;
  ret->detail = "close-handle failed on rank 3 (peer 0): invalid argument (1)";
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 3, "invalid argument")) << dump(verdict);
}

TEST(Cleanup, NotApplicableWithoutAnythingToReplay) {
  RunRecord record = testing::withoutLedgers(testing::successRun(2));
  for (RankResult& rank : record.ranks) rank.events.clear();
  EXPECT_EQ(checkCleanup(record).status, Verdict::Status::kNotApplicable);
}

}  // namespace
}  // namespace peerconf::harness::checkers
