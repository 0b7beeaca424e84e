// Shared checker helpers.
#include "checkers/support.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "model/buffers.h"
#include "model/fault_sites.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::Expectation;
using model::Fault;
using model::FaultSite;
using model::hipErrorName;
using model::namesProperty;
using model::Outcome;
using model::Point;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::reproduceCommand;
using model::RunRecord;
using model::Scenario;
using model::toString;
using model::Verdict;

Verdict startVerdict(Property property, const RunRecord& record) {
  Verdict verdict;
  verdict.property = property;
  verdict.status = Verdict::Status::kPass;
  verdict.reproduce = reproduceCommand(record);
  verdict.expectedViolation = expectsViolation(record.scenario, property);
  verdict.mayFail = mayViolate(record.scenario, property);
  return verdict;
}

// Whether the control's finding of `property` is one that may appear (`appear: may`).
bool mayFinding(const Scenario& scenario, Property property) {
  return std::any_of(scenario.expect.findings.begin(), scenario.expect.findings.end(),
                     [&](const model::ExpectedFinding& f) {
                       return f.may && namesProperty(f.property, property);
                     });
}

bool expectsViolation(const Scenario& scenario, Property property) {
  return std::any_of(scenario.expect.violations.begin(), scenario.expect.violations.end(),
                     [&](const std::string& named) { return namesProperty(named, property); }) &&
         !mayFinding(scenario, property);
}

bool mayViolate(const Scenario& scenario, Property property) {
  return mayFinding(scenario, property);
}

int rankCount(const RunRecord& record) {
  int count = record.scenario.ranks;
  for (const RankResult& result : record.ranks) count = std::max(count, result.rank + 1);
  return count;
}

const RankResult* findRank(const RunRecord& record, int rank) {
  // Ranks are stored in rank order; check that slot first, then search.
  if (rank >= 0 && static_cast<std::size_t>(rank) < record.ranks.size() &&
      record.ranks[static_cast<std::size_t>(rank)].rank == rank) {
    return &record.ranks[static_cast<std::size_t>(rank)];
  }
  for (const RankResult& result : record.ranks) {
    if (result.rank == rank) return &result;
  }
  return nullptr;
}

bool expectedReported(const Scenario& scenario, int rank) {
  const auto& reported = scenario.expect.reported;
  return std::find(reported.begin(), reported.end(), rank) != reported.end();
}

bool expectedOk(const Scenario& scenario, int rank) {
  const Expectation& expect = scenario.expect;
  if (expect.outcome != Outcome::kRaise) return false;
  if (auto it = expect.messages.find(rank); it != expect.messages.end()) {
    return it->second.kind == model::MessageKind::kOk;
  }
  return expect.others && expect.others->kind == model::MessageKind::kOk;
}

int constructionsBegun(const model::RankResult& result) {
  return static_cast<int>(
      std::count_if(result.events.begin(), result.events.end(), [](const model::Event& e) {
        return e.what == "construct" && e.kind == model::EventKind::kPhaseBegin;
      }));
}

RankStatus expectedSurvivorStatus(const Scenario& scenario) {
  const Expectation& expect = scenario.expect;
  if (expect.outcome == Outcome::kSuccess) return RankStatus::kOk;
  if (expect.outcome == Outcome::kRaise) return RankStatus::kRaised;
  // Stopped in the data plane: the survivors' handshake returned; their data plane reports it.
  if (model::stopsOnlyInDataPlane(scenario)) return RankStatus::kOk;
  bool stops = false;
  for (const Fault& fault : scenario.faults) {
    if (!model::stopsRank(fault.site)) continue;
    stops = true;
    if (fault.at != Point::kClose) return RankStatus::kRaised;
  }
  if (!stops || expect.others) return RankStatus::kRaised;
  for (const auto& [rank, message] : expect.messages) {
    if (!expectedReported(scenario, rank)) return RankStatus::kRaised;
  }
  return RankStatus::kOk;
}

bool faultPlanted(const Scenario& scenario, FaultSite site, int rank, std::optional<int> peer) {
  for (const Fault& fault : scenario.faults) {
    if (fault.site != site) continue;
    if (!fault.appliesTo(rank)) continue;
    if (peer && fault.peer && *fault.peer != *peer) continue;
    return true;
  }
  return false;
}

