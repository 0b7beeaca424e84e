// The data plane over the real stack, ranks as threads: PeerBuffer over the mocked HIP runtime
// (device memory = shared memory mapped into the process, each peer through its own IPC mapping),
// runDataPlane as the rank runner calls it, and the C6/C7/C8 checkers on the record.
#include "dataplane/run_data_plane.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "backend_factory.h"
#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane_test_support.h"
#include "mock_hip/control.h"
#include "model/event_log.h"
#include "peer_buffer.h"
#include "thread/run_ranks.h"

namespace peerconf::harness::dataplane {

using checkers::checkBoundedWithDataPlane;
using model::DataplaneOutcome;
using model::EventLog;
using model::Prefill;
using model::RankResult;
using model::RankStatus;
using model::Role;
using model::RunRecord;
using model::Spec;
using model::Stop;
using model::Verdict;
using model::Workload;
namespace {

using namespace std::chrono_literals;
using testing::describe;

struct StackRun {
  std::vector<RankResult> ranks;
  std::vector<std::string> errors;
};

StackRun runOnStack(const Spec& spec, int n, std::size_t bytes = 64 * 1024,
                    std::chrono::milliseconds deadline = 2000ms) {
  mock_hip::clearLedgers();
  StackRun run;
  run.ranks.resize(static_cast<std::size_t>(n));
  const auto start = EventLog::Clock::now();
  const auto outcomes = thread::runRanks(n, 20s, [&](int rank, Group& group) {
    auto backend = makeIpcBackend(Runtime::kMock, rank, rank);
    PeerBuffer buffer(bytes, *backend, &group);
    EventLog log(rank, start);
    RankResult& result = run.ranks[static_cast<std::size_t>(rank)];
    result.rank = rank;
    result.status = RankStatus::kOk;
    runDataPlane(spec, deadline, rank, buffer, &group, log, result);
    result.events = log.take();
    buffer.close();
  });
  for (const auto& o : outcomes) {
    if (!o.ok()) run.errors.push_back(o.message);
  }
  mock_hip::resetAll();
  return run;
}

RunRecord recordOf(const StackRun& run) {
  RunRecord record;
  record.scenario.ranks = static_cast<int>(run.ranks.size());
  record.scenario.deadline = 2000ms;
  record.ranks = run.ranks;
  return record;
}

TEST(DataPlaneOnTheMockedRuntime, TheReferenceLayoutRunsCleanThroughPeerMappings) {
  for (Workload workload : {Workload::kExchange, Workload::kAllReduce}) {
    Spec spec;
    spec.workload = workload;
    spec.steps = 3000;
    spec.prefill = Prefill::kEarlierBuffer;
    const StackRun run = runOnStack(spec, 4);
    ASSERT_TRUE(run.errors.empty()) << run.errors.front();
    for (const RankResult& r : run.ranks) {
      ASSERT_TRUE(r.dataPlane.has_value());
      EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kCompleted) << r.dataPlane->detail;
      EXPECT_EQ(r.dataPlane->pairsGenuine, 3000u * 3);
      // The phase is in the rank's event log, with the prefill as a fault.
      bool begin = false;
      bool prefill = false;
      for (const auto& e : r.events) {
        begin =
            begin || (e.kind == harness::model::EventKind::kPhaseBegin && e.what == "dataplane");
        prefill = prefill ||
                  (e.kind == harness::model::EventKind::kFault && e.what == "dataplane-prefill");
      }
      EXPECT_TRUE(begin);
      EXPECT_TRUE(prefill);
    }
    const RunRecord record = recordOf(run);
    const Verdict c6 = checkers::checkNoOverwrite(record);
    const Verdict c7 = checkers::checkNoStale(record);
    EXPECT_EQ(c6.status, Verdict::Status::kPass) << describe(c6);
    EXPECT_EQ(c7.status, Verdict::Status::kPass) << describe(c7);
  }
}

TEST(DataPlaneOnTheMockedRuntime, TheNoGenerationControlIsCaughtThroughPeerMappings) {
  Spec spec;
  spec.layout = "no-generation";
  spec.prefill = Prefill::kEarlierBuffer;
  spec.steps = 50;
  spec.late.push_back({0, Role::kWriter, 0, {0}, 50ms});
  const StackRun run = runOnStack(spec, 2);
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  const RunRecord record = recordOf(run);
  EXPECT_TRUE(checkers::checkNoStale(record).failed());
  EXPECT_FALSE(checkers::checkNoOverwrite(record).failed());
}

TEST(DataPlaneOnTheMockedRuntime, AStoppedRankIsReportedAndEveryBufferStillClosesCleanly) {
  Spec spec;
  spec.steps = 1000;
  spec.stop = Stop{1, 10};
  const StackRun run = runOnStack(spec, 3, 64 * 1024, 300ms);
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  EXPECT_EQ(run.ranks[1].dataPlane->outcome, DataplaneOutcome::kStopped);
  const Verdict c8 = checkBoundedWithDataPlane(recordOf(run));
  EXPECT_FALSE(c8.failed()) << describe(c8);
}

TEST(DataPlaneOnTheMockedRuntime, MemoryThatIsNotTheMockedRuntimesIsSkippedNotTouched) {
  std::vector<std::int64_t> addresses = {0x1000, 0x2000};
  EXPECT_FALSE(hostMapped(0, addresses, DeviceBytes{0x1000, 4096}));
  EventLog log(0, EventLog::Clock::now());
  RankResult result;
  Spec spec;
  runDataPlane(spec, 100ms, 0, addresses, DeviceBytes{0x1000, 4096}, nullptr, log, result);
  ASSERT_TRUE(result.dataPlane.has_value());
  EXPECT_EQ(result.dataPlane->outcome, DataplaneOutcome::kSkipped);
}

TEST(DataPlaneOnTheMockedRuntime, ABufferTooSmallForTheLayoutIsAnErrorOnEveryRank) {
  Spec spec;
  spec.steps = 10;
  const StackRun run = runOnStack(spec, 2, 256);
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  for (const RankResult& r : run.ranks) {
    EXPECT_EQ(r.dataPlane->outcome, DataplaneOutcome::kError);
  }
  EXPECT_TRUE(checkBoundedWithDataPlane(recordOf(run)).failed());
}

}  // namespace
}  // namespace peerconf::harness::dataplane
