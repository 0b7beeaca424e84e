// EventLog: append-only, timestamped against the run's start.
#include "model/event_log.h"

namespace peerconf::harness::model {

std::string toString(EventKind kind) { return kEventKindNames.name(kind); }

void EventLog::record(EventKind kind, std::string what, int peer, std::string detail, int fault,
                      int buffer) {
  if (clock_ != nullptr) clock_->point();  // another rank may run first (simulated time)
  const auto now = clock_ != nullptr ? clock_->now() : Clock::now();
  events_.push_back(
      Event{std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count(), rank_, kind,
            std::move(what), peer, std::move(detail), fault, buffer});
  if (sink_) sink_(events_.back());
}

}  // namespace peerconf::harness::model
