// CoreRegistry: the cores a scenario can name with `core:` — the production PeerBuffer and the
// planted-defect copies of tests/planted/ (registered by the `peerconf` executable), so that the
// suite proves its own checkers: a control scenario runs a planted core and expects its finding.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/core_under_test.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

class CoreRegistry {
 public:
  // The production core, under the name "production".
  CoreRegistry();

  // Adds (or replaces) the core `name`; `what` is one line for the listing. `runner`, when set,
  // replaces the rank runner's decision to construct (a planted runner in front of the core);
  // `runtime`, when set, wraps the rank's real backend (a planted runtime under the harness).
  void add(const std::string& name, std::string what, model::CoreFactory factory,
           model::RunnerDecision runner = {}, model::RuntimeDecorator runtime = {});

  // The factory of `name`, or nullptr when no core has that name.
  const model::CoreFactory* find(const std::string& name) const;
  // The planted runner registered with `name`, or an unset one (the seed's runner).
  model::RunnerDecision runner(const std::string& name) const;
  // The planted runtime registered with `name`, or an unset one (the real backend).
  model::RuntimeDecorator runtime(const std::string& name) const;
  // Every name, sorted.
  std::vector<std::string> names() const;
  // "name: what" per core, one a line, sorted.
  std::string listing() const;

  // Throws ScenarioError at `scenario.coreMark` when `scenario.core` names no core here (the
  // message lists every name). A scenario without `core:` always passes.
  void check(const model::Scenario& scenario) const;

 private:
  struct Entry {
    std::string what;
    model::CoreFactory factory;
    model::RunnerDecision runner;
    model::RuntimeDecorator runtime;
  };
  std::map<std::string, Entry> cores_;
};

// The factory a launcher builds `scenario`'s ranks with: the registry's `core:` when the scenario
// names one, else `fallback` (LaunchOptions::core). Throws std::invalid_argument for a name the
// registry (or a missing registry) does not know.
model::CoreFactory coreFor(const model::Scenario& scenario, const CoreRegistry* registry,
                           const model::CoreFactory& fallback);

// The rank runner's decision for `scenario`: the planted runner its `core:` names, else unset.
model::RunnerDecision runnerFor(const model::Scenario& scenario, const CoreRegistry* registry);

// The planted runtime of `scenario`'s `core:`, else unset (the real backend).
model::RuntimeDecorator runtimeFor(const model::Scenario& scenario, const CoreRegistry* registry);

}  // namespace peerconf::harness::launch
