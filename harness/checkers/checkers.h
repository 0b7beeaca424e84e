// The checkers stage: every conformance checker run over one RunRecord, in property order.
// The data plane's checkers (C6, C7) join through registerChecker without touching the others.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "addresses.h"
#include "agreement.h"
#include "bounded.h"
#include "cleanup.h"
#include "messages.h"
#include "run_record.h"
#include "uniform_outcome.h"
#include "verdict.h"

namespace peerconf::harness::checkers {

using CheckFn = std::function<Verdict(const RunRecord&)>;

struct Checker {
  Property property = Property::kC1Uniform;
  CheckFn check;
};

// The handshake checkers shipped with this module: C1, C2, C3, C4, C5, C8.
std::vector<Checker> builtinCheckers();

// Adds a checker that checkRun(record) runs from now on; one for the same property replaces it
// (a registered one also replaces a built-in). Thread-safe; call it at start-up, e.g. from the
// data plane's `registerCheckers()`.
void registerChecker(Checker checker);

// The built-ins merged with the registered ones, sorted by property.
std::vector<Checker> registeredCheckers();

// Runs every registered checker. A checker that throws yields a failing verdict saying so (a
// broken checker is never a pass).
std::vector<Verdict> checkRun(const RunRecord& record);

// Runs `checkers` in the given order (tests, or a caller that picks its own set).
std::vector<Verdict> checkRun(const RunRecord& record, const std::vector<Checker>& checkers);

}  // namespace peerconf::harness::checkers
