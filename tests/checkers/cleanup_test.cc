// C3 cleanup from the ledger and from seam events, on clean runs and planted leaks/double frees.
#include "checkers/cleanup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::LedgerRecord;
using model::RankResult;
using model::RunRecord;
using model::Verdict;
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

TEST(Cleanup, AStoppedRankThatStillHoldsSomethingAfterTheHarnessReleasedFails) {
  // Its own releases are not judged, but its process goes on to the next scenario (a thread, one
  // shared mpirun): what its device still holds after the harness's releases would meet it.
  RunRecord record = testing::hangRun(4, 1);
  record.ranks[1].deviceLeftovers = {
      "the mocked runtime still holds device 1's mapping of device 2's buffer (gen 3) at 0x2000"};
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "hung, yet after the run (and the harness's own releases)"))
      << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "a later scenario in this process meets it")) << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 1, "not checked")) << dump(verdict);
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

  // A fault planted but not fired (probability < 1) excuses nothing.
  record.ranks[3].closeTwiceOk = true;
  record.scenario.faults.push_back(releaseFault(FaultSite::kFree, 0));
  verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 0, "no close/free fault fired")) << dump(verdict);
}

// What the buffer still hands out once close() returned is C3's, on the rank that held it, each
// view its own finding; a clean run leaves nothing.
TEST(Cleanup, ViewsLeftAfterCloseFailOnTheirRank) {
  RunRecord record = testing::successRun();
  for (const RankResult& rank : record.ranks) EXPECT_TRUE(rank.leftAfterClose.empty());
  record.ranks[2].leftAfterClose = {"addresses() still holds 4 address(es) (0x10, ...)",
                                    "addressesDevice() is still 0x40"};
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "after close() returned, addresses() still holds 4"))
      << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 2, "after close() returned, addressesDevice() is still 0x40"))
      << dump(verdict);
  EXPECT_FALSE(hasFinding(verdict, 1, "after close() returned")) << dump(verdict);
}

// Makes rank `rank`'s close of `peer` fail in close() under a fired close fault (error 1): the
// fault event, the throw, the failed ledger entry; close() raised `failures` (none: returned).
void closeFaultFires(RunRecord& record, int rank, int peer, std::string errorType,
                     std::vector<std::string> failures) {
  record.scenario.faults.push_back(releaseFault(FaultSite::kClose, rank, peer));
  RankResult& result = record.ranks[static_cast<std::size_t>(rank)];
  auto& events = result.events;
  auto call = std::find_if(events.begin(), events.end(), [&](const Event& e) {
    return e.kind == EventKind::kCall && e.what == "closeMemHandle" && e.peer == peer;
  });
  ASSERT_NE(call, events.end());
  auto ret = std::next(call);
  ASSERT_EQ(ret->kind, EventKind::kReturn);
  ret->kind = EventKind::kThrow;
  ret->detail = "close-handle failed on rank " + std::to_string(rank) + " (peer " +
                std::to_string(peer) + "): hipErrorInvalidValue (1)";
  events.insert(call, Event{call->tNs - 1, rank, EventKind::kFault, "close", peer,
                            "closeMemHandle fails with hipErrorInvalidValue (1) [fault #0]"});
  for (LedgerRecord& entry : result.ledger) {
    if (entry.op == "close" && entry.ownerDevice == peer) entry.error = 1;
  }
  result.closeErrorType = std::move(errorType);
  result.closeFailures = std::move(failures);
  if (!result.closeErrorType.empty()) result.closeErrors = {"close on rank ... failed"};
}

