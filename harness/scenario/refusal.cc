// Files a rule must refuse: their header, and the comparison of a refusal with it.
#include "scenario/refusal.h"

#include <sstream>

namespace peerconf::harness::scenario {

std::optional<ExpectedRefusal> expectedRefusal(const std::string& text) {
  std::istringstream lines(text);
  std::string header;
  std::getline(lines, header);
  const std::string prefix = "# expect-error: ";
  if (header.rfind(prefix, 0) != 0) return std::nullopt;
  std::istringstream spec(header.substr(prefix.size()));
  ExpectedRefusal expected;
  char colon1 = 0;
  char colon2 = 0;
  spec >> expected.mark.line >> colon1 >> expected.mark.column >> colon2;
  if (!spec || colon1 != ':' || colon2 != ':' || expected.mark.line < 1 ||
      expected.mark.column < 1) {
    return std::nullopt;
  }
  std::getline(spec >> std::ws, expected.fragment);
  if (expected.fragment.empty()) return std::nullopt;
  return expected;
}

std::string refusalProblem(const std::string& path, const ExpectedRefusal& expected,
                           const std::optional<model::ScenarioError>& error) {
  const std::string where =
      path + ":" + std::to_string(expected.mark.line) + ":" + std::to_string(expected.mark.column);
  const std::string want = "must be refused at " + where + " with \"" + expected.fragment + "\"";
  if (!error) return want + ", but it was accepted";
  if (error->file() != path || error->mark().line != expected.mark.line ||
      error->mark().column != expected.mark.column ||
      error->message().find(expected.fragment) == std::string::npos) {
    return want + ", but it was refused otherwise: " + error->what();
  }
  return {};
}

}  // namespace peerconf::harness::scenario
