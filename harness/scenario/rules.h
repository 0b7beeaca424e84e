// Scenario rules: the checks that span several keys (faults against each other, faults against
// the expected outcome) and the defaults of `expect.messages`, run once a file has parsed.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "model/fault_sites.h"
#include "model/scenario.h"

namespace peerconf::harness::scenario {

// Where the keys the rules talk about were written, and whether they were written at all.
struct ExpectMarks {
  model::Mark expect;   // the `expect:` mapping
  model::Mark outcome;  // the value of `outcome`
  bool messagesGiven = false;
  model::Mark messages;                     // the `messages` key
  std::map<int, model::Mark> messageRanks;  // each rank key of `messages`
  bool reportedGiven = false;
  model::Mark reported;  // the value of `reported`
  bool withinGiven = false;
  model::Mark within;    // the value of `within`
  model::Mark deadline;  // the value of `deadline` (0:0 when not written)
  bool maxRunGiven = false;
  model::Mark maxRun;  // the value of `max_run`
};

// Checks the cross-key rules (scenarios/README.md, "Validation rules") and fills the defaults of
// `expect` (`reported`, and a message for every rank that must raise). Throws ScenarioError.
void apply(model::Scenario& scenario, const ExpectMarks& marks);

// Something `peerconf validate` warns about without failing the file.
struct Warning {
  model::Mark mark;
  std::string message;
};

// The faults the timeline makes unreachable on a rank they name (scenarios/README.md,
// "Unreachable faults"): a run never fires them, so a certain one fails the scenario's coverage.
std::vector<Warning> warnings(const model::Scenario& scenario);

// The order in which a rank meets the fault sites and points (README "Timeline"): the trait
// table's (model/fault_sites.h).
using model::timelinePosition;

// How far `rank` gets when `fault` fires: the timeline position where it stops, or
// model::kTimelineNever when the fault does not stop it (or may not fire). The rule the
// validator checks deaths against, and the generators drop unreachable deaths by.
int stopFor(const model::Scenario& scenario, const model::Fault& fault, int rank);

}  // namespace peerconf::harness::scenario
