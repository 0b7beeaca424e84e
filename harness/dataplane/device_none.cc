// The data plane on GPUs in a build without GPU kernels: a clear error on every rank.
#include "dataplane/device.h"
#include "dataplane/driver.h"

namespace peerconf::harness::dataplane {

using model::DataplaneOutcome;
using model::Result;
using model::Spec;

bool deviceDataPlaneBuilt() { return false; }

void warmUpDevice() {}

Result runOnDevice(const Spec& spec, int /*rank*/, const std::vector<std::int64_t>& addresses,
                   DeviceBytes /*local*/, IpcBackend& /*backend*/, Group* /*group*/,
                   std::chrono::milliseconds timeout, std::chrono::milliseconds /*hostBound*/) {
  Result result;
  describeRun(spec, static_cast<int>(addresses.size()), timeout, result);
  result.outcome = DataplaneOutcome::kError;
  result.detail =
      "this build has no GPU data-plane kernels (configure with -DPEERCONF_WITH_CUDA=ON, as "
      "ci/nightly-build.sh does): the data plane cannot run under --runtime gpu";
  return result;
}

}  // namespace peerconf::harness::dataplane
