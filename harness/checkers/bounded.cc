// C8: the run's wall time against its bound, and who was reported dead or hung.
#include "checkers/bounded.h"

#include <algorithm>
#include <string>

#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::Finding;
using model::formatNs;
using model::plannedBound;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;

namespace {

std::string lastEvent(const RankResult& result) {
  if (result.events.empty()) return "no events";
  const Event& event = result.events.back();
  std::string text = "last event " + toString(event.kind) + " " + event.what;
  if (event.peer >= 0) text += " (peer " + std::to_string(event.peer) + ")";
  if (!event.detail.empty()) text += " [" + event.detail + "]";
  text += " at " + formatNs(event.tNs);
  return text;
}

// When the rank's constructor (or the runner's agreement before it) raised: the end of its last
// "construct" or "ready" phase; what follows is the harness's own (its barrier, the outcome).
std::int64_t raisedAt(const RankResult& result) {
  for (auto it = result.events.rbegin(); it != result.events.rend(); ++it) {
    if (it->kind == EventKind::kPhaseEnd && (it->what == "construct" || it->what == "ready")) {
      return it->tNs;
    }
  }
  return result.endNs;
}

// The last fault that fired on any rank, or null when none did (the bound then counts from the
// run's start).
const Event* lastFault(const RunRecord& record) {
  const Event* last = nullptr;
  for (const RankResult& result : record.ranks) {
    for (const Event& event : result.events) {
      if (event.kind == EventKind::kFault && (last == nullptr || event.tNs > last->tNs)) {
        last = &event;
      }
    }
  }
  return last;
}

// Together, judged in time (model/scenario.h togetherBound): on simulated time every rank of a
// raising run raises within one agreement round of the last fault that fired. One finding a rank
// past it.
int checkTogether(const RunRecord& record, std::vector<Finding>& findings) {
  if (!record.simulatedTime()) return 0;
  const auto round = togetherBound(record.scenario);
  if (!round) return 0;
  const Event* fault = lastFault(record);
  const std::int64_t from = fault == nullptr ? 0 : fault->tNs;
  const std::string since = fault == nullptr ? std::string("the run's start")
                                             : "the last fault that fired (" + fault->what +
                                                   " on rank " + std::to_string(fault->rank) +
                                                   " at " + formatNs(fault->tNs) + ")";
  int problems = 0;
  for (const RankResult& result : record.ranks) {
    if (result.status != RankStatus::kRaised) continue;
    const std::int64_t at = raisedAt(result);
    if (at - from <= round->count()) continue;
    ++problems;
    findings.push_back({result.rank, "raised at " + formatNs(at) + " simulated, " +
                                         formatNs(at - from) + " after " + since +
                                         ": past one agreement round (" +
                                         std::to_string(round->count() / 1000) +
                                         " us): the ranks must raise together, not wait out a "
                                         "deadline"});
  }
  return problems;
}

}  // namespace

Verdict checkBounded(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC8Bounded, record);
  const Scenario& scenario = record.scenario;
  const std::chrono::nanoseconds bound = plannedBound(scenario);
  int problems = 0;
  std::vector<Finding> states;

  // Under simulated time the run lasts until its last rank's last event, in virtual time; a
  // rank stuck past the real-time safety net is reported missing below.
  const std::int64_t runNs = record.timelineNs();
  const std::string took = formatNs(runNs) + (record.simulatedTime() ? " simulated" : "");

  if (runNs > bound.count()) {
    ++problems;
    verdict.findings.push_back(
        {-1, "the run took " + took + ", past its bound of " + formatNs(bound.count()) +
                 (scenario.expect.within ? " (expect.within)" : " (derived from the deadline)")});
  }

  problems += checkTogether(record, verdict.findings);

  for (int rank = 0; rank < rankCount(record); ++rank) {
    const RankResult* result = findRank(record, rank);
    const bool expected = expectedReported(scenario, rank);
    if (result == nullptr) {
      ++problems;
      verdict.findings.push_back({rank, "no result came back (missing)"});
      continue;
    }
    const bool reported = stoppedByFault(result->status);
    std::string problem;
    if (result->status == RankStatus::kMissing) {
      problem = "missing: nothing came back from this rank";
    } else if (expected && !reported) {
      problem = "expected to die or hang and be reported, but " + describeResult(*result);
    } else if (!expected && reported) {
      problem = "reported " + toString(result->status) + ", but the scenario expects no such rank";
    }
    if (!problem.empty()) {
      ++problems;
      verdict.findings.push_back({rank, problem});
    }
    states.push_back({rank, toString(result->status) + ", ended at " + formatNs(result->endNs) +
                                ", " + lastEvent(*result)});
  }
  verdict.findings.insert(verdict.findings.end(), states.begin(), states.end());

  if (problems > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(problems) + " problem(s): run of " + took + " (bound " +
                      formatNs(bound.count()) + ")";
  } else {
    verdict.summary =
        "ended in " + took + " (bound " + formatNs(bound.count()) + ")" +
        (scenario.expect.reported.empty() ? std::string()
                                          : ", " + std::to_string(scenario.expect.reported.size()) +
                                                " rank(s) reported as expected") +
        (record.simulatedTime() && togetherBound(scenario)
             ? ", every rank raised within one agreement round (" +
                   std::to_string(togetherBound(scenario)->count() / 1000) +
                   " us) of the last fault"
             : std::string());
  }
  return verdict;
}

}  // namespace peerconf::harness::checkers