TEST(Cleanup, FiredCloseFaultNeedsACloseErrorNamingIt) {
  const std::string naming = "close-handle failed on rank 1 (peer 2): hipErrorInvalidValue (1)";
  for (bool ledger : {true, false}) {
    SCOPED_TRACE(ledger ? "ledger" : "events");
    auto run = [&](std::string type, std::vector<std::string> failures) {
      RunRecord record = testing::successRun();
      closeFaultFires(record, 1, 2, std::move(type), std::move(failures));
      return checkCleanup(ledger ? record : testing::withoutLedgers(record));
    };
    Verdict verdict = run("CloseError", {naming});
    EXPECT_EQ(verdict.status, Verdict::Status::kPass) << dump(verdict);

    verdict = run("", {});
    EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 1, "close fault fired in close() (peer 2")) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 1, "returned without raising")) << dump(verdict);

    verdict = run("CloseError", {"free failed on rank 1: hipErrorInvalidValue (1)"});
    EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 1, "does not name it")) << dump(verdict);

    verdict = run("std::exception", {});
    EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 1, "not a CloseError")) << dump(verdict);
  }
}

// Moves rank `rank`'s releases from its close phase into a destroy phase after it (events), and
// puts the ledger's close snapshot before them: close() released nothing, the destructor did.
void releasesInDestructor(RunRecord& record, int rank) {
  RankResult& result = record.ranks[static_cast<std::size_t>(rank)];
  auto& events = result.events;
  auto find = [&](EventKind kind, const char* what) {
    return std::find_if(events.begin(), events.end(),
                        [&](const Event& e) { return e.kind == kind && e.what == what; });
  };
  auto begin = find(EventKind::kPhaseBegin, "close");
  auto end = find(EventKind::kPhaseEnd, "close");
  ASSERT_NE(begin, events.end());
  ASSERT_NE(end, events.end());
  std::vector<Event> moved(std::next(begin), end);
  events.erase(std::next(begin), end);
  auto destroy = find(EventKind::kPhaseBegin, "destroy");
  ASSERT_NE(destroy, events.end());
  events.insert(std::next(destroy), moved.begin(), moved.end());
  auto& ledger = result.ledger;
  auto firstRelease = std::find_if(ledger.begin(), ledger.end(), [](const LedgerRecord& r) {
    return r.op == "close" || r.op == "free";
  });
  result.ledgerAtClose = firstRelease - ledger.begin();
}

TEST(Cleanup, ReleasesLeftToTheDestructorFailCloseFromLedgerAndFromEvents) {
  RunRecord record = testing::successRun();
  releasesInDestructor(record, 2);
  for (const RunRecord& r : {record, testing::withoutLedgers(record)}) {
    const Verdict verdict = checkCleanup(r);
    EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 2, "close() left mapping of peer 0")) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 2, "the destructor closed it")) << dump(verdict);
    EXPECT_TRUE(hasFinding(verdict, 2, "the destructor freed it")) << dump(verdict);
    for (int other : {0, 1, 3}) EXPECT_FALSE(hasFinding(verdict, other)) << dump(verdict);
  }
}

TEST(Cleanup, DestructorReleasingWhatCloseReleasedIsADoubleRelease) {
  RunRecord record = testing::successRun();
  RankResult& result = record.ranks[1];
  // The destructor frees the local buffer again.
  const LedgerRecord again = result.ledger.back();
  result.ledger.push_back(again);
  const Verdict verdict = checkCleanup(record);
  EXPECT_EQ(verdict.status, Verdict::Status::kFail) << dump(verdict);
  EXPECT_TRUE(hasFinding(verdict, 1, "freed twice (by the destructor, after close())"))
      << dump(verdict);
}

// Ledger entries after the destroy phase are the harness's own (a launcher releasing for real
// what an injected failure kept): neither the destructor's nor close()'s.
TEST(Cleanup, LedgerEntriesAfterTheDestroyPhaseAreNotTheCores) {
  RunRecord record = testing::successRun();
  RankResult& result = record.ranks[1];
  result.ledgerAfterDestroy = static_cast<std::int64_t>(result.ledger.size());
  const LedgerRecord again = result.ledger.back();
  result.ledger.push_back(again);
  const Verdict verdict = checkCleanup(record);
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
