// RunRecord helpers: status names and the reproduce command.
#include "model/run_record.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace peerconf::harness::model {

std::string toString(RankStatus status) { return kRankStatusNames.name(status); }

std::string shellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || std::strchr("_-./:=@%+,", c) != nullptr;
  });
  if (plain) return word;
  // Inside single quotes nothing is special but the quote itself: end, escape it, reopen.
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::int64_t RunRecord::timelineNs() const noexcept {
  if (!simulatedTime()) return wallNs;
  std::int64_t end = 0;
  for (const RankResult& rank : ranks) {
    end = std::max(end, rank.endNs);
    for (const Event& event : rank.events) end = std::max(end, event.tNs);
  }
  return end;
}

namespace {

std::string& programNameSlot() {
  static std::string name = "peerconf";
  return name;
}

}  // namespace

void setProgramName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  programNameSlot() = base.empty() ? "peerconf" : base;
}

const std::string& programName() { return programNameSlot(); }

std::string reproduceCommand(const RunRecord& record) {
  std::string cmd = programName() + " run " + shellQuote(record.scenario.file) + " --seed " +
                    std::to_string(record.seed) + " --launcher " + shellQuote(record.launcher);
  if (record.runtime != "mock") cmd += " --runtime " + shellQuote(record.runtime);
  if (!record.core.empty()) cmd += " --core " + shellQuote(record.core);
  // A thread run replays only on its own clock (said even for the default, sim, so that the line
  // keeps meaning the same run if the default changes); MPI runs are always on real time.
  if (record.launcher == "threads" && !record.clock.empty()) {
    cmd += " --clock " + shellQuote(record.clock);
  }
  return cmd;
}

const model::Result* dataPlaneOfBuffer(const RankResult& result, std::size_t buffer) {
  if (buffer == 0) return result.dataPlane ? &*result.dataPlane : nullptr;
  if (buffer - 1 < result.laterDataPlanes.size()) return &result.laterDataPlanes[buffer - 1];
  return nullptr;
}

std::size_t dataPlanesRecorded(const RankResult& result) {
  if (!result.dataPlane) return 0;
  return 1 + result.laterDataPlanes.size();
}

}  // namespace peerconf::harness::model
