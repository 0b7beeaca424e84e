// Files a validation rule must refuse (`peerconf validate --refused`,
// tests/data/invalid_scenarios/): each opens with "# expect-error: LINE:COL: fragment", the place
// and a fragment of the message its refusal must give, so that a rule made blind (it accepts what
// it must refuse) or moved (it refuses elsewhere or otherwise) is seen by the suite, not only by
// ctest.
#pragma once

#include <optional>
#include <string>

#include "model/scenario.h"

namespace peerconf::harness::scenario {

struct ExpectedRefusal {
  model::Mark mark;      // line and column the refusal must name
  std::string fragment;  // a part of its message
};

// The refusal `text` (a file's contents) announces on its first line, or nullopt when that line
// is not "# expect-error: LINE:COL: fragment".
std::optional<ExpectedRefusal> expectedRefusal(const std::string& text);

// What is wrong with how the file at `path` was refused: `error` is the refusal it got (nullopt:
// the file was accepted), `expected` what its header says. Empty when it was refused as stated:
// at that line and column of that file, with a message containing the fragment.
std::string refusalProblem(const std::string& path, const ExpectedRefusal& expected,
                           const std::optional<model::ScenarioError>& error);

}  // namespace peerconf::harness::scenario
