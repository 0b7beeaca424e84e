// EventLog: events recorded in order with the rank, times since the run's start on the real clock
// or on the run's clock (a scheduling point each), the sink, and faults as kFault events.
#include "model/event_log.h"

#include <gtest/gtest.h>

namespace peerconf::harness {

using model::Event;
using model::EventKind;
using model::EventLog;
namespace {

using namespace std::chrono_literals;

// A clock that stands still until told, and counts its scheduling points.
class ManualClock : public peerconf::Clock {
 public:
  bool simulated() const noexcept override { return true; }
  TimePoint now() override { return now_; }
  void sleepUntil(TimePoint t) override { now_ = t; }
  bool waitUntil(std::unique_lock<std::mutex>&, std::condition_variable&, TimePoint,
                 const std::function<bool()>& ready) override {
    return ready();
  }
  void notifyAll(std::condition_variable&) override {}
  void point(unsigned) override { ++points; }

  TimePoint now_{std::chrono::seconds(100)};
  int points = 0;
};

TEST(EventLog, RecordsInOrderWithRankAndFields) {
  EventLog log(3, EventLog::Clock::now());
  log.record(EventKind::kCall, "openMemHandle", 1, "ptr=0x10");
  log.record(EventKind::kReturn, "openMemHandle");
  ASSERT_EQ(log.events().size(), 2u);
  const Event& call = log.events()[0];
  EXPECT_EQ(call.rank, 3);
  EXPECT_EQ(call.kind, EventKind::kCall);
  EXPECT_EQ(call.what, "openMemHandle");
  EXPECT_EQ(call.peer, 1);
  EXPECT_EQ(call.detail, "ptr=0x10");
  EXPECT_EQ(call.fault, -1);
  EXPECT_EQ(log.events()[1].peer, -1);
  EXPECT_GE(call.tNs, 0);
  EXPECT_LE(call.tNs, log.events()[1].tNs);  // the steady clock never goes back
}

TEST(EventLog, TimesAreReadOnTheRunsClockAtAPoint) {
  ManualClock clock;
  EventLog log(0, clock.now_ - 5ms, clock);
  log.record(EventKind::kPhaseBegin, "construct");
  clock.now_ += 2ms;
  log.record(EventKind::kPhaseEnd, "construct");
  ASSERT_EQ(log.events().size(), 2u);
  EXPECT_EQ(log.events()[0].tNs, 5'000'000);
  EXPECT_EQ(log.events()[1].tNs, 7'000'000);
  EXPECT_EQ(clock.points, 2);  // every record is a scheduling point
}

TEST(EventLog, AFiredFaultIsAFaultEventWithItsIndex) {
  EventLog log(1, EventLog::Clock::now());
  faults::FaultLog& asFaultLog = log;
  asFaultLog.fired("open", 2, "openMemHandle fails [fault #4]", 4, 1);
  ASSERT_EQ(log.events().size(), 1u);
  EXPECT_EQ(log.events()[0].kind, EventKind::kFault);
  EXPECT_EQ(log.events()[0].what, "open");
  EXPECT_EQ(log.events()[0].peer, 2);
  EXPECT_EQ(log.events()[0].fault, 4);
  EXPECT_EQ(log.events()[0].buffer, 1);  // the construction it fired in
}

TEST(EventLog, TheSinkSeesEveryEventAsRecorded) {
  EventLog log(0, EventLog::Clock::now());
  log.record(EventKind::kCall, "before the sink");
  std::vector<std::string> seen;
  log.setSink([&](const Event& e) { seen.push_back(e.what); });
  log.record(EventKind::kCall, "a");
  log.record(EventKind::kOutcome, "ok");
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "ok"}));
}

TEST(EventLog, TakeEmptiesTheLog) {
  EventLog log(0, EventLog::Clock::now());
  log.record(EventKind::kThrow, "x");
  const std::vector<Event> taken = log.take();
  EXPECT_EQ(taken.size(), 1u);
  EXPECT_TRUE(log.events().empty());
}

TEST(EventLog, KindNames) {
  EXPECT_EQ(toString(EventKind::kCall), "call");
  EXPECT_EQ(toString(EventKind::kPhaseBegin), "begin");
  EXPECT_EQ(toString(EventKind::kPhaseEnd), "end");
  EXPECT_EQ(toString(EventKind::kOutcome), "outcome");
}

}  // namespace
}  // namespace peerconf::harness
