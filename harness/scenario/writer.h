// Scenario writer: a Scenario back to scenario-file YAML that validates and parses back to the
// same scenario (the exploration writes its shrunk failures this way, as files a reviewer runs).
#pragma once

#include <string>
#include <vector>

#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness::scenario {

struct WriteOptions {
  // Comment lines written at the top of the file, each prefixed with "# ".
  std::vector<std::string> header;
  // Reference the JSON Schema for editors (`# yaml-language-server: $schema=...`); empty: none.
  std::string schema;
};

// The scenario as YAML text. parseScenario(writeScenario(s)) equals `s` (sameScenario), provided
// `s` is valid: the writer states every message explicitly, so the parser's defaults never have
// to guess. Throws std::invalid_argument for a scenario no file can express (a name with spaces,
// an empty `ranks` list in a fault).
std::string writeScenario(const model::Scenario& scenario, const WriteOptions& options = {});

// The `expect:` section alone, exactly as writeScenario writes it ("expect:\n  outcome: raise\n
// ..."): a message equal to `expect.others` is left to it, `reported` and `within` only with
// outcome reported, each violation with its finding. `peerconf explain --write-expect` splices it
// into a file.
std::string writeExpect(const model::Expectation& expect);

// Writes writeScenario(scenario) to `path`, creating its directory; throws std::runtime_error.
void writeScenarioFile(const model::Scenario& scenario, const std::string& path,
                       const WriteOptions& options = {});

// True when `a` and `b` say the same thing: every field but `file` and the marks. When they
// differ and `why` is given, it names the first field that differs.
bool sameScenario(const model::Scenario& a, const model::Scenario& b, std::string* why = nullptr);

// `scenario` through the writer (into `text`) and the validator (into `back`, read as `file`): why
// it is not what its file says ("does not validate: ...", "reads back different: FIELD"), or "".
std::string roundTripProblem(const model::Scenario& scenario, const std::string& file,
                             std::string& text, model::Scenario& back);

}  // namespace peerconf::harness::scenario
