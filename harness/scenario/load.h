// Reading scenario files into Scenarios (model/scenario.h): parse, validate, expand paths.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::scenario {

// Parses and validates one scenario file; throws ScenarioError on the first problem.
model::Scenario loadScenario(const std::string& path);
// Parses YAML text (for tests and fuzzing); `file` only labels errors.
model::Scenario parseScenario(const std::string& text, const std::string& file);
// Expands FILES|DIRS into scenario file paths (*.yaml, *.yml; directories recursively, sorted).
// Files are kept as given, in order, without duplicates; hidden entries in directories are
// skipped. Throws ScenarioError (no mark) for a missing path or a directory without scenarios.
std::vector<std::string> expandScenarioPaths(const std::vector<std::string>& paths);
// The same for a command: fills `files`, or writes the error to `err` and returns false (the
// command then exits 2).
bool expandScenarioPaths(const std::vector<std::string>& paths, std::vector<std::string>& files,
                         std::ostream& err);

}  // namespace peerconf::harness::scenario
