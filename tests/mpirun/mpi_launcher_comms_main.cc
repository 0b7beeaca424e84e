// The MPI launcher frees the communicators of every scenario whose group is still usable: a long
// `--repeat` run of raising scenarios in one mpirun must not use up Open MPI's context ids. Run
// under mpiexec with 2 ranks (tests/launch/CMakeLists.txt):
//  1. thousands of 2-rank scenarios in which every rank raises (an open fault agreed through the
//     handshake: nothing is left pending) run through MpiSession::runAll, as `peerconf run
//     --launcher mpi --repeat N` does; the count of live communicators
//     (mpi::liveCommunicators(), counted down by MPI_Comm_free itself) must be the same before
//     and after on every rank (with the freeing removed from the launcher it climbs by two a
//     scenario: checked by hand, see the commit);
//  2. the control: one scenario where a rank times out in a collective the other never joins
//     must keep its communicators (freeing them would be unsafe), and the count must show it,
//     so a counter that missed kept communicators fails here.
// Usage: mpi_launcher_comms_main [SCENARIOS]   (default 2000)
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "mpi/mpi_group.h"
#include "mpirun/mpi_launcher.h"
#include "scenario/load.h"

namespace {

using peerconf::harness::launch::LaunchOptions;
using peerconf::harness::model::RankStatus;
using peerconf::harness::model::RunRecord;
using peerconf::harness::model::Scenario;
using peerconf::harness::mpirun::MpiJob;
using peerconf::harness::mpirun::MpiSession;

// Rank 0 cannot open its peer; the handshake agrees on it and both ranks raise.
constexpr const char* kRaising = R"(description: every rank raises, nothing pending
ranks: 2
buffer: 4KiB
deadline: 2s
faults:
  - site: open
    rank: 0
expect:
  outcome: raise
  messages:
    0: this
    1: another
)";

// Rank 0's exchange fails locally (nothing sent); rank 1 times out in it.
constexpr const char* kTimingOut = R"(description: rank 1 times out in the exchange
ranks: 2
buffer: 4KiB
deadline: 200ms
faults:
  - site: group-fail
    rank: 0
    at: exchange
expect:
  outcome: raise
  messages:
    others: group
)";

struct Run {
  std::size_t records = 0;
  std::size_t allRaised = 0;
};

Run runMany(MpiSession& session, const Scenario& scenario, int count) {
  std::vector<MpiJob> jobs(static_cast<std::size_t>(count), MpiJob{&scenario, 1});
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].seed = i + 1;
  Run run;
  session.runAll(jobs, LaunchOptions{}, [&](std::size_t, RunRecord record) {
    ++run.records;
    bool raised = record.ranks.size() == 2;
    for (const auto& r : record.ranks) raised = raised && r.status == RankStatus::kRaised;
    if (raised) ++run.allRaised;
  });
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0;
  {
    MpiSession session(&argc, &argv);
    const int count = argc > 1 ? std::atoi(argv[1]) : 2000;
    auto fail = [&](const std::string& what) {
      std::fprintf(stderr, "rank %d: FAIL %s\n", session.rank(), what.c_str());
      ++failures;
    };
    if (session.size() != 2) fail("run me with 2 ranks");
    const Scenario raising = peerconf::harness::scenario::parseScenario(kRaising, "raising");
    const Scenario timingOut = peerconf::harness::scenario::parseScenario(kTimingOut, "timing-out");

    // Warm up (first-use allocations of MPI and the runtime), then measure.
    runMany(session, raising, 4);
    const long liveBefore = peerconf::mpi::liveCommunicators();
    const Run run = runMany(session, raising, count);
    const long liveAfter = peerconf::mpi::liveCommunicators();
    if (session.rank() == 0) {
      if (run.records != static_cast<std::size_t>(count)) {
        fail(std::to_string(run.records) + " records for " + std::to_string(count) + " runs");
      }
      if (run.allRaised != run.records) {
        fail("only " + std::to_string(run.allRaised) + " of " + std::to_string(run.records) +
             " runs had every rank raise");
      }
    }
    if (liveAfter != liveBefore) {
      fail("live communicators went from " + std::to_string(liveBefore) + " to " +
           std::to_string(liveAfter) + " over " + std::to_string(count) + " raising scenarios");
    }
    // Control: a timed-out group keeps its communicators, and the count sees them.
    const Run control = runMany(session, timingOut, 1);
    const long liveKept = peerconf::mpi::liveCommunicators();
    if (liveKept <= liveAfter) {
      fail("a scenario that timed out left the count at " + std::to_string(liveKept) + " (was " +
           std::to_string(liveAfter) +
           "): its communicators were freed, or the "
           "count does not see kept ones");
    }
    // And raising scenarios after it are freed again.
    runMany(session, raising, 50);
    if (peerconf::mpi::liveCommunicators() != liveKept) {
      fail("after the control, 50 raising scenarios moved the count from " +
           std::to_string(liveKept) + " to " + std::to_string(peerconf::mpi::liveCommunicators()));
    }
    if (session.rank() == 0) {
      std::printf(
          "mpi_launcher_comms: %d raising scenarios in one mpirun: live communicators %ld -> %ld; "
          "control (a timed-out group, %zu record): %ld -> %ld kept\n",
          count, liveBefore, liveAfter, control.records, liveAfter, liveKept);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  if (failures != 0) std::fprintf(stderr, "mpi_launcher_comms: FAIL (%d)\n", failures);
  return failures == 0 ? 0 : 1;
}
