// CoreRegistry: names to core factories, checked where a scenario names one.
#include "launch/core_registry.h"

#include <stdexcept>

namespace peerconf::harness::launch {

using model::CoreFactory;
using model::productionCore;
using model::Scenario;
using model::ScenarioError;

CoreRegistry::CoreRegistry() {
  add("production", "the production PeerBuffer (src/peer_buffer.h)", productionCore());
}

void CoreRegistry::add(const std::string& name, std::string what, CoreFactory factory,
                       model::RunnerDecision runner, model::RuntimeDecorator runtime) {
  cores_[name] = Entry{std::move(what), std::move(factory), std::move(runner), std::move(runtime)};
}

const CoreFactory* CoreRegistry::find(const std::string& name) const {
  auto it = cores_.find(name);
  return it == cores_.end() ? nullptr : &it->second.factory;
}

model::RunnerDecision CoreRegistry::runner(const std::string& name) const {
  auto it = cores_.find(name);
  return it == cores_.end() ? model::RunnerDecision{} : it->second.runner;
}

model::RuntimeDecorator CoreRegistry::runtime(const std::string& name) const {
  auto it = cores_.find(name);
  return it == cores_.end() ? model::RuntimeDecorator{} : it->second.runtime;
}

std::vector<std::string> CoreRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : cores_) out.push_back(name);
  return out;
}

std::string CoreRegistry::listing() const {
  std::string out;
  for (const auto& [name, entry] : cores_) out += name + ": " + entry.what + "\n";
  return out;
}

void CoreRegistry::check(const Scenario& scenario) const {
  if (scenario.core.empty() || find(scenario.core) != nullptr) return;
  std::string known;
  for (const std::string& name : names()) known += (known.empty() ? "" : ", ") + name;
  throw ScenarioError(scenario.file, scenario.coreMark,
                      "unknown core '" + scenario.core + "'; the cores are: " + known);
}

CoreFactory coreFor(const Scenario& scenario, const CoreRegistry* registry,
                    const CoreFactory& fallback) {
  if (scenario.core.empty()) return fallback;
  const CoreFactory* factory = registry != nullptr ? registry->find(scenario.core) : nullptr;
  if (factory == nullptr) {
    throw std::invalid_argument("the scenario names core '" + scenario.core +
                                "', which this launcher does not know");
  }
  return *factory;
}

model::RunnerDecision runnerFor(const Scenario& scenario, const CoreRegistry* registry) {
  if (scenario.core.empty() || registry == nullptr) return {};
  return registry->runner(scenario.core);
}

model::RuntimeDecorator runtimeFor(const Scenario& scenario, const CoreRegistry* registry) {
  if (scenario.core.empty() || registry == nullptr) return {};
  return registry->runtime(scenario.core);
}

}  // namespace peerconf::harness::launch
