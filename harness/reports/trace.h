// Trace-event report (--trace FILE): a Chrome trace-event JSON timeline of every run, loadable in
// Perfetto and chrome://tracing. One process per scenario, one thread per rank, spans for seam
// calls and phases, instant markers for faults and outcomes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "judge/judgement.h"
#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::reports {

struct TraceOptions {
  // Lay scenarios one after the other on the time axis (each offset by the previous runs' wall
  // times) instead of every one starting at 0.
  bool sequential = false;
};

class TraceReport {
 public:
  explicit TraceReport(TraceOptions options = {});

  // Adds one scenario as process `pid` = its index (0, 1, ...). Judged (`judgement`, the run's
  // judge::judgeRun, with verdicts), the process is labelled PASS/FAIL and each failing property
  // gets a process-wide marker at the run's end.
  void onScenario(const model::RunRecord& record, const judge::Judgement& judgement = {});

  // {"traceEvents": [...], "displayTimeUnit": "ns"}
  nlohmann::json json() const;
  void write(std::ostream& out) const;
  // Writes to `path`; throws std::runtime_error naming the path when it cannot.
  void writeFile(const std::string& path) const;

 private:
  TraceOptions options_;
  nlohmann::json events_ = nlohmann::json::array();
  int next_ = 0;
  std::int64_t offsetNs_ = 0;
};

// The trace events of one run as process `pid`, shifted by `offsetNs`: metadata (process_name =
// scenario name, thread_name "rank N"), "X" spans for kCall..kReturn/kThrow pairs (cat "seam")
// and kPhaseBegin..kPhaseEnd pairs (cat "phase") — a span never closed (a dead or hung rank)
// ends where the rank's record ends and carries args.unfinished — and "i" markers (s "t") for
// kFault and kOutcome events. Timestamps and durations in µs (float).
std::vector<nlohmann::json> traceEvents(const model::RunRecord& record, int pid,
                                        std::int64_t offsetNs = 0);

}  // namespace peerconf::harness::reports
