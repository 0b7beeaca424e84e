// Shared checker helpers.
#include "support.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace peerconf::harness::checkers {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

Verdict startVerdict(Property property, const RunRecord& record) {
  Verdict verdict;
  verdict.property = property;
  verdict.status = Verdict::Status::kPass;
  verdict.reproduce = reproduceCommand(record);
  verdict.expectedViolation = expectsViolation(record.scenario, property);
  return verdict;
}

bool expectsViolation(const Scenario& scenario, Property property) {
  const std::string shortId = lower(shortName(property));
  const std::string fullName = lower(toString(property));
  for (const std::string& named : scenario.expect.violations) {
    const std::string entry = lower(named);
    if (entry == shortId || entry == fullName) return true;
    // "C6 no overwrite" or "C6: ..." still names C6.
    if (entry.size() > shortId.size() && entry.compare(0, shortId.size(), shortId) == 0 &&
        !std::isdigit(static_cast<unsigned char>(entry[shortId.size()]))) {
      return true;
    }
  }
  return false;
}

int rankCount(const RunRecord& record) {
  int count = record.scenario.ranks;
  for (const RankResult& result : record.ranks) count = std::max(count, result.rank + 1);
  return count;
}

const RankResult* findRank(const RunRecord& record, int rank) {
  // Ranks are stored in rank order; check that slot first, then search.
  if (rank >= 0 && static_cast<std::size_t>(rank) < record.ranks.size() &&
      record.ranks[static_cast<std::size_t>(rank)].rank == rank) {
    return &record.ranks[static_cast<std::size_t>(rank)];
  }
  for (const RankResult& result : record.ranks) {
    if (result.rank == rank) return &result;
  }
  return nullptr;
}

bool expectedReported(const Scenario& scenario, int rank) {
  const auto& reported = scenario.expect.reported;
  return std::find(reported.begin(), reported.end(), rank) != reported.end();
}

RankStatus expectedSurvivorStatus(const Scenario& scenario) {
  const Expectation& expect = scenario.expect;
  if (expect.outcome == Outcome::kSuccess) return RankStatus::kOk;
  if (expect.outcome == Outcome::kRaise) return RankStatus::kRaised;
  bool stops = false;
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kDeath && fault.site != FaultSite::kHang) continue;
    stops = true;
    if (fault.at != Point::kClose) return RankStatus::kRaised;
  }
  if (!stops || expect.others) return RankStatus::kRaised;
  for (const auto& [rank, message] : expect.messages) {
    if (!expectedReported(scenario, rank)) return RankStatus::kRaised;
  }
  return RankStatus::kOk;
}

bool faultPlanted(const Scenario& scenario, FaultSite site, int rank, std::optional<int> peer) {
  for (const Fault& fault : scenario.faults) {
    if (fault.site != site) continue;
    if (std::find(fault.ranks.begin(), fault.ranks.end(), rank) == fault.ranks.end()) continue;
    if (peer && fault.peer && *fault.peer != *peer) continue;
    return true;
  }
  return false;
}

std::string describeResult(const RankResult& result) {
  std::string text = toString(result.status);
  if (result.status == RankStatus::kRaised) {
    text +=
        " " + (result.errorType.empty() ? std::string("(unknown error type)") : result.errorType);
    if (!result.message.empty()) text += ": " + result.message;
  }
  return text;
}

std::string outcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSuccess:
      return "success";
    case Outcome::kRaise:
      return "raise";
    case Outcome::kReported:
      return "reported";
  }
  return "unknown";
}

std::string formatNs(std::int64_t ns) {
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

std::string hexPtr(std::uint64_t ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(ptr));
  return text;
}

}  // namespace peerconf::harness::checkers
