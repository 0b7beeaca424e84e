// C8 extended with the data plane's outcomes.
#include "checkers/liveness.h"

#include <algorithm>
#include <set>
#include <string>

#include "checkers/bounded.h"
#include "checkers/support.h"
#include "model/fault_sites.h"
#include "model/scenario.h"

namespace peerconf::harness::checkers {

using model::DataplaneOutcome;
using model::RankResult;
using model::Result;
using model::RunRecord;
using model::Verdict;

namespace {

// The data-plane rules of C8 over one data plane (each rank's dataPlane of `record`), added to
// `verdict`; `prefix` names the buffer ("buffer 1: ") when there are several.
// Over 80 lines: the data-plane liveness rules in one walk; to be split by rule.
// NOLINTNEXTLINE(readability-function-size): to be split
void addDataPlaneLiveness(const RunRecord& record, const std::string& prefix, Verdict& verdict) {
  // Stopped: a rank whose data plane says so, and a rank an `at: dataplane` death, hang or exit
  // stops (under --kill-mode signal a killed process leaves no data-plane result).
  std::set<int> stopped;
  if (record.scenario.dataPlane) {
    const std::vector<int> faulted = harness::model::dataPlaneStopRanks(record.scenario);
    stopped.insert(faulted.begin(), faulted.end());
  }
  bool any = false;
  for (const RankResult& r : record.ranks) {
    if (!r.dataPlane) continue;
    any = true;
    if (r.dataPlane->outcome == DataplaneOutcome::kStopped) stopped.insert(r.rank);
  }
  if (!any) return;

  // A late rank whose delay times its peers out for certain (model::certainDataPlaneTimeout):
  // the run's timeouts and aborts are planned, and a peer's timeout must name a late rank.
  const auto slow = harness::model::certainDataPlaneTimeout(record.scenario);
  const bool planned = !stopped.empty() || slow.has_value();
  bool slowReported = !slow.has_value();
  bool slowCompleted = slow.has_value();

  std::vector<harness::model::Finding> problems;
  std::vector<harness::model::Finding> states;
  bool stopReported = stopped.empty();
  for (const RankResult& r : record.ranks) {
    if (!r.dataPlane) continue;
    const Result& dp = *r.dataPlane;
    std::string state = "data plane " + toString(dp.outcome) + " after " +
                        std::to_string(dp.stepsDone) + " of " + std::to_string(dp.stepsPlanned) +
                        " steps" + (dp.detail.empty() ? "" : ": " + dp.detail);
    states.push_back({r.rank, state});
    if (dp.outcome != DataplaneOutcome::kCompleted) slowCompleted = false;
    switch (dp.outcome) {
      case DataplaneOutcome::kCompleted:
      case DataplaneOutcome::kStopped:
        break;
      case DataplaneOutcome::kSkipped:
        problems.push_back({r.rank, "the data plane did not run: " + dp.detail});
        break;
      case DataplaneOutcome::kTimeout:
        if (dp.waitWhat == "host-bound") {
          // A GPU kernel past the run's bound, ended by the host's abort: never expected.
          problems.push_back({r.rank, dp.detail});
        } else if (!planned) {
          problems.push_back(
              {r.rank, "a data-plane wait timed out with no rank planned to stop: " + dp.detail});
        } else {
          if (stopped.count(dp.waitPeer) > 0) stopReported = true;
          if (slow &&
              std::find(slow->ranks.begin(), slow->ranks.end(), dp.waitPeer) != slow->ranks.end()) {
            slowReported = true;
          }
        }
        break;
      case DataplaneOutcome::kAborted:
        if (!planned) {
          problems.push_back({r.rank, "aborted with no rank planned to stop: " + dp.detail});
        }
        break;
      case DataplaneOutcome::kError:
        problems.push_back({r.rank, "the data plane could not run: " + dp.detail});
        break;
    }
  }
  // A stop the file plans (`dataplane.stop`) must have happened: its rank stops at the start of
  // that step, so a data plane of its rank that completed never reached it (a step cap that cut
  // the run at or below the step, a driver that skips the stop). Without this the run passes as
  // a run with no stop at all: nothing stopped, so no timeout is owed.
  if (record.scenario.dataPlane && record.scenario.dataPlane->stop) {
    const auto& stop = *record.scenario.dataPlane->stop;
    for (const RankResult& r : record.ranks) {
      if (r.rank != stop.rank || !r.dataPlane) continue;
      const Result& dp = *r.dataPlane;
      if (dp.outcome != DataplaneOutcome::kCompleted) continue;
      std::string what = "the planned stop did not happen: rank " + std::to_string(stop.rank) +
                         " was to stop at step " + std::to_string(stop.step) +
                         " (dataplane.stop), but its data plane completed " +
                         std::to_string(dp.stepsDone) + " of " + std::to_string(dp.stepsPlanned) +
                         " steps";
      if (dp.stepsPlanned <= stop.step) {
        what +=
            " (the run was too short to reach the stop: a step cap must skip such a run, "
            "not cut it short)";
      }
      problems.push_back({r.rank, what});
    }
  }
  if (slow && !slowReported) {
    problems.push_back({-1, "the planned timeout did not happen: " +
                                harness::model::slowStepText(record.scenario, *slow) +
                                (slowCompleted ? ", but every rank's data plane completed"
                                               : ", but no other rank's wait timed out on them")});
  }
  if (!stopReported) {
    std::string ranks;
    for (int s : stopped) ranks += (ranks.empty() ? "" : ", ") + std::to_string(s);
    problems.push_back(
        {-1, "rank(s) " + ranks + " stopped mid-run but no other rank's wait timed out on them"});
  }
  for (auto& finding : problems) finding.text = prefix + finding.text;
  for (auto& finding : states) finding.text = prefix + finding.text;
  if (problems.empty()) {
    verdict.findings.insert(verdict.findings.end(), states.begin(), states.end());
    if (!stopped.empty() && verdict.status != Verdict::Status::kFail) {
      verdict.summary += "; " + prefix + "data-plane stop reported by a timeout";
    }
    if (slow && verdict.status != Verdict::Status::kFail) {
      verdict.summary += "; " + prefix + "late rank reported by the peers' timeout";
    }
    return;
  }
  verdict.status = Verdict::Status::kFail;
  verdict.summary = (verdict.summary.empty() ? std::string() : verdict.summary + "; ") + prefix +
                    std::to_string(problems.size()) + " data-plane problem(s)";
  verdict.findings.insert(verdict.findings.end(), problems.begin(), problems.end());
  verdict.findings.insert(verdict.findings.end(), states.begin(), states.end());
}

// A data plane that stopped where nobody planned a stop: neither its spec's `stop` for that rank
// nor an `at: dataplane` fault of the rank aimed at that buffer (any, with one data plane). A
// driver that stopped a rank in the wrong buffer's data plane, or the wrong rank, would otherwise
// pass: the peers' timeouts on it look planned. Read from the faults as written, not through
// dataPlaneView (which plans each buffer's stops the way the runner does). And a data plane over
// a buffer past the `buffers` whose data planes run, which no checker would judge.
void addUnplannedDataPlanes(const RunRecord& record, std::size_t buffers, Verdict& verdict) {
  const harness::model::Scenario& scenario = record.scenario;
  if (!scenario.dataPlane) return;
  const bool perBuffer = harness::model::dataPlanePerBuffer(scenario);
  std::size_t unplanned = 0;
  for (std::size_t buffer = 0; buffer < buffers; ++buffer) {
    const bool own = perBuffer && scenario.buffers[buffer].dataPlane.has_value();
    const harness::model::Spec& spec =
        own ? *scenario.buffers[buffer].dataPlane : *scenario.dataPlane;
    for (const RankResult& r : record.ranks) {
      const Result* dp = harness::model::dataPlaneOfBuffer(r, buffer);
      if (dp == nullptr || dp->outcome != DataplaneOutcome::kStopped) continue;
      if (spec.stop && spec.stop->rank == r.rank) continue;
      const bool faulted =
          std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const auto& fault) {
            return harness::model::stopsInDataPlane(fault) && fault.appliesTo(r.rank) &&
                   (!perBuffer || !fault.onBuffer ||
                    static_cast<std::size_t>(*fault.onBuffer) == buffer);
          });
      if (faulted) continue;
      ++unplanned;
      verdict.findings.push_back(
          {r.rank, bufferPrefix(scenario, buffer) + "rank " + std::to_string(r.rank) +
                       "'s data plane stopped after " + std::to_string(dp->stepsDone) +
                       " steps, but no stop was planned for it there"});
    }
  }
  // A data plane of a buffer past those that run (model::dataPlanesRun: one at a time, the round
  // whose construction fails and the later ones): the run and the derivation disagree.
  if (perBuffer) {
    for (std::size_t buffer = buffers; buffer < scenario.buffers.size(); ++buffer) {
      for (const RankResult& r : record.ranks) {
        if (harness::model::dataPlaneOfBuffer(r, buffer) == nullptr) continue;
        ++unplanned;
        verdict.findings.push_back(
            {r.rank, bufferPrefix(scenario, buffer) + "rank " + std::to_string(r.rank) +
                         " ran a data plane over a buffer whose construction was derived to "
                         "fail (or never be made)"});
      }
    }
  }
  if (unplanned == 0) return;
  verdict.status = Verdict::Status::kFail;
  verdict.summary = (verdict.summary.empty() ? std::string() : verdict.summary + "; ") +
                    std::to_string(unplanned) + " data-plane run(s) or stop(s) nobody planned";
}

}  // namespace

Verdict checkBoundedWithDataPlane(const RunRecord& record) {
  Verdict verdict = checkers::checkBounded(record);
  // With several buffers, each buffer's data planes are judged as one buffer's (dataPlaneView).
  const std::size_t buffers = dataPlaneBuffers(record.scenario);
  if (!harness::model::dataPlanePerBuffer(record.scenario)) {
    addDataPlaneLiveness(record, "", verdict);
  } else {
    for (std::size_t buffer = 0; buffer < buffers; ++buffer) {
      addDataPlaneLiveness(dataPlaneView(record, buffer), bufferPrefix(record.scenario, buffer),
                           verdict);
    }
  }
  addUnplannedDataPlanes(record, buffers, verdict);
  return verdict;
}

}  // namespace peerconf::harness::checkers
