// The planted cores by name, for `core:` in scenario files (scenarios/README.md, "Planted
// cores"): the `peerconf` executable adds them to its registry, so the suite's control scenarios
// run them and prove that each checker still catches its defect.
#pragma once

#include "launch/core_registry.h"

namespace peerconf::planted {

// Adds every planted core of this folder to `registry` (the table in registry.cc).
void addPlantedCores(harness::launch::CoreRegistry& registry);

// A registry of the production core and every planted core (what `peerconf` runs with).
harness::launch::CoreRegistry plantedRegistry();

}  // namespace peerconf::planted
