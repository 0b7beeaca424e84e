// Validation of a data plane against the runtime it is to run on.
#include "dataplane/runtime_check.h"

#include "dataplane/device_mapping.h"

namespace peerconf::harness::dataplane {

using model::Mark;
using model::Scenario;
using model::ScenarioError;
using model::Spec;

namespace {

// Throws at the key of `spec` (a data plane of `scenario`) the GPU kernels cannot run.
void checkSpec(const Scenario& scenario, const Spec& spec) {
  if (!gpuSkipReason(spec).empty()) return;  // skipped at load, saying why
  for (const Unsupported& problem : gpuUnsupported(spec, scenario.ranks)) {
    auto at = spec.marks.find(problem.key);
    if (at == spec.marks.end()) at = spec.marks.find("");
    const Mark mark =
        at == spec.marks.end() ? scenario.mark : Mark{at->second.line, at->second.column};
    throw ScenarioError(scenario.file, mark, "under --runtime gpu: " + problem.message);
  }
}

}  // namespace

void checkDataPlaneRuntime(const Scenario& scenario, Runtime runtime) {
  // A `clock: sim` file never runs on GPUs (they run under mpirun, on real time: it is skipped).
  if (runtime != Runtime::kGpu || !scenario.dataPlane || scenario.clock == "sim") return;
  if (!model::dataPlanePerBuffer(scenario)) {
    checkSpec(scenario, *scenario.dataPlane);
    return;
  }
  // Each buffer's data plane: its own `dataplane:` (at its own keys) or the scenario's.
  for (std::size_t buffer = 0; buffer < scenario.buffers.size(); ++buffer) {
    checkSpec(scenario, *model::dataPlaneScenarioOf(scenario, buffer).dataPlane);
  }
}

std::string gpuSkipReason(const Scenario& scenario) {
  if (!scenario.dataPlane) return "";
  if (!model::dataPlanePerBuffer(scenario)) return gpuSkipReason(*scenario.dataPlane);
  for (std::size_t buffer = 0; buffer < scenario.buffers.size(); ++buffer) {
    const std::string why = gpuSkipReason(*model::dataPlaneScenarioOf(scenario, buffer).dataPlane);
    if (!why.empty()) return "buffer " + std::to_string(buffer) + ": " + why;
  }
  return "";
}

std::string gpuSkipReason(const Spec& spec) {
  // Every workload has its GPU kernels (gpu_kernels/layout_kernel.h, KernelWorkload): none is
  // skipped. A workload added without kernels says here why the GPU runs skip it.
  switch (spec.workload) {
    case model::Workload::kExchange:
    case model::Workload::kAllReduce:
    case model::Workload::kTwoInFlight:
    case model::Workload::kTwoInFlightSharedSlots:
    case model::Workload::kGraphReplay:
    case model::Workload::kGraphReplayCapturedEpoch:
      return "";
  }
  return "";
}

}  // namespace peerconf::harness::dataplane
