// Verdict text for the data-plane checkers.
#include "checkers/verdict_text.h"

namespace peerconf::harness::checkers {

using model::Verdict;

void fillVerdict(const Analysis& analysis, const std::string& problem, const std::string& events,
                 Verdict& verdict) {
  if (!analysis.asked) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "no data plane in this scenario";
    return;
  }
  // A data plane asked for and not run (on some rank) is a failure, never a pass unseen.
  if (!analysis.notRun.empty()) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = "a data plane was asked for but " + std::to_string(analysis.notRun.size()) +
                      " rank(s) did not run it";
    for (const Problem& p : analysis.notRun) {
      if (verdict.findings.size() < kMaxVerdictFindings)
        verdict.findings.push_back({p.rank, p.text});
    }
    if (!analysis.ran) return;
  }
  const bool notRun = !analysis.notRun.empty();
  const std::string checked = std::to_string(analysis.pairsChecked) + " pairs checked in-band, " +
                              std::to_string(analysis.eventsReplayed) + " " + events +
                              " replayed from the history of " +
                              std::to_string(analysis.historySteps) + " steps";
  for (const std::string& note : analysis.notes) verdict.findings.push_back({-1, note});
  if (analysis.inBand == 0 && analysis.replayed == 0) {
    verdict.summary += (notRun ? "; on the others no " : "no ") + problem + ": " + checked;
    return;
  }
  verdict.status = Verdict::Status::kFail;
  verdict.summary += std::string(notRun ? "; " : "") + std::to_string(analysis.inBand) + " " +
                     problem + "(s) seen in-band, " + std::to_string(analysis.replayed) +
                     " found by the history replay (" + checked + ")";
  // Half the findings for each source, so that neither hides the other.
  for (const bool inBand : {true, false}) {
    std::size_t shown = 0;
    std::size_t total = 0;
    for (const Problem& p : analysis.problems) {
      if (p.inBand != inBand) continue;
      ++total;
      if (shown == kMaxVerdictFindings / 2) continue;
      verdict.findings.push_back({p.rank, (inBand ? "in-band: " : "history: ") + p.text});
      ++shown;
    }
    if (total > shown) {
      verdict.findings.push_back({-1, "... and " + std::to_string(total - shown) + " more " +
                                          (inBand ? "seen in-band" : "from the history")});
    }
  }
}

}  // namespace peerconf::harness::checkers
