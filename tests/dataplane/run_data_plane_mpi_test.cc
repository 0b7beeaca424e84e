// The data plane across MPI processes: each rank a process, PeerBuffer over MpiGroup and the
// mocked HIP runtime (peers' buffers are the same shared memory mapped into each process, so the
// protocol's atomics work across processes); every rank's result gathered to every rank as JSON
// and checked by C6/C7/C8.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "backend_factory.h"
#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane/run_data_plane.h"
#include "mock_hip/control.h"
#include "model/dataplane_result_json.h"
#include "model/event_log.h"
#include "mpi/mpi_group.h"
#include "mpi_shared_job.h"
#include "mpi_test_support.h"
#include "peer_buffer.h"

namespace peerconf::testing {
namespace {

using namespace std::chrono_literals;
using harness::model::RankResult;
using harness::model::RunRecord;
using harness::model::Verdict;

// Runs `spec` on every process and returns every rank's result (on every rank).
RunRecord runEverywhere(const harness::model::Spec& spec,
                        std::chrono::milliseconds deadline = 2000ms) {
  const int rank = worldRank();
  const int n = worldSize();
  RankResult mine;
  mine.rank = rank;
  mine.status = harness::model::RankStatus::kOk;
  {
    mpi::MpiGroup group(MPI_COMM_WORLD, 30s, mpi::OnTimeout::kThrow);
    auto backend = makeIpcBackend(Runtime::kMock, rank, rank);
    PeerBuffer buffer(64 * 1024, *backend, &group);
    harness::model::EventLog log(rank, harness::model::EventLog::Clock::now());
    harness::dataplane::runDataPlane(spec, deadline, rank, buffer, &group, log, mine);
    buffer.close();
  }
  mock_hip::resetAll();

  nlohmann::json j;
  harness::model::writeJson(mine, j);
  const std::string text = j.dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(n));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(n), 0);
  for (int r = 1; r < n; ++r) {
    offsets[static_cast<std::size_t>(r)] =
        offsets[static_cast<std::size_t>(r - 1)] + lengths[static_cast<std::size_t>(r - 1)];
  }
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, MPI_COMM_WORLD);
  RunRecord record;
  record.scenario.ranks = n;
  record.scenario.deadline = deadline;
  for (int r = 0; r < n; ++r) {
    RankResult result;
    result.rank = r;
    result.status = harness::model::RankStatus::kOk;
    harness::model::readJson(nlohmann::json::parse(all.substr(
                                 static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                 static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]))),
                             result);
    record.ranks.push_back(std::move(result));
  }
  return record;
}

std::string text(const Verdict& v) {
  std::string out = v.summary;
  for (const auto& f : v.findings) out += "\n  rank " + std::to_string(f.rank) + ": " + f.text;
  return out;
}

class MpiDataPlane : public ::testing::Test {
 protected:
  void TearDown() override { agreeOnFailures(MPI_COMM_WORLD); }
};

TEST_F(MpiDataPlane, TheReferenceLayoutRunsCleanAcrossProcesses) {
  for (harness::model::Workload workload :
       {harness::model::Workload::kExchange, harness::model::Workload::kAllReduce}) {
    harness::model::Spec spec;
    spec.workload = workload;
    // 8 processes oversubscribe CI's 2 cores, and every step waits for all of them: 200 steps
    // there (1000 took 40 CPU-s), 1000 at 4, 20000 at 2.
    spec.steps = worldSize() <= 2 ? 20000 : worldSize() <= 4 ? 1000 : 200;
    // Across the wrap, halfway through the run, at every size.
    spec.startEpoch = 0u - static_cast<std::uint32_t>(spec.steps / 2);
    spec.prefill = harness::model::Prefill::kStaleEpochs;
    const RunRecord record = runEverywhere(spec);
    for (const RankResult& r : record.ranks) {
      ASSERT_TRUE(r.dataPlane.has_value());
      EXPECT_EQ(r.dataPlane->outcome, harness::model::DataplaneOutcome::kCompleted)
          << r.dataPlane->detail;
      EXPECT_EQ(r.dataPlane->pairsGenuine,
                spec.steps * static_cast<std::uint64_t>(worldSize() - 1));
    }
    const Verdict c6 = harness::checkers::checkNoOverwrite(record);
    const Verdict c7 = harness::checkers::checkNoStale(record);
    EXPECT_EQ(c6.status, Verdict::Status::kPass) << text(c6);
    EXPECT_EQ(c7.status, Verdict::Status::kPass) << text(c7);
  }
}

TEST_F(MpiDataPlane, SingleBufferingIsCaughtAcrossProcesses) {
  harness::model::Spec spec;
  spec.layout = "single-buffer";
  spec.steps = 200;
  spec.late.push_back({worldSize() - 1, harness::model::Role::kReader, 40, {}, 5ms});
  const RunRecord record = runEverywhere(spec);
  const Verdict c6 = harness::checkers::checkNoOverwrite(record);
  EXPECT_TRUE(c6.failed()) << text(c6);
  EXPECT_FALSE(harness::checkers::checkNoStale(record).failed());
}

TEST_F(MpiDataPlane, AStoppedProcessIsReportedWithinTheDeadline) {
  harness::model::Spec spec;
  spec.steps = 500;
  spec.stop = harness::model::Stop{worldSize() - 1, 20};
  const auto start = std::chrono::steady_clock::now();
  const RunRecord record = runEverywhere(spec, 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  const Verdict c8 = harness::checkers::checkBoundedWithDataPlane(record);
  EXPECT_FALSE(c8.failed()) << text(c8);
  EXPECT_EQ(record.ranks.back().dataPlane->outcome, harness::model::DataplaneOutcome::kStopped);
}

}  // namespace
}  // namespace peerconf::testing
