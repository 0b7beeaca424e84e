// Scenario: reading scenario files and naming their values (the YAML walk is in
// scenario_parser.cc, the cross-key rules in scenario_rules.cc).
#include "scenario.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "scenario_values.h"

namespace peerconf::harness {

namespace {

std::string located(const std::string& file, Mark mark, const std::string& message) {
  if (mark.line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) + ": " +
         message;
}

bool isScenarioFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml";
}

bool isHidden(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name.front() == '.';
}

}  // namespace

ScenarioError::ScenarioError(std::string file, Mark mark, const std::string& message)
    : std::runtime_error(located(file, mark, message)),
      file_(std::move(file)),
      mark_(mark),
      message_(message) {}

Scenario loadScenario(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw ScenarioError(path, {}, "is a directory, not a scenario file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, {}, std::string("cannot open: ") + std::strerror(errno));
  // Read no more than the parser takes (scenario_values.h), so a huge file costs nothing.
  std::string text(scenario_values::kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ScenarioError(path, {}, std::string("cannot read: ") + std::strerror(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > scenario_values::kMaxFileBytes) {
    throw ScenarioError(path, {}, scenario_values::tooLarge());
  }
  return parseScenario(text, path);
}

std::vector<std::string> expandScenarioPaths(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::set<fs::path> seen;
  auto add = [&](const fs::path& path) {
    if (seen.insert(path.lexically_normal()).second) out.push_back(path.string());
  };
  for (const std::string& given : paths) {
    std::error_code error;
    const fs::file_status status = fs::status(given, error);
    if (error || !fs::exists(status)) {
      throw ScenarioError(given, {}, "no such file or directory");
    }
    if (!fs::is_directory(status)) {
      add(given);
      continue;
    }
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(given, fs::directory_options::follow_directory_symlink,
                                        error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (isHidden(it->path())) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && isScenarioFile(it->path())) found.push_back(it->path());
    }
    if (error) throw ScenarioError(given, {}, "cannot list: " + error.message());
    if (found.empty()) throw ScenarioError(given, {}, "no *.yaml or *.yml scenario files here");
    std::sort(found.begin(), found.end());
    for (const fs::path& path : found) add(path);
  }
  return out;
}

std::string toString(FaultSite site) {
  switch (site) {
    case FaultSite::kAlloc:
      return "alloc";
    case FaultSite::kGetHandle:
      return "get-handle";
    case FaultSite::kOpen:
      return "open";
    case FaultSite::kClose:
      return "close";
    case FaultSite::kFree:
      return "free";
    case FaultSite::kAllocTable:
      return "alloc-table";
    case FaultSite::kCopyTable:
      return "copy-table";
    case FaultSite::kHandleCorrupt:
      return "handle-corrupt";
    case FaultSite::kHandleStale:
      return "handle-stale";
    case FaultSite::kGroupFail:
      return "group-fail";
    case FaultSite::kDelay:
      return "delay";
    case FaultSite::kDeath:
      return "death";
    case FaultSite::kHang:
      return "hang";
    case FaultSite::kNotReady:
      return "not-ready";
  }
  return "unknown";
}

std::string toString(Point point) {
  switch (point) {
    case Point::kBeforeConstruct:
      return "before-construct";
    case Point::kExchange:
      return "exchange";
    case Point::kOpen:
      return "open";
    case Point::kAgree:
      return "agree";
    case Point::kClose:
      return "close";
  }
  return "unknown";
}

std::string toString(Outcome outcome) {
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

std::string toString(MessageKind kind) {
  switch (kind) {
    case MessageKind::kThis:
      return "this";
    case MessageKind::kAnother:
      return "another";
    case MessageKind::kGroup:
      return "group";
    case MessageKind::kText:
      return "text";
  }
  return "unknown";
}

std::string toString(const MessageExpectation& message) {
  if (message.kind != MessageKind::kText) return toString(message.kind);
  return "text \"" + message.text + "\"";
}

std::string hipErrorName(int code) {
  if (code == 0) return "hipSuccess";
  for (std::string_view name : scenario_values::hipErrorNames()) {
    if (scenario_values::hipErrorCode(name) == code) return std::string(name);
  }
  return "hipError(" + std::to_string(code) + ")";
}

}  // namespace peerconf::harness
