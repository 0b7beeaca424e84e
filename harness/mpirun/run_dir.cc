// The run directory's files (run_dir.h).
#include "mpirun/run_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "model/record_json.h"

namespace peerconf::harness::mpirun {

using model::eventFromJson;
using model::EventLog;
using model::RankStatus;

using nlohmann::json;

std::string itemName(std::size_t index, int rank, const char* what) {
  return "s" + std::to_string(index) + ".r" + std::to_string(rank) + "." + what;
}

std::int64_t steadyNs(EventLog::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

bool writeAll(int fd, const std::string& text) noexcept {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

void writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
  const bool ok = writeAll(fd, text);
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  }
}

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

void removeTree(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      const std::string child = path + "/" + name;
      struct stat st {};
      if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        removeTree(child);
      } else {
        ::unlink(child.c_str());
      }
    }
    ::closedir(dir);
  }
  ::rmdir(path.c_str());
}

std::string lastLines(const std::string& text, std::size_t lines) {
  if (text.empty()) return text;  // an empty log (mpirun wrote nothing)
  std::size_t pos = text.size();
  while (lines-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

Stream readStream(const std::string& path) {
  Stream stream;
  const auto text = readFile(path);
  if (!text) return stream;
  std::size_t begin = 0;
  while (begin < text->size()) {
    const std::size_t end = text->find('\n', begin);
    if (end == std::string::npos) break;  // a line still being written
    const std::string line = text->substr(begin, end - begin);
    begin = end + 1;
    try {
      const json j = json::parse(line);
      if (j.contains("header")) {
        stream.pid = j["header"].at("pid").get<pid_t>();
        stream.startNs = j["header"].at("startNs").get<std::int64_t>();
        stream.found = true;
      } else if (j.contains("event")) {
        stream.events.push_back(eventFromJson(j["event"]));
      } else if (j.contains("stop")) {
        const std::string status = j["stop"].at("status").get<std::string>();
        stream.stopped = status == "hung"     ? RankStatus::kHung
                         : status == "exited" ? RankStatus::kExited
                                              : RankStatus::kDead;
        stream.stopAt = j["stop"].at("at").get<std::string>();
        stream.exitCode = j["stop"].value("code", 0);
      }
    } catch (const std::exception&) {
      // A torn line cannot happen (one write a line); skip anything unreadable.
    }
  }
  return stream;
}

}  // namespace peerconf::harness::mpirun
