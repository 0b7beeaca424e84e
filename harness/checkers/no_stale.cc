// C7 over the data plane's in-band findings and history replay.
#include "checkers/no_stale.h"

#include "checkers/history.h"
#include "checkers/support.h"
#include "checkers/verdict_text.h"

namespace peerconf::harness::checkers {

using model::Property;
using model::RunRecord;
using model::Verdict;

Verdict checkNoStale(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC7NoStale, record);
  const checkers::Analysis analysis = checkers::analyzeStale(record);
  checkers::fillVerdict(analysis, "stale acceptance", "reads", verdict);
  return verdict;
}

}  // namespace peerconf::harness::checkers
