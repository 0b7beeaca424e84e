// The run directory of real-signal mode (supervisor.h): the files both sides share and how they are
// written and read. A rank's event file is JSON lines, one write(2) a line, so that a killed rank
// leaves every complete line it wrote: a "header" (rank, pid, start on the steady clock), one
// "event" a recorded event, and a "stop" (status dead or hung, and the point) just before the rank
// stops for real. Its result file is rankPayload's JSON (rank_launch.h), written whole or not at
// all.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/event_log.h"
#include "model/run_record.h"

namespace peerconf::harness::mpirun {

// "s<index>.r<rank>.<what>": the file `what` ("events", "result") of `rank` for item `index`.
std::string itemName(std::size_t index, int rank, const char* what);

// `t` on the steady clock, in nanoseconds since its epoch (comparable between processes).
std::int64_t steadyNs(model::EventLog::Clock::time_point t);

// Writes all of `text` to `fd`, retrying short writes and EINTR; false on an error.
bool writeAll(int fd, const std::string& text) noexcept;
// Writes `text` to `path` through a temporary name, so a reader sees all of it or nothing.
void writeFileAtomically(const std::string& path, const std::string& text);
std::optional<std::string> readFile(const std::string& path);
bool exists(const std::string& path);
// Removes `path` and everything below it (links are removed, never followed).
void removeTree(const std::string& path);
// The last `lines` lines of `text` (all of it when it has fewer).
std::string lastLines(const std::string& text, std::size_t lines);

// What one rank's event file says.
struct Stream {
  bool found = false;  // the header is there
  pid_t pid = -1;
  std::int64_t startNs = 0;  // steady clock, absolute
  std::vector<model::Event> events;
  std::optional<model::RankStatus> stopped;  // kDead, kHung or kExited
  std::string stopAt;
  int exitCode = 0;  // kExited: the code the rank said it exits with
};

// Reads an event file: complete lines only (a line still being written is left for later);
// a line that is not JSON is skipped. A missing file reads as nothing found.
Stream readStream(const std::string& path);

}  // namespace peerconf::harness::mpirun
