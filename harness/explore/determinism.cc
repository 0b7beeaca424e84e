// Determinism: normalized per-rank event sequences and their first difference.
#include "explore/determinism.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "model/record_json.h"

namespace peerconf::harness::explore {

using model::Event;
using model::EventKind;
using model::RankResult;
using model::RunRecord;

namespace {

std::string normalizeDetail(const std::string& detail) {
  static const std::regex kPointer("0x[0-9a-fA-F]+");
  static const std::regex kGeneration("\\b(gen|generation|allocation|pid) [0-9]+");
  static const std::regex kTimedOutRank("since rank [0-9]+ timed out");
  if (detail.find_first_of("0123456789") == std::string::npos) return detail;
  std::string out = std::regex_replace(detail, kPointer, "0x?");
  out = std::regex_replace(out, kGeneration, "$1 ?");
  out = std::regex_replace(out, kTimedOutRank, "since rank ? timed out");
  return out;
}

std::string line(const Event& event) {
  std::string text = toString(event.kind) + " " + event.what;
  if (event.peer >= 0) text += " " + std::to_string(event.peer);
  if (!event.detail.empty()) text += " " + normalizeDetail(event.detail);
  return text;
}

}  // namespace

std::vector<std::string> normalizedEvents(const RankResult& rank) {
  std::vector<std::string> out;
  out.reserve(rank.events.size());
  for (const Event& event : rank.events) out.push_back(line(event));
  return out;
}

std::vector<std::vector<std::string>> normalizedRun(const RunRecord& record) {
  std::vector<std::vector<std::string>> out;
  for (const RankResult& rank : record.ranks) {
    std::vector<std::string> events = normalizedEvents(rank);
    std::string outcome = "result " + toString(rank.status);
    if (!rank.errorType.empty()) outcome += " " + rank.errorType;
    if (!rank.message.empty()) outcome += " " + normalizeDetail(rank.message);
    events.push_back(std::move(outcome));
    out.push_back(std::move(events));
  }
  return out;
}

namespace {

std::optional<std::string> firstDifferenceOf(const std::vector<std::vector<std::string>>& x,
                                             const std::vector<std::vector<std::string>>& y) {
  if (x.size() != y.size()) {
    return std::to_string(x.size()) + " ranks reported vs " + std::to_string(y.size());
  }
  for (std::size_t rank = 0; rank < x.size(); ++rank) {
    const auto& p = x[rank];
    const auto& q = y[rank];
    const std::size_t common = std::min(p.size(), q.size());
    for (std::size_t i = 0; i < common; ++i) {
      if (p[i] != q[i]) {
        return "rank " + std::to_string(rank) + ", event " + std::to_string(i) + ": '" + p[i] +
               "' vs '" + q[i] + "'";
      }
    }
    if (p.size() != q.size()) {
      const auto& longer = p.size() > q.size() ? p : q;
      return "rank " + std::to_string(rank) + ": " + std::to_string(p.size()) + " events vs " +
             std::to_string(q.size()) + " (first extra: '" + longer[common] + "')";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> firstDifference(const RunRecord& a, const RunRecord& b) {
  return firstDifferenceOf(normalizedRun(a), normalizedRun(b));
}

std::vector<std::vector<std::string>> normalizedResults(const RunRecord& record) {
  std::vector<std::vector<std::string>> out;
  for (const RankResult& rank : record.ranks) {
    std::vector<std::string> lines;
    for (const Event& event : rank.events) {
      if (event.kind != EventKind::kFault) continue;
      lines.push_back("fault " + event.what +
                      (event.peer >= 0 ? " " + std::to_string(event.peer) : ""));
    }
    std::string result = "result " + toString(rank.status);
    if (!rank.errorType.empty()) result += " " + rank.errorType;
    if (rank.errorType == "HandshakeError") result += rank.thisRank ? " this" : " another";
    if (!rank.message.empty()) result += " " + normalizeDetail(rank.message);
    lines.push_back(std::move(result));
    out.push_back(std::move(lines));
  }
  return out;
}

std::optional<std::string> firstExactDifference(const RunRecord& a, const RunRecord& b) {
  auto exact = [](const RunRecord& record) {
    std::vector<std::vector<std::string>> out;
    for (const RankResult& rank : record.ranks) {
      std::vector<std::string> lines;
      for (const Event& event : rank.events) lines.push_back(model::toJson(event).dump());
      nlohmann::json outcome = model::toJson(rank);
      outcome.erase("events");
      outcome.erase("ledger");
      lines.push_back("result " + outcome.dump());
      out.push_back(std::move(lines));
    }
    return out;
  };
  return firstDifferenceOf(exact(a), exact(b));
}

std::optional<Divergence> compareRuns(const RunRecord& a, const RunRecord& b, bool exact) {
  if (auto difference = firstDifferenceOf(normalizedResults(a), normalizedResults(b))) {
    return Divergence{Divergence::Level::kResult, *difference};
  }
  if (auto difference = firstDifference(a, b)) {
    return Divergence{exact ? Divergence::Level::kResult : Divergence::Level::kInterleaving,
                      *difference};
  }
  if (!exact) return std::nullopt;
  if (auto difference = firstExactDifference(a, b)) {
    return Divergence{Divergence::Level::kResult, "not byte-identical: " + *difference};
  }
  return std::nullopt;
}

}  // namespace peerconf::harness::explore
