// Registration of the data plane's checkers.
#include "dataplane/register.h"

#include <mutex>

#include "checkers.h"
#include "dataplane/liveness.h"
#include "no_overwrite.h"
#include "no_stale.h"

namespace peerconf::harness::dataplane {

void registerCheckers() {
  static std::once_flag once;
  std::call_once(once, [] {
    checkers::registerChecker({Property::kC6NoOverwrite, checkers::checkNoOverwrite});
    checkers::registerChecker({Property::kC7NoStale, checkers::checkNoStale});
    checkers::registerChecker({Property::kC8Bounded, checkBoundedWithDataPlane});
  });
}

}  // namespace peerconf::harness::dataplane
