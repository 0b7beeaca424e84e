// Trace-event JSON: pairs each rank's begin/end events into complete spans.
#include "reports/trace.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "judge/judgement.h"
#include "model/record_json.h"
#include "model/text.h"

namespace peerconf::harness::reports {

using judge::Failure;
using judge::Judgement;
using model::dumpJson;
using model::Event;
using model::EventKind;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::validUtf8;

namespace {

using nlohmann::json;

double micros(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

json metadata(const char* name, int pid, int tid, json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// A begin event waiting for its end.
struct Open {
  const Event* begin;
  bool phase;
};

class RankTrack {
 public:
  RankTrack(std::vector<json>& out, int pid, int tid, std::int64_t offsetNs)
      : out_(out), pid_(pid), tid_(tid), offsetNs_(offsetNs) {}

  void begin(const Event& event, bool phase) { open_.push_back({&event, phase}); }

  void end(const Event& event, bool phase) {
    // The matching begin is the innermost open one of the same name and kind; anything opened
    // inside it and never ended is closed here, unfinished.
    for (std::size_t i = open_.size(); i-- > 0;) {
      if (open_[i].phase != phase || open_[i].begin->what != event.what) continue;
      while (open_.size() > i + 1) {
        span(open_.back(), event.tNs, nullptr);
        open_.pop_back();
      }
      span(open_[i], event.tNs, &event);
      open_.pop_back();
      return;
    }
    // An end without a begin: show it as a marker rather than lose it.
    instant(event, "unmatched " + toString(event.kind) + ": " + event.what, "unmatched");
  }

  void instant(const Event& event, const std::string& name, const char* category) {
    json args = {{"kind", toString(event.kind)}};
    if (event.peer >= 0) args["peer"] = event.peer;
    if (!event.detail.empty()) args["detail"] = validUtf8(event.detail);
    out_.push_back({{"name", validUtf8(name)},
                    {"cat", category},
                    {"ph", "i"},
                    {"s", "t"},
                    {"ts", micros(event.tNs + offsetNs_)},
                    {"pid", pid_},
                    {"tid", tid_},
                    {"args", std::move(args)}});
  }

  void closeAll(std::int64_t endNs) {
    while (!open_.empty()) {
      span(open_.back(), endNs, nullptr);
      open_.pop_back();
    }
  }

 private:
  void span(const Open& open, std::int64_t endNs, const Event* end) {
    const Event& begin = *open.begin;
    json args = json::object();
    if (begin.peer >= 0) args["peer"] = begin.peer;
    if (!begin.detail.empty()) args["call"] = validUtf8(begin.detail);
    if (end == nullptr) {
      args["unfinished"] = true;
    } else if (end->kind == EventKind::kThrow) {
      args["threw"] = validUtf8(end->detail);
    } else if (!end->detail.empty()) {
      args[open.phase ? "end" : "returned"] = validUtf8(end->detail);
    }
    out_.push_back({{"name", validUtf8(begin.what)},
                    {"cat", open.phase ? "phase" : "seam"},
                    {"ph", "X"},
                    {"ts", micros(begin.tNs + offsetNs_)},
                    {"dur", micros(std::max<std::int64_t>(0, endNs - begin.tNs))},
                    {"pid", pid_},
                    {"tid", tid_},
                    {"args", std::move(args)}});
  }

  std::vector<json>& out_;
  int pid_;
  int tid_;
  std::int64_t offsetNs_;
  std::vector<Open> open_;
};

}  // namespace

std::vector<json> traceEvents(const RunRecord& record, int pid, std::int64_t offsetNs) {
  std::vector<json> out;
  out.push_back(metadata("process_name", pid, 0,
                         {{"name", validUtf8(record.scenario.name.empty() ? record.scenario.file
                                                                          : record.scenario.name) +
                                       (record.simulatedTime() ? " (simulated time)" : "")}}));
  out.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
  const std::int64_t runEndNs = record.timelineNs();
  for (const RankResult& rank : record.ranks) {
    const int tid = rank.rank;
    out.push_back(metadata("thread_name", pid, tid, {{"name", "rank " + std::to_string(tid)}}));
    out.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));

    RankTrack track(out, pid, tid, offsetNs);
    bool outcome = false;
    std::int64_t lastNs = rank.endNs;
    for (const Event& event : rank.events) {
      lastNs = std::max(lastNs, event.tNs);
      switch (event.kind) {
        case EventKind::kCall:
          track.begin(event, false);
          break;
        case EventKind::kReturn:
        case EventKind::kThrow:
          track.end(event, false);
          break;
        case EventKind::kPhaseBegin:
          track.begin(event, true);
          break;
        case EventKind::kPhaseEnd:
          track.end(event, true);
          break;
        case EventKind::kFault:
          track.instant(event, "fault: " + event.what, "fault");
          break;
        case EventKind::kOutcome:
          outcome = true;
          track.instant(event, "outcome: " + event.what, "outcome");
          break;
      }
    }
    // A rank that stopped (dead, hung, missing) was stuck where it stood until the run ended.
    const bool stopped = stoppedByFault(rank.status) || rank.status == RankStatus::kMissing;
    const std::int64_t endNs = stopped ? std::max(lastNs, runEndNs) : lastNs;
    track.closeAll(endNs);
    if (!outcome) {
      Event synthetic{endNs, tid, EventKind::kOutcome, toString(rank.status), -1, rank.message};
      track.instant(synthetic, "outcome: " + synthetic.what, "outcome");
    }
  }
  return out;
}

TraceReport::TraceReport(TraceOptions options) : options_(options) {}

void TraceReport::onScenario(const RunRecord& record, const Judgement& judgement) {
  const int pid = next_++;
  const std::int64_t offset = options_.sequential ? offsetNs_ : 0;
  const std::int64_t runEndNs = record.timelineNs();
  for (nlohmann::json& event : traceEvents(record, pid, offset)) {
    events_.push_back(std::move(event));
  }
  if (!judgement.verdicts.empty()) {
    events_.push_back(
        metadata("process_labels", pid, 0, {{"labels", judgement.passed ? "PASS" : "FAIL"}}));
    for (const Failure& failure : judgement.failures) {
      events_.push_back({{"name", validUtf8("FAIL " + failure.title)},
                         {"cat", "verdict"},
                         {"ph", "i"},
                         {"s", "p"},
                         {"ts", micros(offset + runEndNs)},
                         {"pid", pid},
                         {"tid", 0},
                         {"args", {{"summary", validUtf8(failure.summary)}}}});
    }
  }
  offsetNs_ += std::max<std::int64_t>(runEndNs, 0);
}

nlohmann::json TraceReport::json() const {
  return {{"traceEvents", events_}, {"displayTimeUnit", "ns"}};
}

void TraceReport::write(std::ostream& out) const { out << dumpJson(json()) << '\n'; }

void TraceReport::writeFile(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write the trace to " + path);
  write(file);
  file.flush();
  if (!file) throw std::runtime_error("failed while writing the trace to " + path);
}

}  // namespace peerconf::harness::reports
