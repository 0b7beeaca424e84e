// The kernel-abort rows on a runtime without kernels (the mock: the data plane runs on host
// threads, so the host never aborts a kernel and nothing can be left on the device by one).
#include "runtime_table.h"

namespace peerconf::conformance::table {

std::vector<Observation> abortRows() {
  const char* why = "no kernels";
  return {{"host-abort-leftover-alone", why, {}},
          {"host-abort-leftover-shared", why, {}},
          {"host-abort-leftover-again", why, {}}};
}

}  // namespace peerconf::conformance::table
