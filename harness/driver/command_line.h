// peerconf's command line as a library: the `peerconf` command is this with the planted cores
// added, and a team's own executable is this after registering its layouts
// (layout/register.h) or cores, so that its scenario files can name them. Under mpirun and in
// forked children the executable runs itself again, so whatever it registers before calling this
// is there on every rank.
#pragma once

#include <functional>

#include "launch/core_registry.h"

namespace peerconf::harness::driver {

// Parses and runs `peerconf run|validate|explain|explore ...` (each one's --help says what it
// does); returns the exit status (0 all passed, 1 a scenario failed, 2 usage or input error).
// `addCores` adds cores a scenario's `core:` may name beside the production one.
int runCommandLine(int argc, char** argv,
                   const std::function<void(launch::CoreRegistry&)>& addCores = {});

}  // namespace peerconf::harness::driver
