// The checkers stage: every conformance checker run over one RunRecord, in property order.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "checkers/addresses.h"
#include "checkers/agreement.h"
#include "checkers/bounded.h"
#include "checkers/cleanup.h"
#include "checkers/messages.h"
#include "checkers/uniform_outcome.h"
#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

using CheckFn = std::function<model::Verdict(const model::RunRecord&)>;

struct Checker {
  model::Property property = model::Property::kC1Uniform;
  CheckFn check;
};

// Every checker, C1 to C8 in property order, listed explicitly (no registration at start-up: every
// program that judges runs the same checkers).
std::vector<Checker> builtinCheckers();

// Runs every checker of builtinCheckers(). A checker that throws yields a failing verdict saying so
// (a broken checker is never a pass).
std::vector<model::Verdict> checkRun(const model::RunRecord& record);

// Runs `checkers` in the given order (tests, or a caller that picks its own set).
std::vector<model::Verdict> checkRun(const model::RunRecord& record,
                                     const std::vector<Checker>& checkers);

}  // namespace peerconf::harness::checkers
