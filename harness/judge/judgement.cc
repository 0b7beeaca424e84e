// Judging a scenario from its verdicts, and telling the story of a failure rank by rank.
#include "judge/judgement.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "checkers/checkers.h"
#include "expectation/compare.h"
#include "model/fault_sites.h"
#include "model/text.h"

namespace peerconf::harness::judge {

using model::Event;
using model::EventKind;
using model::ExpectedFinding;
using model::Fault;
using model::FaultSite;
using model::Finding;
using model::formatNs;
using model::Mark;
using model::namesProperty;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::reproduceCommand;
using model::RunRecord;
using model::Scenario;
using model::shortName;
using model::toString;
using model::Verdict;

namespace {

// The property named by a scenario's `violations` entry ("C6", "c6", "C6 no ...").
bool names(const std::string& entry, Property property) { return namesProperty(entry, property); }

// Whether `text` holds `fragment`, ignoring case.
bool holds(const std::string& text, const std::string& fragment) {
  if (fragment.empty()) return true;
  const auto lower = [](unsigned char c) { return std::tolower(c); };
  return std::search(text.begin(), text.end(), fragment.begin(), fragment.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

// The named finding a control expects of `property`, if the scenario gives one.
const ExpectedFinding* expectedFinding(const Scenario& scenario, Property property) {
  for (const ExpectedFinding& finding : scenario.expect.findings) {
    if (names(finding.property, property)) return &finding;
  }
  return nullptr;
}

// Whether `verdict` reports `fragment` (ignoring case) in its summary or one of its findings.
bool reports(const Verdict& verdict, const std::string& fragment) {
  if (holds(verdict.summary, fragment)) return true;
  return std::any_of(verdict.findings.begin(), verdict.findings.end(),
                     [&](const Finding& f) { return holds(f.text, fragment); });
}

std::string where(const Scenario& scenario, Mark mark) {
  std::string out = scenario.file;
  if (mark.line > 0) out += ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column);
  return out;
}

// "expected X, but got Y" (C1, C2) as "the file expected X; the core did: Y".
std::string fileExpected(const std::string& text) {
  if (text.rfind("expected ", 0) != 0) return text;
  std::string out = "the file " + text;
  for (const char* got : {", but ", ", got "}) {
    const auto at = out.find(got);
    if (at != std::string::npos)
      return out.replace(at, std::string(got).size(), "; the core did: ");
  }
  return out;
}

// A failure of the production core that the file's own expect: explains (`peerconf explain`
// finds it differs from what the faults imply): worded as the file's problem, not the core's.
void wordAsTheFiles(const RunRecord& record, const FileDifferences& file, Failure& failure,
                    Property property) {
  if (file.expect.empty()) return;
  if (property != Property::kC1Uniform && property != Property::kC2Message) return;
  failure.summary =
      "the file's expect: is wrong, not the core: the file expected what its "
      "faults do not lead to, and the core did what they imply (`peerconf explain " +
      record.scenario.file +
      "` derives the expectation; --write-expect writes "
      "it): " +
      failure.summary;
  for (Finding& finding : failure.findings) finding.text = fileExpected(finding.text);
  for (const std::string& difference : file.expect) {
    failure.findings.push_back({-1, "explain: " + difference});
  }
}

constexpr Property kAll[] = {
    Property::kC1Uniform,   Property::kC2Message,     Property::kC3Cleanup, Property::kC4Addresses,
    Property::kC5Agreement, Property::kC6NoOverwrite, Property::kC7NoStale, Property::kC8Bounded};

}  // namespace

namespace {

// The properties a control's `violations:` names that no checker ran, and names of no property.
void judgeNamedControls(const RunRecord& record, const std::vector<Verdict>& verdicts,
                        Judgement& judgement) {
  for (const std::string& entry : record.scenario.expect.violations) {
    bool known = false;
    for (Property property : kAll) {
      if (!names(entry, property)) continue;
      known = true;
      const bool ran = std::any_of(verdicts.begin(), verdicts.end(),
                                   [&](const Verdict& v) { return v.property == property; });
      if (!ran) {
        judgement.failures.push_back({toString(property),
                                      "expected to fail (negative control), but no checker ran it",
                                      {},
                                      reproduceCommand(record),
                                      "control"});
      }
    }
    if (!known) {
      judgement.failures.push_back({"scenario",
                                    "expects an unknown property to fail: " + entry,
                                    {},
                                    reproduceCommand(record),
                                    "scenario"});
    }
  }
}

// Every certain fault must have fired on every rank it names (a run that never tested what it
// declares fails), worded as the file's problem where the timeline never reaches the fault.
void judgeCoverage(const RunRecord& record, const FileDifferences& file, Judgement& judgement) {
  const std::vector<CoverageMiss> misses = coverageMisses(record);
  if (misses.empty()) return;
  Failure failure{"coverage",
                  std::to_string(misses.size()) +
                      " certain fault firing(s) never happened: the scenario did not test "
                      "what it declares",
                  {},
                  reproduceCommand(record),
                  "coverage"};
  if (!file.unfiredFaults.empty()) {
    // The file's timeline never reaches them: the file's problem, not the core's.
    failure.summary +=
        "; the file is wrong, not the core: its timeline never reaches them "
        "(`peerconf explain " +
        record.scenario.file + "`)";
  }
  for (const CoverageMiss& miss : misses) {
    const Fault& fault = record.scenario.faults[miss.fault];
    failure.findings.push_back({miss.rank, "fault #" + std::to_string(miss.fault) + " (" +
                                               toString(fault.site) + ", probability 1, " +
                                               where(record.scenario, fault.mark) +
                                               ") never fired on this rank"});
  }
  for (const std::string& difference : file.unfiredFaults) {
    failure.findings.push_back({-1, "explain: " + difference});
  }
  judgement.failures.push_back(std::move(failure));
}

// A fault with `count: N` fires at most N times on a rank: the file promises it (close-fails-once:
// "exactly one failure"), and no checker counts firings, so a fault plan that fired once more
// would pass every verdict while testing another scenario than the file's.
void judgeCounts(const RunRecord& record, Judgement& judgement) {
  Failure failure{"fault count", "", {}, reproduceCommand(record), "fault-count"};
  for (const FaultExcess& excess : countExcesses(record)) {
    const Fault& fault = record.scenario.faults[excess.fault];
    failure.findings.push_back(
        {excess.rank, "fault #" + std::to_string(excess.fault) + " (" + toString(fault.site) +
                          ", count " + std::to_string(fault.count) + ", " +
                          where(record.scenario, fault.mark) + ") fired " +
                          std::to_string(excess.fired) + " times on this rank"});
  }
  if (failure.findings.empty()) return;
  failure.summary = std::to_string(failure.findings.size()) +
                    " fault(s) fired more often than their count: the harness planted what the "
                    "scenario does not declare";
  judgement.failures.push_back(std::move(failure));
}

// A fault aimed at one buffer (`buffer: I`) fires only among that buffer's calls: its
// construction, close and destruction (the fault plan's eligibility, RankFaults::setConstruction).
// A plan that drew it elsewhere fails the same way a count overrun does: the run is
// self-consistent (the fault fired, the core answered it), but it tested another construction
// than the file's, and no checker can tell (the outcome of a construction does not name it).
void judgeAims(const RunRecord& record, Judgement& judgement) {
  Failure failure{"fault aim", "", {}, reproduceCommand(record), "fault-aim"};
  const std::vector<Fault>& faults = record.scenario.faults;
  for (const RankResult& rank : record.ranks) {
    for (const Event& event : rank.events) {
      if (event.kind != EventKind::kFault || event.fault < 0 ||
          static_cast<std::size_t>(event.fault) >= faults.size()) {
        continue;
      }
      const Fault& fault = faults[static_cast<std::size_t>(event.fault)];
      if (!fault.onBuffer || event.buffer < 0 || event.buffer == *fault.onBuffer) continue;
      failure.findings.push_back(
          {rank.rank, "fault #" + std::to_string(event.fault) + " (" + toString(fault.site) + ", " +
                          where(record.scenario, fault.mark) + ") is aimed at buffer " +
                          std::to_string(*fault.onBuffer) + " but fired in construction " +
                          std::to_string(event.buffer)});
    }
  }
  if (failure.findings.empty()) return;
  failure.summary = std::to_string(failure.findings.size()) +
                    " firing(s) outside the buffer the fault is aimed at: the harness planted "
                    "what the scenario does not declare";
  judgement.failures.push_back(std::move(failure));
}

// Faults that fired without their effect: the runtime accepted what it was meant to refuse, or
// refused what it was meant to accept. The run then cannot show what the file expects on this
// runtime, and what the checkers find follows from the runtime, not the core: a failure of its own
// ("fault without effect", against the file and the runtime), and the others worded as following
// from it.
void judgeEffects(const RunRecord& record, Judgement& judgement) {
  const std::vector<FaultWithoutEffect> missing = faultsWithoutEffect(record);
  if (missing.empty()) return;
  Failure failure{"fault without effect",
                  std::to_string(missing.size()) +
                      " fault(s) fired but had no effect on this "
                      "runtime (" +
                      record.runtime +
                      "): the run cannot show what the file expects here; the file and the "
                      "runtime, not the core (tests/conformance/runtime_table.yaml says what each "
                      "runtime does)",
                  {},
                  reproduceCommand(record),
                  "fault-without-effect"};
  for (const FaultWithoutEffect& m : missing) {
    const Fault& fault = record.scenario.faults[m.fault];
    failure.findings.push_back(
        {m.rank, m.what + ": fault #" + std::to_string(m.fault) + " (" + toString(fault.site) +
                     ", " + where(record.scenario, fault.mark) + ") had no effect here"});
  }
  for (Failure& other : judgement.failures) {
    other.summary =
        "follows from the fault without effect below, not from the core: " + other.summary;
  }
  judgement.failures.push_back(std::move(failure));
}

// Whether `failure` reports `fragment` (ignoring case) in its summary or one of its findings.
bool reports(const Failure& failure, const std::string& fragment) {
  if (holds(failure.summary, fragment)) return true;
  return std::any_of(failure.findings.begin(), failure.findings.end(),
                     [&](const Finding& f) { return holds(f.text, fragment); });
}

// A control of the judge (`expect.judge`): the failures it expects are the judge's answer, not
// failures of the run; each refusal it expects and did not get is one, naming what the judge did;
// every failure it does not expect stays (a control of the judge proves its rule, and hides
// nothing else). Without --require-coverage a coverage refusal is not demanded.
void judgeTheJudge(const RunRecord& record, Judgement& judgement) {
  const std::vector<model::JudgeRefusal>& expected = record.scenario.expect.refusals;
  if (expected.empty()) return;
  std::vector<bool> got(expected.size(), false);
  std::vector<Failure> kept;
  std::string what;  // the judge's failures, for a refusal it did not make
  for (Failure& failure : judgement.failures) {
    what +=
        (what.empty() ? "" : "; ") + failure.rule + " (" + failure.title + "): " + failure.summary;
    bool matched = false;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (expected[i].rule == failure.rule && reports(failure, expected[i].text)) {
        got[i] = matched = true;
      }
    }
    if (!matched) kept.push_back(std::move(failure));
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const model::JudgeRefusal& refusal = expected[i];
    if (got[i]) {
      judgement.refusals.push_back(refusal.rule);
      continue;
    }
    if (refusal.rule == "coverage" && !record.requireCoverage) continue;  // --no-coverage
    kept.push_back(
        {"judge control",
         "expected the judge to refuse the run for " + refusal.rule + " with the finding \"" +
             refusal.text + "\" (a control of the judge, " + where(record.scenario, refusal.mark) +
             "), but " +
             (what.empty() ? std::string("it passed the run") : "it refused it otherwise: " + what),
         {},
         reproduceCommand(record),
         "judge"});
  }
  judgement.failures = std::move(kept);
}

// Whether the production core ran: the suite sets record.core from the scenario's `core:` (else
// `run --core`); a run launched in code may name its planted core in the scenario only.
bool productionCore(const RunRecord& record) {
  const std::string& core = record.core.empty() ? record.scenario.core : record.core;
  return core.empty() || core == "production";
}

}  // namespace

FileDifferences fileDifferences(const Scenario& scenario) {
  const expectation::Derivation derived = expectation::derivation(scenario);
  if (!derived.notDerived.empty()) return {};
  const expectation::Comparison comparison = expectation::compare(scenario, derived.draws);
  const auto expect =
      static_cast<std::ptrdiff_t>(comparison.differences.size() - comparison.faultDifferences);
  FileDifferences out;
  out.expect.assign(comparison.differences.begin(), comparison.differences.begin() + expect);
  out.unfiredFaults.assign(comparison.differences.begin() + expect, comparison.differences.end());
  return out;
}

namespace {

// `outcome: as-drawn`: the run is judged against the oracle's derivation of the draw it made (the
// chance faults that fired in it), with what the file states itself (within, violations, judge)
// kept.
Judgement judgeAsDrawn(const RunRecord& record) {
  const expectation::Derivation derived = expectation::derivation(record.scenario);
  const expectation::Draw* draw = derived.notDerived.empty()
                                      ? expectation::drawOfRun(derived.draws, firedFaults(record))
                                      : nullptr;
  if (draw == nullptr) {
    std::string fired;
    for (const auto& pair : firedFaults(record)) {
      fired += (fired.empty() ? "" : ", ") + expectation::pairText(record.scenario, pair);
    }
    Judgement judgement;
    judgement.passed = false;
    judgement.failures.push_back(
        {"harness",
         "outcome as-drawn, but " +
             (derived.notDerived.empty()
                  ? "the faults that fired (" + (fired.empty() ? "none" : fired) +
                        ") are no draw the oracle derives"
                  : "the oracle derives nothing: " + derived.notDerived),
         {},
         "",
         "harness"});
    return judgement;
  }
  RunRecord drawn = record;
  model::Expectation& expect = drawn.scenario.expect;
  const model::Expectation& of = draw->expect;
  expect.outcome = of.outcome;
  expect.messages = of.messages;
  expect.others.reset();
  expect.reported = of.reported;
  Judgement judgement =
      judge(drawn, checkers::checkRun(drawn),
            productionCore(drawn) ? fileDifferences(drawn.scenario) : FileDifferences{});
  const std::string how = expectation::drawText(record.scenario, *draw);
  judgement.drawn = toString(of.outcome) + (how.empty() ? "" : " (" + how + ")");
  judgement.drawnOutcome = of.outcome;
  return judgement;
}

}  // namespace

Judgement judgeRun(const RunRecord& record) {
  if (record.scenario.expect.asDrawn) return judgeAsDrawn(record);
  return judge(record, checkers::checkRun(record),
               productionCore(record) ? fileDifferences(record.scenario) : FileDifferences{});
}

namespace {

// What the harness released after the checks, because the core left it held, must release: a
// failure means the harness counted as held what the rank no longer held (a buffer the core freed,
// kept on the list) and freed it again, which no checker sees.
void judgeOwnReleases(const RunRecord& record, Judgement& judgement) {
  for (const RankResult& rank : record.ranks) {
    for (const std::string& line : rank.harnessReleases) {
      if (line.rfind("could not ", 0) != 0 ||
          line.find(model::kReleasedAfterTheChecks) == std::string::npos) {
        continue;
      }
      judgement.failures.push_back(
          {"harness",
           "rank " + std::to_string(rank.rank) +
               ": the harness's release of what the core left failed (its count of what the "
               "rank holds was wrong): " +
               line,
           {},
           reproduceCommand(record),
           "harness"});
    }
  }
}

}  // namespace

Judgement judge(const RunRecord& record, std::vector<Verdict> verdicts,
                const FileDifferences& file) {
  Judgement judgement;
  for (const Verdict& verdict : verdicts) {
    const ExpectedFinding* named = verdict.expectedViolation || verdict.mayFail
                                       ? expectedFinding(record.scenario, verdict.property)
                                       : nullptr;
    if (verdict.acceptable() && verdict.failed() && named != nullptr &&
        !reports(verdict, named->text)) {
      // The control's property failed, but not for the reason the control names: a regression
      // that changed why it fails must not pass as the control. (A property that may fail is
      // held to its finding too when it does.)
      judgement.failures.push_back(
          {toString(verdict.property),
           std::string(named->may ? "may fail only with" : "expected to fail with") +
               " the finding \"" + named->text + "\" (negative control, " +
               where(record.scenario, named->mark) +
               "), but it failed otherwise: " + verdict.summary,
           verdict.findings, verdict.reproduce, "named-finding"});
      continue;
    }
    if (verdict.acceptable()) {
      if (verdict.expectedViolation || (verdict.mayFail && verdict.failed())) {
        judgement.controls.push_back(shortName(verdict.property));
      }
      continue;
    }
    Failure failure;
    failure.title = toString(verdict.property);
    failure.summary =
        verdict.expectedViolation
            ? "expected to fail (negative control), but " +
                  std::string(verdict.status == Verdict::Status::kPass ? "it passed"
                                                                       : "it did not apply") +
                  (verdict.summary.empty() ? "" : ": " + verdict.summary)
            : verdict.summary;
    failure.findings = verdict.findings;
    failure.reproduce = verdict.reproduce;
    failure.rule = verdict.expectedViolation ? "control" : shortName(verdict.property);
    if (!verdict.expectedViolation) wordAsTheFiles(record, file, failure, verdict.property);
    judgement.failures.push_back(std::move(failure));
  }
  judgeNamedControls(record, verdicts, judgement);
  judgeEffects(record, judgement);
  if (record.requireCoverage) judgeCoverage(record, file, judgement);
  judgeCounts(record, judgement);
  judgeAims(record, judgement);
  for (const std::string& error : record.harnessErrors) {
    judgement.failures.push_back({"harness", error, {}, reproduceCommand(record), "harness"});
  }
  judgeOwnReleases(record, judgement);
  judgeTheJudge(record, judgement);
  judgement.passed = judgement.failures.empty();
  judgement.verdicts = std::move(verdicts);
  return judgement;
}

std::set<std::pair<std::size_t, int>> firedFaults(const RunRecord& record) {
  std::set<std::pair<std::size_t, int>> fired;
  for (const RankResult& rank : record.ranks) {
    for (const Event& event : rank.events) {
      if (event.kind == EventKind::kFault && event.fault >= 0) {
        fired.emplace(static_cast<std::size_t>(event.fault), rank.rank);
      }
    }
  }
  return fired;
}

std::vector<FaultWithoutEffect> faultsWithoutEffect(const RunRecord& record) {
  std::vector<FaultWithoutEffect> out;
  const std::vector<Fault>& faults = record.scenario.faults;
  for (const RankResult& rank : record.ranks) {
    std::map<int, std::size_t> awaiting;  // peer -> the handle fault its next open must show
    for (const Event& event : rank.events) {
      if (event.kind == EventKind::kFault && event.fault >= 0 &&
          static_cast<std::size_t>(event.fault) < faults.size() && event.peer >= 0) {
        const FaultSite site = faults[static_cast<std::size_t>(event.fault)].site;
        if (model::isHandleFault(site)) {
          awaiting[event.peer] = static_cast<std::size_t>(event.fault);
        }
        continue;
      }
      if (event.what != "openMemHandle" ||
          (event.kind != EventKind::kReturn && event.kind != EventKind::kThrow)) {
        continue;
      }
      const auto it = awaiting.find(event.peer);
      if (it == awaiting.end()) continue;
      const std::size_t index = it->second;
      awaiting.erase(it);
      const bool opened = event.kind == EventKind::kReturn;
      switch (faults[index].site) {
        case FaultSite::kHandleStale:
          if (opened) out.push_back({index, rank.rank, "the runtime opened the stale handle"});
          break;
        case FaultSite::kHandleCorrupt:
          if (opened) out.push_back({index, rank.rank, "the runtime opened the corrupted handle"});
          break;
        case FaultSite::kHandleAliased:
          if (!opened) {
            out.push_back({index, rank.rank,
                           "the runtime refused the aliased handle (" + event.detail + ")"});
          }
          break;
        case FaultSite::kHandleMapped:
          if (!opened) {
            out.push_back({index, rank.rank,
                           "the runtime refused to open again a handle the rank maps (" +
                               event.detail + ")"});
          }
          break;
        default:
          break;
      }
    }
  }
  return out;
}

std::vector<CoverageMiss> coverageMisses(const RunRecord& record) {
  std::vector<CoverageMiss> misses;
  const auto fired = firedFaults(record);
  const std::vector<Fault>& faults = record.scenario.faults;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (faults[i].probability < 1.0) continue;  // counted over runs, not required (suite.cc)
    for (int rank : faults[i].ranks) {
      const bool lost = std::any_of(record.ranks.begin(), record.ranks.end(), [&](const auto& r) {
        return r.rank == rank && r.status == RankStatus::kMissing;
      });
      if (lost) continue;  // nothing came back from it: C8 and the harness already say so
      if (fired.count({i, rank}) != 0) continue;
      // A pair of a set of peers (`peers:`): the set fired on the rank where any pair did.
      bool setFired = false;
      for (std::size_t j = 0; j < faults.size() && faults[i].set >= 0; ++j) {
        setFired = setFired || (faults[j].set == faults[i].set && fired.count({j, rank}) != 0);
      }
      if (!setFired) misses.push_back({i, rank});
    }
  }
  return misses;
}

