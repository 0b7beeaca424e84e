// The list of checkers and the loop that runs them.
#include "checkers/checkers.h"

#include <algorithm>
#include <exception>

#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::Property;
using model::RunRecord;
using model::Verdict;

std::vector<Checker> builtinCheckers() {
  // C8 is judged with the data plane's outcomes (liveness.h): a data plane that hung or never ran
  // fails it as a handshake that hangs does.
  return {
      {Property::kC1Uniform, checkUniformOutcome},
      {Property::kC2Message, checkMessages},
      {Property::kC3Cleanup, checkCleanup},
      {Property::kC4Addresses, checkAddresses},
      {Property::kC5Agreement, checkAgreement},
      {Property::kC6NoOverwrite, checkNoOverwrite},
      {Property::kC7NoStale, checkNoStale},
      {Property::kC8Bounded, checkers::checkBoundedWithDataPlane},
  };
}

std::vector<Verdict> checkRun(const RunRecord& record) {
  return checkRun(record, builtinCheckers());
}

std::vector<Verdict> checkRun(const RunRecord& record, const std::vector<Checker>& checkers) {
  std::vector<Verdict> verdicts;
  verdicts.reserve(checkers.size());
  for (const Checker& checker : checkers) {
    try {
      verdicts.push_back(checker.check(record));
    } catch (const std::exception& e) {
      Verdict broken = startVerdict(checker.property, record);
      broken.status = Verdict::Status::kFail;
      broken.expectedViolation = false;  // a crashed checker never satisfies a control
      broken.mayFail = false;
      broken.summary = std::string("the checker itself threw: ") + e.what();
      verdicts.push_back(std::move(broken));
    }
  }
  return verdicts;
}

}  // namespace peerconf::harness::checkers
