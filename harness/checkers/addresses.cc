// C4: reads what the launcher measured on each rank after a successful handshake.
#include "addresses.h"

#include <string>

#include "support.h"

namespace peerconf::harness::checkers {

Verdict checkAddresses(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC4Addresses, record);
  if (record.scenario.expect.outcome != Outcome::kSuccess) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "the scenario expects no buffer: no addresses to check";
    return verdict;
  }
  int checked = 0, wrong = 0;
  for (int rank = 0; rank < rankCount(record); ++rank) {
    const RankResult* result = findRank(record, rank);
    if (result == nullptr || result->status != RankStatus::kOk) continue;
    ++checked;
    bool bad = false;
    if (!result->ownSlotIsLocal) {
      verdict.findings.push_back(
          {rank, "addresses[" + std::to_string(rank) + "] is not this rank's local pointer"});
      bad = true;
    }
    for (const std::string& text : result->addressFindings) {
      verdict.findings.push_back({rank, text});
      bad = true;
    }
    if (bad) ++wrong;
  }
  if (checked == 0) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "no rank returned a buffer (see C1)";
  } else if (wrong > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(wrong) + " of " + std::to_string(checked) +
                      " ranks hold a wrong address table";
  } else {
    verdict.summary =
        "own slot local and every pattern landed on " + std::to_string(checked) + " rank(s)";
  }
  return verdict;
}

}  // namespace peerconf::harness::checkers
