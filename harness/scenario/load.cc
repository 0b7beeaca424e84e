// Reading scenario files: one file (loadScenario), YAML text (parseScenario, in parser.cc), and
// the FILES|DIRS a command line names (expandScenarioPaths).
#include "scenario/load.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <system_error>

#include "scenario/values.h"

namespace peerconf::harness::scenario {

using model::Scenario;
using model::ScenarioError;

namespace {

bool isScenarioFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml";
}

bool isHidden(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name.front() == '.';
}

}  // namespace

Scenario loadScenario(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw ScenarioError(path, {}, "is a directory, not a scenario file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, {}, std::string("cannot open: ") + std::strerror(errno));
  // Read no more than the parser takes (scenario/values.h), so a huge file costs nothing.
  std::string text(scenario::kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ScenarioError(path, {}, std::string("cannot read: ") + std::strerror(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > scenario::kMaxFileBytes) {
    throw ScenarioError(path, {}, scenario::tooLarge());
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

bool expandScenarioPaths(const std::vector<std::string>& paths, std::vector<std::string>& files,
                         std::ostream& err) {
  try {
    files = expandScenarioPaths(paths);
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace peerconf::harness::scenario
