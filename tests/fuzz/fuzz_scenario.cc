// libFuzzer target: the scenario parser and validator on arbitrary text. Contract: it returns a
// Scenario or throws ScenarioError ("fuzz.yaml:LINE:COL: message"); any other exception, a crash,
// a sanitizer report or a hang (libFuzzer -timeout) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "model/scenario.h"
#include "scenario/load.h"

namespace {

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_scenario: %s: %s\n", what, detail.c_str());
  std::abort();
}

// What every parsed scenario must satisfy whatever the text said.
void checkParsed(const peerconf::harness::model::Scenario& s) {
  using peerconf::harness::model::FaultSite;
  if (s.ranks < 1) bug("accepted a scenario without ranks", std::to_string(s.ranks));
  if (s.deadline.count() <= 0) bug("accepted a non-positive deadline", s.name);
  for (const auto& fault : s.faults) {
    if (fault.ranks.empty()) bug("accepted a fault without ranks", s.name);
    for (int rank : fault.ranks) {
      if (rank < 0 || rank >= s.ranks) bug("accepted a fault rank out of range", s.name);
    }
    if (fault.peer && (*fault.peer < 0 || *fault.peer >= s.ranks)) {
      bug("accepted a peer out of range", s.name);
    }
    if (fault.probability <= 0.0 || fault.probability > 1.0) {
      bug("accepted a probability outside (0, 1]", s.name);
    }
  }
  for (int rank : s.expect.reported) {
    if (rank < 0 || rank >= s.ranks) bug("accepted a reported rank out of range", s.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    checkParsed(peerconf::harness::scenario::parseScenario(text, "fuzz.yaml"));
  } catch (const peerconf::harness::model::ScenarioError& e) {
    if (std::string(e.what()).rfind("fuzz.yaml", 0) != 0) {
      bug("ScenarioError does not start with the file name", e.what());
    }
  } catch (const std::exception& e) {
    bug((std::string("threw ") + typeid(e).name() + " instead of ScenarioError").c_str(), e.what());
  } catch (...) {
    bug("threw something that is not a std::exception", "");
  }
  return 0;
}
