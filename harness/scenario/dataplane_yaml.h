// Parsing a scenario's `dataplane:` section (the scenario parser calls it for that key).
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "model/dataplane_spec.h"

namespace peerconf::harness::scenario {

// Parses and validates the `dataplane:` mapping of a scenario with `ranks` ranks. Unknown keys,
// wrong types and values out of range throw ScenarioError(file, mark, message) with the line and
// column of the node at fault. Keys: layout, workload, steps, depth, payload, start_epoch,
// timeout, window, history, prefill, late (a mapping or a list: rank, role, every|steps, delay),
// stop (rank, step). See scenarios/README.md.
model::Spec parseSpec(const YAML::Node& node, int ranks, const std::string& file);

// "500us", "2ms", "1.5ms", "2s", or a plain number of milliseconds ("30"); nullopt when
// malformed, not positive, or not a whole number of microseconds.
std::optional<std::chrono::microseconds> parseSpecDuration(std::string_view text);

}  // namespace peerconf::harness::scenario
