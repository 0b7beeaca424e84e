// mockHipHooks() for a build without the mocked HIP runtime: runtime mode is unavailable.
#include <stdexcept>

#include "faults/runtime_hooks.h"

namespace peerconf::faults {

RuntimeHooks& mockHipHooks() {
  throw std::logic_error(
      "FaultyBackend runtime mode needs the mocked HIP runtime, which this build does not have; "
      "use seam mode");
}

}  // namespace peerconf::faults
