// What a runtime cannot run of a scenario's `dataplane:` section, as a validation error: under
// `--runtime gpu`, the limits of the GPU kernels (device_mapping.h, gpuUnsupported). `peerconf
// validate --runtime gpu` and `peerconf run --runtime gpu` report it as FILE:LINE:COL: message
// before anything runs, never as a silent skip.
#pragma once

#include <string>

#include "backend_factory.h"
#include "model/scenario.h"

namespace peerconf::harness::dataplane {

// Throws ScenarioError at the key at fault for the first thing of `scenario`'s data plane that
// `runtime` cannot run. Nothing for the mocked runtime, a scenario without a data plane, or a
// `clock: sim` one (GPU runs are MPI runs on real time, which skip it, saying so).
void checkDataPlaneRuntime(const model::Scenario& scenario, Runtime runtime);

// Why `--runtime gpu` skips a scenario with this data plane at load (the GPU kernels do not run
// its workload), or empty: empty for every workload there is (the kernels run them all).
// checkDataPlaneRuntime leaves such a file alone; the suite skips it, saying this.
std::string gpuSkipReason(const model::Spec& spec);
// The same for a scenario: its data plane's, or with a data plane per buffer the first buffer's
// whose data plane the kernels do not run ("buffer 1: workload ..."); empty without a data plane.
std::string gpuSkipReason(const model::Scenario& scenario);

}  // namespace peerconf::harness::dataplane
