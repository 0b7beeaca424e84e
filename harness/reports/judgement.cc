// Judging a scenario from its verdicts, and telling the story of a failure rank by rank.
#include "judgement.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace peerconf::harness::reports {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The property named by a scenario's `violations` entry ("C6", "c6", "C6 no ..."), if any.
bool names(const std::string& entry, Property property) {
  const std::string e = lower(entry);
  const std::string id = lower(shortName(property));
  if (e == id || e == lower(toString(property))) return true;
  return e.size() > id.size() && e.compare(0, id.size(), id) == 0 &&
         !std::isdigit(static_cast<unsigned char>(e[id.size()]));
}

constexpr Property kAll[] = {
    Property::kC1Uniform,   Property::kC2Message,     Property::kC3Cleanup, Property::kC4Addresses,
    Property::kC5Agreement, Property::kC6NoOverwrite, Property::kC7NoStale, Property::kC8Bounded};

}  // namespace

Judgement judge(const RunRecord& record, const std::vector<Verdict>& verdicts) {
  Judgement judgement;
  for (const Verdict& verdict : verdicts) {
    if (verdict.acceptable()) {
      if (verdict.expectedViolation) judgement.controls.push_back(shortName(verdict.property));
      continue;
    }
    Failure failure;
    failure.title = toString(verdict.property);
    failure.summary =
        verdict.expectedViolation
            ? "expected to fail (negative control), but " +
                  std::string(verdict.status == Verdict::Status::kPass ? "it passed"
                                                                       : "it did not apply") +
                  (verdict.summary.empty() ? "" : ": " + verdict.summary)
            : verdict.summary;
    failure.findings = verdict.findings;
    failure.reproduce = verdict.reproduce;
    judgement.failures.push_back(std::move(failure));
  }
  for (const std::string& entry : record.scenario.expect.violations) {
    bool known = false;
    for (Property property : kAll) {
      if (!names(entry, property)) continue;
      known = true;
      const bool ran = std::any_of(verdicts.begin(), verdicts.end(),
                                   [&](const Verdict& v) { return v.property == property; });
      if (!ran) {
        judgement.failures.push_back({toString(property),
                                      "expected to fail (negative control), but no checker ran it",
                                      {},
                                      reproduceCommand(record)});
      }
    }
    if (!known) {
      judgement.failures.push_back({"scenario",
                                    "expects an unknown property to fail: " + entry,
                                    {},
                                    reproduceCommand(record)});
    }
  }
  for (const std::string& error : record.harnessErrors) {
    judgement.failures.push_back({"harness", error, {}, reproduceCommand(record)});
  }
  judgement.passed = judgement.failures.empty();
  return judgement;
}

std::string rankWord(int ranks) {
  return std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
}

std::string formatDuration(std::int64_t ns) {
  char text[64];
  const double ms = static_cast<double>(ns) / 1e6;
  if (ms >= 10000.0) {
    std::snprintf(text, sizeof text, "%.2f s", ms / 1000.0);
  } else if (ms >= 10.0) {
    std::snprintf(text, sizeof text, "%.0f ms", ms);
  } else {
    std::snprintf(text, sizeof text, "%.1f ms", ms);
  }
  return text;
}

std::string story(const RunRecord& record, const Judgement& judgement, const std::string& indent) {
  std::ostringstream out;
  if (!record.ranks.empty()) {
    out << indent << "ranks:";
    for (const RankResult& rank : record.ranks) {
      out << ' ' << rank.rank << '=' << toString(rank.status);
      if (rank.status == RankStatus::kRaised && !rank.errorType.empty()) {
        out << '(' << rank.errorType
            << (rank.errorType == "HandshakeError" ? (rank.thisRank ? ", this" : ", another") : "")
            << ')';
      }
    }
    out << '\n';
  }
  for (const Failure& failure : judgement.failures) {
    out << indent << failure.title << ": " << failure.summary << '\n';
    for (const Finding& finding : failure.findings) {
      out << indent << "  ";
      if (finding.rank >= 0) out << "rank " << finding.rank << ": ";
      out << finding.text << '\n';
    }
    if (!failure.reproduce.empty()) out << indent << "  reproduce: " << failure.reproduce << '\n';
  }
  return out.str();
}

}  // namespace peerconf::harness::reports
