// Scenario: the names of its values and the error a file that does not validate raises (reading
// files is scenario/load.cc's).
#include "model/scenario.h"

#include <algorithm>
#include <sstream>

namespace peerconf::harness::model {

namespace {

std::string located(const std::string& file, Mark mark, const std::string& message) {
  if (mark.line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) + ": " +
         message;
}

}  // namespace

ScenarioError::ScenarioError(std::string file, Mark mark, const std::string& message)
    : std::runtime_error(located(file, mark, message)),
      file_(std::move(file)),
      mark_(mark),
      message_(message) {}

faults::FaultPlan faultPlan(const Scenario& scenario) {
  return faults::FaultPlan(scenario.faults, scenario.seed);
}

faults::FaultPlan faultPlan(const Scenario& scenario, std::uint64_t seed) {
  return faults::FaultPlan(scenario.faults, seed);
}

std::string toString(FaultSite site) { return std::string(faults::siteName(site)); }

std::string toString(Point point) { return std::string(faults::pointName(point)); }

std::string toString(Outcome outcome) { return kOutcomeNames.name(outcome); }

std::string toString(MessageKind kind) { return kMessageKindNames.name(kind); }

std::string toString(const MessageExpectation& message) {
  if (message.kind != MessageKind::kText) return toString(message.kind);
  return "text \"" + message.text + "\"";
}

std::string hipErrorName(int code) { return faults::hipErrorName(code); }

std::chrono::milliseconds plannedBound(const Scenario& scenario) {
  if (scenario.expect.within) return *scenario.expect.within;
  std::chrono::milliseconds bound = kGroupCallsPerRun * scenario.deadline + kBoundSlack;
  for (const Fault& fault : scenario.faults) {
    if (fault.site == FaultSite::kDelay) bound += fault.delay;
  }
  return bound;
}

}  // namespace peerconf::harness::model
