// C6 over the data plane's in-band findings and history replay.
#include "checkers/no_overwrite.h"

#include "checkers/history.h"
#include "checkers/support.h"
#include "checkers/verdict_text.h"

namespace peerconf::harness::checkers {

using model::Property;
using model::RunRecord;
using model::Verdict;

Verdict checkNoOverwrite(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC6NoOverwrite, record);
  const checkers::Analysis analysis = checkers::analyzeOverwrites(record);
  checkers::fillVerdict(analysis, "overwrite", "pushes", verdict);
  return verdict;
}

}  // namespace peerconf::harness::checkers