std::vector<FaultExcess> countExcesses(const RunRecord& record) {
  std::map<std::pair<std::size_t, int>, int> fired;
  for (const RankResult& rank : record.ranks) {
    for (const Event& event : rank.events) {
      if (event.kind == EventKind::kFault && event.fault >= 0) {
        ++fired[{static_cast<std::size_t>(event.fault), rank.rank}];
      }
    }
  }
  std::vector<FaultExcess> excesses;
  const std::vector<Fault>& faults = record.scenario.faults;
  for (const auto& [key, times] : fired) {
    const auto& [index, rank] = key;
    if (index < faults.size() && faults[index].count > 0 && times > faults[index].count) {
      excesses.push_back({index, rank, times});
    }
  }
  return excesses;
}

std::string rankWord(int ranks) {
  return std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
}

std::string formatDuration(std::int64_t ns) { return formatNs(ns); }

std::string story(const RunRecord& record, const Judgement& judgement, const std::string& indent) {
  std::ostringstream out;
  if (!record.ranks.empty()) {
    out << indent << "ranks:";
    for (const RankResult& rank : record.ranks) {
      out << ' ' << rank.rank << '=' << toString(rank.status);
      if (rank.status == RankStatus::kRaised && !rank.errorType.empty()) {
        out << '(' << rank.errorType
            << (rank.errorType == "HandshakeError" ? (rank.thisRank ? ", this" : ", another") : "")
            << ')';
      }
    }
    out << '\n';
  }
  for (const Failure& failure : judgement.failures) {
    out << indent << failure.title << ": " << failure.summary << '\n';
    for (const Finding& finding : failure.findings) {
      out << indent << "  ";
      if (finding.rank >= 0) out << "rank " << finding.rank << ": ";
      out << finding.text << '\n';
    }
    if (!failure.reproduce.empty()) out << indent << "  reproduce: " << failure.reproduce << '\n';
  }
  return out.str();
}

}  // namespace peerconf::harness::judge
