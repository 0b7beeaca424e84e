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

namespace {

// Any program that links the data plane's rank-runner entry (the harness) has the checkers from
// the start, before its first data plane runs: world rank 0 of an MPI suite may judge a
// data-plane scenario it took no part in. (registerChecker's registry is a function-local static,
// so this is safe during static initialization.)
[[maybe_unused]] const bool registeredAtStartUp = (registerCheckers(), true);

}  // namespace

}  // namespace peerconf::harness::dataplane
