// EventLog: what one rank did, in order, with timestamps — seam calls, faults fired, phases,
// and its outcome. Gathered from every rank at the end of a run.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "clock.h"
#include "faults/fault_plan.h"
#include "name_table.h"

namespace peerconf::harness::model {

enum class EventKind {
  kCall,        // a seam call starts (what = method name)
  kReturn,      // it returned
  kThrow,       // it threw (detail = message)
  kFault,       // a fault fired (what = site, detail = description)
  kPhaseBegin,  // a phase starts: construct, exchange, open, agree, check, close
  kPhaseEnd,    // it ends
  kOutcome,     // the rank's outcome (what = ok|raised|dead|hung, detail = message)
};

inline constexpr NameTable<EventKind, 7> kEventKindNames{{{
    {EventKind::kCall, "call"},
    {EventKind::kReturn, "return"},
    {EventKind::kThrow, "throw"},
    {EventKind::kFault, "fault"},
    {EventKind::kPhaseBegin, "begin"},
    {EventKind::kPhaseEnd, "end"},
    {EventKind::kOutcome, "outcome"},
}}};

struct Event {
  std::int64_t tNs = 0;  // since the run's start, on the run's clock (RunRecord::clock)
  int rank = 0;
  EventKind kind = EventKind::kCall;
  std::string what;
  int peer = -1;
  std::string detail;
  int fault = -1;  // kFault: the index of the fault that fired in scenario.faults (-1: none)
  // kFault: the construction (buffer of `buffers:`, from 0) whose calls the rank was making when
  // it fired (the judge holds a fault aimed at one buffer to it); -1 elsewhere.
  int buffer = -1;
};

std::string toString(EventKind kind);

// One rank's log. Used by that rank's thread only. The fault decorators record into it as their
// FaultLog (a kFault event).
class EventLog : public faults::FaultLog {
 public:
  using Clock = std::chrono::steady_clock;
  EventLog(int rank, Clock::time_point start) : rank_(rank), start_(start) {}
  // Times read on `clock` (a thread launcher's run clock; simulated or real); every record is one
  // of its scheduling points. `clock` must outlive the log.
  EventLog(int rank, Clock::time_point start, peerconf::Clock& clock)
      : rank_(rank), start_(start), clock_(&clock) {}

  void record(EventKind kind, std::string what, int peer = -1, std::string detail = {},
              int fault = -1, int buffer = -1);
  void fired(std::string_view site, int peer, std::string detail, int index,
             int construction) override {
    record(EventKind::kFault, std::string(site), peer, std::move(detail), index, construction);
  }
  // Called after each record (MPI workers stream events so a killed rank's last one survives).
  void setSink(std::function<void(const Event&)> sink) { sink_ = std::move(sink); }

  int rank() const noexcept { return rank_; }
  Clock::time_point start() const noexcept { return start_; }
  const std::vector<Event>& events() const noexcept { return events_; }
  std::vector<Event> take() { return std::move(events_); }

 private:
  int rank_;
  Clock::time_point start_;
  peerconf::Clock* clock_ = nullptr;  // null: the steady clock
  std::vector<Event> events_;
  std::function<void(const Event&)> sink_;
};

}  // namespace peerconf::harness::model
