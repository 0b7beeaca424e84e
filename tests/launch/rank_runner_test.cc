// What one rank does in a run (rank_runner.h): the runner's own agreement before the constructor
// (issue 14, item 4: tpAgree(ready) in the "ready" phase) through the thread launcher, a rank
// that is not ready run directly, NotReadyError's two messages, and which scenarios plan stopped
// ranks.
#include "launch/rank_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>

#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "mock_hip/control.h"
#include "scenario/load.h"
#include "thread/thread_group.h"

namespace peerconf::harness {

using launch::LaunchOptions;
using launch::NotReadyError;
using launch::plansStoppedRanks;
using launch::RankSeams;
using launch::runRank;
using launch::runThreads;
using launch::Runtime;
using model::Event;
using model::EventKind;
using model::EventLog;
using model::Fault;
using model::FaultSite;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using scenario::parseScenario;
namespace {

RunRecord run(const std::string& yaml) {
  const Scenario scenario = parseScenario(yaml, "inline.yaml");
  return runThreads(scenario, scenario.seed, LaunchOptions{});
}

const Event* findEvent(const RankResult& rank, EventKind kind, const std::string& what) {
  for (const Event& e : rank.events) {
    if (e.kind == kind && e.what == what) return &e;
  }
  return nullptr;
}

std::size_t indexOf(const RankResult& rank, EventKind kind, const std::string& what) {
  for (std::size_t i = 0; i < rank.events.size(); ++i) {
    if (rank.events[i].kind == kind && rank.events[i].what == what) return i;
  }
  return rank.events.size();
}

// Every rank agrees in its "ready" phase, before the constructor, and constructs after out=1.
TEST(RunnerAgreement, EveryRankAgreesBeforeItConstructs) {
  const RunRecord record = run("ranks: 3\nexpect: {outcome: success}\n");
  ASSERT_EQ(record.ranks.size(), 3u);
  for (const RankResult& rank : record.ranks) {
    SCOPED_TRACE(rank.rank);
    EXPECT_EQ(rank.status, RankStatus::kOk) << rank.message;
    const Event* call = findEvent(rank, EventKind::kCall, "tpAgree");
    const Event* ret = findEvent(rank, EventKind::kReturn, "tpAgree");
    ASSERT_NE(call, nullptr);
    ASSERT_NE(ret, nullptr);
    EXPECT_EQ(call->detail, "in=1");
    EXPECT_EQ(ret->detail, "out=1");
    EXPECT_LT(indexOf(rank, EventKind::kPhaseEnd, "ready"),
              indexOf(rank, EventKind::kPhaseBegin, "construct"));
  }
  // One rank has no group: no call, and it constructs.
  const RunRecord one = run("ranks: 1\nexpect: {outcome: success}\n");
  EXPECT_EQ(findEvent(one.ranks[0], EventKind::kCall, "tpAgree"), nullptr);
  EXPECT_EQ(one.ranks[0].status, RankStatus::kOk);
}

// A rank that is not ready: nobody constructs, every rank raises NotReady from the one agreement.
TEST(RunnerAgreement, ANotReadyRankStopsEveryRankBeforeTheConstructor) {
  const RunRecord record = run(
      "ranks: 4\ndeadline: 5s\nfaults: [{site: not-ready, rank: 2}]\nexpect: {outcome: raise}\n");
  for (const RankResult& rank : record.ranks) {
    SCOPED_TRACE(rank.rank);
    EXPECT_EQ(rank.status, RankStatus::kRaised);
    EXPECT_EQ(rank.errorType, "NotReady");
    EXPECT_EQ(rank.thisRank, rank.rank == 2);
    EXPECT_EQ(rank.message,
              rank.rank == 2 ? kNotReadyThisRankMessage : kNotReadyAnotherRankMessage);
    EXPECT_EQ(findEvent(rank, EventKind::kPhaseBegin, "construct"), nullptr);
    ASSERT_NE(findEvent(rank, EventKind::kCall, "tpAgree"), nullptr);
    EXPECT_EQ(findEvent(rank, EventKind::kCall, "tpAgree")->detail,
              rank.rank == 2 ? "in=0" : "in=1");
    EXPECT_EQ(findEvent(rank, EventKind::kReturn, "tpAgree")->detail, "out=0");
    EXPECT_TRUE(rank.ledger.empty());  // nothing allocated
  }
  // Well inside the 5 s deadline: nobody waited for it.
  EXPECT_LT(record.wallNs, 2'000'000'000);
}

// Without the agreement the not-ready rank leaves alone and the others wait in the exchange.
TEST(RunnerAgreement, WithoutTheAgreementTheOthersWaitInTheExchange) {
  const RunRecord record = run(
      "ranks: 3\ndeadline: 200ms\nrunner: {agree_first: false}\n"
      "faults: [{site: not-ready, rank: 1}]\n"
      "expect: {outcome: raise, messages: {others: group, 1: {text: \"setup failed on this\"}}}\n");
  for (const RankResult& rank : record.ranks) {
    SCOPED_TRACE(rank.rank);
    EXPECT_EQ(rank.status, RankStatus::kRaised);
    EXPECT_EQ(findEvent(rank, EventKind::kCall, "tpAgree"), nullptr);
    EXPECT_EQ(rank.errorType, rank.rank == 1 ? "NotReady" : "GroupTimeout");
    EXPECT_EQ(findEvent(rank, EventKind::kPhaseBegin, "construct") != nullptr, rank.rank != 1);
  }
  EXPECT_GE(record.wallNs, 200'000'000);  // the deadline, waited out
}

std::size_t constructions(const RankResult& rank) {
  return static_cast<std::size_t>(std::count_if(
      rank.events.begin(), rank.events.end(),
      [](auto& e) { return e.kind == EventKind::kPhaseBegin && e.what == "construct"; }));
}

// buffer-count, fewer: rank 1 registers 1 of 3 buffers and makes no call of the second; the others
// wait for it in that exchange until the deadline, raise a GroupTimeout naming it, and release
// everything; rank 1 returns its one buffer. Nobody hangs at the harness barrier.
TEST(BufferCount, ARankThatRegistersFewerLeavesTheOthersWaitingInTheNextExchange) {
  for (const char* alive : {"together", "one-at-a-time"}) {
    SCOPED_TRACE(alive);
    const RunRecord record = run(std::string("ranks: 4\ndeadline: 200ms\nlaunchers: [threads]\n"
                                             "buffers: [{label: a, size: 4KiB}, {label: b, size: "
                                             "8KiB}, {label: c, size: 4KiB}]\n"
                                             "buffers_alive: ") +
                                 alive +
                                 "\nfaults: [{site: buffer-count, rank: 1, count: 1}]\n"
                                 "expect: {outcome: raise}\n");
    for (const RankResult& rank : record.ranks) {
      SCOPED_TRACE(rank.rank);
      if (rank.rank == 1) {
        EXPECT_EQ(rank.status, RankStatus::kOk) << rank.message;
        EXPECT_EQ(constructions(rank), 1u);
        const Event* fired = findEvent(rank, EventKind::kFault, "buffer-count");
        ASSERT_NE(fired, nullptr);
        EXPECT_NE(fired->detail.find("registers 1 buffer where the list has 3"), std::string::npos)
            << fired->detail;
      } else {
        EXPECT_EQ(rank.status, RankStatus::kRaised);
        EXPECT_EQ(rank.errorType, "GroupTimeout");
        EXPECT_NE(rank.message.find("(rank 1 did not arrive)"), std::string::npos) << rank.message;
        EXPECT_EQ(constructions(rank), 2u);  // never the third
        EXPECT_EQ(findEvent(rank, EventKind::kFault, "buffer-count"), nullptr);
      }
      EXPECT_EQ(rank.ledgerAfterDestroy, rank.ledgerAtClose);  // nothing left to the destructor
    }
    EXPECT_GE(record.wallNs, 200'000'000);    // the deadline, waited out
    EXPECT_LT(record.wallNs, 2'000'000'000);  // and no more: no barrier left waiting
  }
}

// buffer-count, more: rank 0 registers 3 where the list has 2; its extra exchange waits alone and
// raises at the deadline, the others return every buffer they constructed.
TEST(BufferCount, ARankThatRegistersMoreWaitsAloneInItsExtraExchange) {
  const RunRecord record =
      run("ranks: 3\ndeadline: 200ms\nbuffers: [{label: a, size: 4KiB}, {label: b, size: 8KiB}]\n"
          "faults: [{site: buffer-count, rank: 0, count: 3}]\nexpect: {outcome: raise}\n");
  for (const RankResult& rank : record.ranks) {
    SCOPED_TRACE(rank.rank);
    EXPECT_EQ(rank.status, rank.rank == 0 ? RankStatus::kRaised : RankStatus::kOk) << rank.message;
    EXPECT_EQ(constructions(rank), rank.rank == 0 ? 3u : 2u);
    EXPECT_EQ(findEvent(rank, EventKind::kFault, "buffer-count") != nullptr, rank.rank == 0);
  }
  EXPECT_EQ(record.ranks[0].errorType, "GroupTimeout");
  EXPECT_LT(record.wallNs, 2'000'000'000);
}

// runRank itself, one rank over the mocked runtime: a setup that is not ready never constructs.
TEST(RunRank, ARankThatIsNotReadyRaisesWithoutConstructing) {
  mock_hip::resetAll();
  const Scenario scenario = parseScenario("ranks: 1\nexpect: {outcome: success}\n", "one.yaml");
  auto backend = makeIpcBackend(Runtime::kMock, 0, 0);
  thread::ThreadGroup group(std::make_shared<thread::ThreadWorld>(1), 0);
  RankSeams seams{*backend, group, *backend, nullptr};
  seams.ready = [] { return false; };
  EventLog log(0, EventLog::Clock::now());
  int points = 0;
  const RankResult result = runRank(scenario, 0, seams, log, [&](Point) { ++points; });
  EXPECT_EQ(result.status, RankStatus::kRaised);
  EXPECT_EQ(result.errorType, "NotReady");
  EXPECT_TRUE(result.thisRank);
  EXPECT_EQ(result.message, kNotReadyThisRankMessage);
  EXPECT_GE(points, 1);  // the point before the constructor was applied
  const auto events = log.take();
  for (const Event& e : events) EXPECT_NE(e.what, "construct");
  EXPECT_TRUE(mock_hip::ledger(0).empty());  // nothing allocated
  mock_hip::resetAll();
}

// A planted runner (RankSeams::constructs) decides instead of the agreement: one that constructs on
// its own readiness constructs after the agreement said no, and the not-ready rank still does not.
TEST(RunRank, APlantedRunnerDecidesWhetherTheRankConstructs) {
  mock_hip::resetAll();
  const Scenario scenario = parseScenario("ranks: 1\nexpect: {outcome: success}\n", "one.yaml");
  auto backend = makeIpcBackend(Runtime::kMock, 0, 0);
  thread::ThreadGroup group(std::make_shared<thread::ThreadWorld>(1), 0);
  for (const bool ready : {true, false}) {
    SCOPED_TRACE(ready);
    RankSeams seams{*backend, group, *backend, nullptr};
    seams.ready = [ready] { return ready; };
    int asked = 0;
    seams.constructs = [&asked](bool own, bool everyone) {
      ++asked;
      EXPECT_EQ(own, everyone);  // one rank: its own readiness is everyone's
      return own;
    };
    EventLog log(0, EventLog::Clock::now());
    const RankResult result = runRank(scenario, 0, seams, log, {});
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(result.status, ready ? RankStatus::kOk : RankStatus::kRaised) << result.message;
    const auto events = log.take();
    const bool constructed = std::any_of(events.begin(), events.end(), [](const Event& e) {
      return e.kind == EventKind::kPhaseBegin && e.what == "construct";
    });
    EXPECT_EQ(constructed, ready);
  }
  mock_hip::resetAll();
}

// The production core leaves nothing in the object once close() returned (C3's view of it); a
// clean run records nothing left.
TEST(RunRank, TheProductionCoreLeavesNoViewAfterClose) {
  const RunRecord record = run("ranks: 3\nexpect: {outcome: success}\n");
  for (const RankResult& rank : record.ranks) {
    EXPECT_EQ(rank.status, RankStatus::kOk) << rank.message;
    EXPECT_TRUE(rank.leftAfterClose.empty()) << rank.leftAfterClose.front();
  }
}

TEST(NotReadyError, SaysWhoseSetupFailed) {
  EXPECT_EQ(std::string(NotReadyError(true).what()), kNotReadyThisRankMessage);
  EXPECT_TRUE(NotReadyError(true).thisRank());
  EXPECT_EQ(std::string(NotReadyError(false).what()), kNotReadyAnotherRankMessage);
  EXPECT_FALSE(NotReadyError(false).thisRank());
}

TEST(PlansStoppedRanks, OnlyADeathOrAHangPlansAStop) {
  const auto plans = [](std::initializer_list<FaultSite> sites) {
    Scenario scenario;
    scenario.ranks = 2;
    for (const FaultSite site : sites) {
      Fault fault;
      fault.site = site;
      fault.ranks = {1};
      scenario.faults.push_back(fault);
    }
    return plansStoppedRanks(scenario);
  };
  EXPECT_FALSE(plans({}));
  EXPECT_FALSE(plans({FaultSite::kOpen, FaultSite::kDelay, FaultSite::kNotReady}));
  EXPECT_TRUE(plans({FaultSite::kOpen, FaultSite::kDeath}));
  EXPECT_TRUE(plans({FaultSite::kHang}));
}

}  // namespace
}  // namespace peerconf::harness