std::string describeResult(const RankResult& result) {
  std::string text = toString(result.status);
  if (result.status == RankStatus::kRaised) {
    text +=
        " " + (result.errorType.empty() ? std::string("(unknown error type)") : result.errorType);
    if (!result.message.empty()) text += ": " + result.message;
  }
  return text;
}

std::optional<std::uint64_t> parsePtr(std::string_view detail) {
  const std::size_t at = detail.find("ptr=");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view digits = detail.substr(at + 4);
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (ec != std::errc() || end == digits.data()) return std::nullopt;
  return value;
}

namespace {

// The harness's own phases (rank_runner); the core's inner ones (exchange, open...) nest inside.
bool topLevelPhase(std::string_view what) {
  return what == "ready" || what == "construct" || what == "check" || what == "close" ||
         what == "destroy";
}

// The scenario fault a kFault event names: "[fault #N" in its detail (the fault plan writes it),
// else the first fault of the site that names `rank` and `peer`.
const Fault* faultOfEvent(const Scenario& scenario, int rank, const Event& event) {
  const std::size_t at = event.detail.find("[fault #");
  if (at != std::string::npos) {
    const char* begin = event.detail.data() + at + 8;
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(begin, event.detail.data() + event.detail.size(), index);
    if (ec == std::errc() && end != begin && index < scenario.faults.size() &&
        toString(scenario.faults[index].site) == event.what) {
      return &scenario.faults[index];
    }
  }
  for (const Fault& fault : scenario.faults) {
    if (toString(fault.site) != event.what) continue;
    if (!fault.appliesTo(rank)) continue;
    if (fault.peer && event.peer >= 0 && *fault.peer != event.peer) continue;
    return &fault;
  }
  return nullptr;
}

}  // namespace

std::vector<FiredFault> firedFaults(const Scenario& scenario, const RankResult& result) {
  std::vector<FiredFault> fired;
  std::string phase;
  for (std::size_t i = 0; i < result.events.size(); ++i) {
    const Event& event = result.events[i];
    if (event.kind == EventKind::kPhaseBegin && topLevelPhase(event.what)) phase = event.what;
    if (event.kind == EventKind::kPhaseEnd && topLevelPhase(event.what)) phase.clear();
    if (event.kind != EventKind::kFault) continue;
    FiredFault f;
    f.site = event.what;
    f.peer = event.peer;
    f.event = i;
    f.phase = phase;
    f.detail = event.detail;
    if (!faultOp(f.site).empty()) {
      const Fault* fault = faultOfEvent(scenario, result.rank, event);
      // An error site's code as the parser defaults it; entry-corrupt has none (0: any code).
      if (fault != nullptr) f.error = model::effectiveError(*fault);
    }
    fired.push_back(std::move(f));
  }
  return fired;
}

std::string faultOp(std::string_view site) {
  if (site == "alloc" || site == "alloc-table") return "alloc";
  if (site == "get-handle") return "get-handle";
  if (site == "open") return "open";
  if (site == "close") return "close-handle";
  if (site == "free") return "free";
  if (site == "copy-table") return "copy";
  // The decoder refuses the damaged entry with a GroupError of the exchange naming that peer.
  if (site == "entry-corrupt") return "all-gather";
  // The decoder refuses an exchange of the wrong length with a GroupError of the exchange (no
  // peer).
  if (site == "exchange-long") return "all-gather";
  return {};
}

std::string codeText(int code) { return hipErrorName(code) + " (" + std::to_string(code) + ")"; }

std::size_t phaseBegin(const std::vector<Event>& events, std::string_view phase) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == EventKind::kPhaseBegin && events[i].what == phase) return i;
  }
  return events.size();
}

std::size_t dataPlaneBuffers(const model::Scenario& scenario) {
  return model::dataPlanesRun(scenario);
}

model::RunRecord dataPlaneView(const model::RunRecord& record, std::size_t buffer) {
  model::RunRecord view = record;
  view.scenario = model::dataPlaneScenarioOf(record.scenario, buffer);
  for (model::RankResult& rank : view.ranks) {
    const model::Result* one = model::dataPlaneOfBuffer(rank, buffer);
    std::optional<model::Result> mine;
    if (one != nullptr) mine = *one;
    rank.dataPlane = std::move(mine);
    rank.laterDataPlanes.clear();
  }
  return view;
}

std::string bufferPrefix(const model::Scenario& scenario, std::size_t buffer) {
  return model::dataPlanePerBuffer(scenario) ? "buffer " + std::to_string(buffer) + ": " : "";
}

}  // namespace peerconf::harness::checkers
