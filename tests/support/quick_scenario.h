// A small scenario built in code (no file): the runs the launch and exploration tests compare.
#pragma once

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::testing {

// `ranks` ranks, a 200 ms deadline, seed 5, `faults`; no expectation.
inline model::Scenario quickScenario(int ranks, std::vector<model::Fault> faults) {
  model::Scenario scenario;
  scenario.name = "quick";
  scenario.ranks = ranks;
  scenario.deadline = std::chrono::milliseconds(200);
  scenario.seed = 5;
  scenario.faults = std::move(faults);
  return scenario;
}

// A certain fault at `site` on `rank` (toward `peer`, at `at`); the error sites fail with 1.
inline model::Fault quickFault(model::FaultSite site, int rank,
                               std::optional<int> peer = std::nullopt,
                               model::Point at = model::Point::kBeforeConstruct) {
  model::Fault f;
  f.site = site;
  f.ranks = {rank};
  f.peer = peer;
  f.at = at;
  if (site == model::FaultSite::kOpen || site == model::FaultSite::kClose ||
      site == model::FaultSite::kFree)
    f.error = 1;
  return f;
}

}  // namespace peerconf::harness::testing
