// C6 over the data plane's in-band findings and history replay.
#include "no_overwrite.h"

#include "dataplane/history.h"
#include "dataplane/verdict_text.h"
#include "support.h"

namespace peerconf::harness::checkers {

Verdict checkNoOverwrite(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC6NoOverwrite, record);
  const dataplane::Analysis analysis = dataplane::analyzeOverwrites(record);
  dataplane::fillVerdict(analysis, "overwrite", "pushes", verdict);
  return verdict;
}

}  // namespace peerconf::harness::checkers
