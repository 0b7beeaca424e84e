// runRanks: one thread per rank, every outcome kept, a throwing rank aborts the world.
#include "thread/run_ranks.h"

#include <ostream>
#include <thread>
#include <utility>

#include "errors.h"
#include "thread/thread_group.h"

namespace peerconf::thread {

std::ostream& operator<<(std::ostream& out, const RankOutcome& outcome) {
  out << "rank " << outcome.rank << ": ";
  if (outcome.ok()) return out << "ok";
  return out << outcome.message;
}

std::vector<RankOutcome> runRanks(int n, std::chrono::milliseconds deadline, RankBody body) {
  return runRanks(std::make_shared<ThreadWorld>(n, deadline), std::move(body));
}

std::vector<RankOutcome> runRanks(const std::shared_ptr<ThreadWorld>& world, RankBody body) {
  const int n = world->size();
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(n));
  auto runOne = [&world, &body, &outcomes](int rank) {
    RankOutcome& outcome = outcomes[static_cast<std::size_t>(rank)];
    try {
      ThreadGroup group(world, rank);
      body(rank, group);
    } catch (...) {
      outcome.error = std::current_exception();
      outcome.message = describe(outcome.error);
      world->abort(rank, "rank " + std::to_string(rank) + " threw: " + outcome.message);
    }
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int rank = 0; rank < n; ++rank) outcomes[static_cast<std::size_t>(rank)].rank = rank;
  try {
    for (int rank = 0; rank < n; ++rank) threads.emplace_back(runOne, rank);
  } catch (...) {
    // Ranks that could not start would leave the started ones waiting: wake them, then report.
    const std::exception_ptr error = std::current_exception();
    const int started = static_cast<int>(threads.size());
    world->abort(started, "rank " + std::to_string(started) +
                              " could not start its thread: " + describe(error));
    for (auto& t : threads) t.join();
    for (int rank = started; rank < n; ++rank) {
      outcomes[static_cast<std::size_t>(rank)].error = error;
      outcomes[static_cast<std::size_t>(rank)].message = describe(error);
    }
    return outcomes;
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

bool allOk(const std::vector<RankOutcome>& outcomes) {
  for (const auto& o : outcomes) {
    if (!o.ok()) return false;
  }
  return true;
}

}  // namespace peerconf::thread
