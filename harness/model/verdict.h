// Verdict: the typed result of one checker on one run, with a reproduce command.
#pragma once

#include <string>
#include <vector>

#include "model/run_record.h"

namespace peerconf::harness {

enum class Property {
  kC1Uniform,      // every rank returned, or every rank raised (as expected)
  kC2Message,      // "this" on the failing rank with its cause, "another" elsewhere
  kC3Cleanup,      // every mapping closed once, every buffer freed once, close() idempotent
  kC4Addresses,    // own slot = local pointer; patterns written through peers land in them
  kC5Agreement,    // tpAgree is true iff every rank passed true
  kC6NoOverwrite,  // data plane: no write lands on an unconsumed slot
  kC7NoStale,      // data plane: no stale pair accepted
  kC8Bounded,      // the run ended within its bound; dead/hung ranks reported
};

std::string toString(Property property);   // "C1 uniform outcome", ...
std::string shortName(Property property);  // "C1"

struct Finding {
  int rank = -1;  // -1: not about one rank
  std::string text;
};

struct Verdict {
  Property property = Property::kC1Uniform;
  enum class Status { kPass, kFail, kNotApplicable } status = Status::kPass;
  std::string summary;             // one line
  std::vector<Finding> findings;   // rank by rank
  std::string reproduce;           // `peerconf run FILE --seed S --launcher L`
  bool expectedViolation = false;  // the scenario expects this property to fail (control)

  bool failed() const noexcept { return status == Status::kFail; }
  // A verdict is acceptable when it passed, or it failed and the scenario expected it to.
  bool acceptable() const noexcept {
    return expectedViolation ? status == Status::kFail : status != Status::kFail;
  }
};

}  // namespace peerconf::harness
