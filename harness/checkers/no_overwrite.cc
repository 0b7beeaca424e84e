// C6 over the data plane's in-band findings and history replay.
#include "checkers/no_overwrite.h"

#include "checkers/history.h"
#include "checkers/support.h"
#include "checkers/verdict_text.h"

namespace peerconf::harness::checkers {

Verdict checkNoOverwrite(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC6NoOverwrite, record);
  const dataplane::Analysis analysis = dataplane::analyzeOverwrites(record);
  dataplane::fillVerdict(analysis, "overwrite", "pushes", verdict);
  return verdict;
}

}  // namespace peerconf::harness::checkers
