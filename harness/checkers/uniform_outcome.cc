// C1: one outcome for the whole group, the one the scenario expects.
#include "checkers/uniform_outcome.h"

#include <algorithm>
#include <string>

#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::Outcome;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;

namespace {

// `outcome: raise` with some ranks expected `ok`: each rank ends as its expectation says, and an
// `ok` rank never began the construction the raising ranks raised in (it began fewer
// constructions than each of them: it never entered their last one).
Verdict checkMixed(const RunRecord& record, Verdict verdict) {
  const Scenario& scenario = record.scenario;
  int raisedIn = 0;  // the constructions the raising ranks began, the last the one they raised in
  for (const RankResult& result : record.ranks) {
    if (result.status == RankStatus::kRaised) {
      raisedIn = std::max(raisedIn, constructionsBegun(result));
    }
  }
  int ok = 0, raised = 0, wrong = 0;
  for (int rank = 0; rank < rankCount(record); ++rank) {
    const RankResult* result = findRank(record, rank);
    const std::string status = result != nullptr ? describeResult(*result) : "missing (no result)";
    const bool wantOk = expectedOk(scenario, rank);
    const RankStatus got = result != nullptr ? result->status : RankStatus::kMissing;
    std::string text = status;
    if (got == RankStatus::kOk) ++ok;
    if (got == RankStatus::kRaised) ++raised;
    if (got != (wantOk ? RankStatus::kOk : RankStatus::kRaised)) {
      ++wrong;
      text += wantOk ? " (expected ok: it returns every buffer it constructed)"
                     : " (expected to raise)";
    } else if (wantOk && raisedIn > 0 && constructionsBegun(*result) >= raisedIn) {
      ++wrong;
      text += " (expected ok, but it began " + std::to_string(constructionsBegun(*result)) +
              " construction(s), the one the others raised in (construction " +
              std::to_string(raisedIn - 1) + ") among them)";
    } else if (wantOk) {
      text +=
          " (returned every buffer it constructed: " + std::to_string(constructionsBegun(*result)) +
          ")";
    }
    verdict.findings.push_back({rank, text});
  }
  const std::string counts = std::to_string(ok) + " ok, " + std::to_string(raised) + " raised";
  if (wrong > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = "expected raise with the ok ranks returning, but " + counts + " (" +
                      std::to_string(wrong) + " rank(s) not as expected)";
  } else {
    verdict.summary = "every rank expected to raise raised (" + std::to_string(raised) +
                      "), every rank expected ok returned every buffer it constructed (" +
                      std::to_string(ok) + ")";
  }
  return verdict;
}

}  // namespace

Verdict checkUniformOutcome(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC1Uniform, record);
  const Scenario& scenario = record.scenario;
  const Outcome expected = scenario.expect.outcome;
  const RankStatus wanted = expectedSurvivorStatus(scenario);

  // Under `outcome: raise`, the ranks expected `ok` (a buffer-count fault's returning ranks)
  // return, the others raise: judged rank by rank (checkMixed).
  for (int rank = 0; rank < rankCount(record); ++rank) {
    if (expectedOk(scenario, rank)) return checkMixed(record, std::move(verdict));
  }

  int considered = 0, ok = 0, raised = 0, other = 0;
  for (int rank = 0; rank < rankCount(record); ++rank) {
    const RankResult* result = findRank(record, rank);
    const std::string status = result != nullptr ? describeResult(*result) : "missing (no result)";
    if (expectedReported(scenario, rank)) {
      verdict.findings.push_back({rank, status + " (expected to be reported; not counted)"});
      continue;
    }
    ++considered;
    const RankStatus got = result != nullptr ? result->status : RankStatus::kMissing;
    if (got == RankStatus::kOk)
      ++ok;
    else if (got == RankStatus::kRaised)
      ++raised;
    else
      ++other;
    std::string text = status;
    if (got != wanted) {
      text += wanted == RankStatus::kOk ? " (expected ok)" : " (expected to raise)";
      // What went wrong on this rank, where the message alone does not say ("failed on this TP
      // rank"): the chained cause, as the core attached it.
      if (got == RankStatus::kRaised && !result->cause.empty()) {
        text += "; its cause: " + result->cause;
      }
    }
    verdict.findings.push_back({rank, text});
  }

  if (considered == 0) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "every rank is expected to be reported; no outcome to compare";
    return verdict;
  }

  const std::string counts = std::to_string(ok) + " ok, " + std::to_string(raised) + " raised" +
                             (other > 0 ? ", " + std::to_string(other) + " dead/hung/missing" : "");
  const bool uniform = other == 0 && (ok == 0 || raised == 0);
  const bool matches = wanted == RankStatus::kOk ? ok == considered : raised == considered;
  if (!uniform) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = (other > 0 ? "not every rank came back: " : "mixed outcome: ") + counts;
  } else if (!matches) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = "expected " + toString(expected) +
                      (wanted == RankStatus::kOk ? " (survivors ok)" : "") + ", but " + counts;
  } else {
    verdict.summary =
        wanted == RankStatus::kOk
            ? (expected == Outcome::kReported ? "every surviving rank" : "every rank") +
                  std::string(" returned a PeerBuffer (") + std::to_string(ok) + ")"
        : expected == Outcome::kReported
            ? "every surviving rank raised (" + std::to_string(raised) + ")"
            : "every rank raised (" + std::to_string(raised) + ")";
  }
  return verdict;
}

}  // namespace peerconf::harness::checkers
