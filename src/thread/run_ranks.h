// runRanks: runs one body per rank, each rank on its own thread over a shared ThreadWorld, and
// reports every rank's outcome.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "group.h"
#include "thread/thread_world.h"

namespace peerconf::thread {

// What one rank's body did: returned (ok) or threw `error`.
struct RankOutcome {
  int rank = 0;
  std::exception_ptr error;  // null when the body returned
  std::string message;       // the error's what(), empty when ok

  bool ok() const noexcept { return error == nullptr; }
};

// "rank 2: ok" or "rank 2: <message>".
std::ostream& operator<<(std::ostream& out, const RankOutcome& outcome);

using RankBody = std::function<void(int rank, Group& group)>;

// Runs `body` on `n` threads, rank r with a ThreadGroup of rank r over a fresh world whose calls
// time out after `deadline`. Returns every rank's outcome, indexed by rank. When a body throws,
// the world is aborted so that ranks blocked in (or later entering) a group call wake with
// GroupError naming the rank that threw; they still report their own outcome. Bodies that block
// outside group calls are not interrupted: runRanks returns once every thread has ended.
std::vector<RankOutcome> runRanks(int n, std::chrono::milliseconds deadline, RankBody body);

// As above over an existing world (one thread per rank of `world`), so a caller can abort it.
std::vector<RankOutcome> runRanks(const std::shared_ptr<ThreadWorld>& world, RankBody body);

// True when every outcome is ok.
bool allOk(const std::vector<RankOutcome>& outcomes);

}  // namespace peerconf::thread
