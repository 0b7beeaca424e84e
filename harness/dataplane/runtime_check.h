// What a runtime cannot run of a scenario's `dataplane:` section, as a validation error: under
// `--runtime gpu`, the limits of the GPU kernels (device_mapping.h, gpuUnsupported). `peerconf
// validate --runtime gpu` and `peerconf run --runtime gpu` report it as FILE:LINE:COL: message
// before anything runs, never as a silent skip.
#pragma once

#include "backend_factory.h"
#include "model/scenario.h"

namespace peerconf::harness::dataplane {

// Throws ScenarioError at the key at fault for the first thing of `scenario`'s data plane that
// `runtime` cannot run. Nothing for the mocked runtime, a scenario without a data plane, or a
// `clock: sim` one (GPU runs are MPI runs on real time, which skip it, saying so).
void checkDataPlaneRuntime(const model::Scenario& scenario, Runtime runtime);

}  // namespace peerconf::harness::dataplane
