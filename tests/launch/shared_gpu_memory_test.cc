// Ranks sharing a mocked GPU (issue 26, --ranks-per-gpu under the mock): the thread launcher puts
// rank r on GPU r mod ceil(ranks / N), each rank keeping its own mocked device (ledger, fault
// hooks, "own handle" refusal), and judges each shared GPU's free memory once every rank on it has
// ended (SharedGpuMemory). Shown with the C3 leak controls of scenarios/controls at 1, 2 and 8
// ranks a GPU: each still fails for its named finding, a leak is charged to the rank that holds
// it and never to a sibling, and the production core passes the same files there (no false leak).
#include "launch/shared_gpu_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "judged_run.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "planted/registry.h"
#include "scenario/load.h"

namespace peerconf::harness::launch {
namespace {

using model::Property;
using model::RankResult;
using model::RunRecord;
using model::Scenario;
using model::Verdict;
using scenario::loadScenario;

using mock_hip::hipMalloc;
using mock_hip::hipSetDevice;
using mock_hip::hipSuccess;
using ::testing::Contains;
using ::testing::HasSubstr;

// The controls of scenarios/controls whose named finding is C3's (a leak or a release the core
// got wrong).
const std::vector<std::string>& c3Controls() {
  static const std::vector<std::string> files = {
      "c3-closes-in-destructor.yaml", "c3-leaks-on-failure.yaml", "c3-leaks-when-table-fails.yaml",
      "c3-swallows-one-release-failure.yaml", "c2-c3-escapes-non-error.yaml"};
  return files;
}

Scenario control(const std::string& file) {
  return loadScenario(std::string(PEERCONF_SCENARIOS_DIR) + "/controls/" + file);
}

struct Checked : testing::JudgedRun {
  const Verdict& c3() const { return verdict(Property::kC3Cleanup); }
  std::vector<std::string> c3Findings() const {
    std::vector<std::string> texts;
    for (const auto& f : c3().findings) texts.push_back(std::to_string(f.rank) + ": " + f.text);
    return texts;
  }
};

Checked run(const Scenario& s, int ranksPerGpu) {
  static const CoreRegistry cores = planted::plantedRegistry();
  LaunchOptions options;
  // The file's clock where it names one (c2-c3-escapes-non-error is written for real time: on sim
  // its wait also fails C8, which its -sim twin names), else simulated time.
  options.clock = s.clock == "real" ? ClockMode::kReal : ClockMode::kSim;
  options.cores = &cores;
  options.ranksPerGpu = ranksPerGpu;
  return {testing::runAndJudge(s, options)};
}

TEST(SharedGpuMemory, RanksGoRoundRobinOverTheGpusTheSharingNeeds) {
  // 8 ranks: 1 a GPU is 8 GPUs, 2 a GPU is 4 (ranks 0 and 4 on GPU 0), 8 a GPU is one.
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(5, 8, 1), 5);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(4, 8, 2), 0);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(5, 8, 2), 1);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(7, 8, 8), 0);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(2, 3, 2), 0);  // ceil(3 / 2) = 2 GPUs
}

TEST(SharedGpuMemory, WithNodesAGpuNeverSpansTwo) {
  // 8 ranks on 2 nodes of 4, 2 a GPU: node 0's ranks on GPUs 0 and 1, node 1's on 2 and 3 (the
  // plain round-robin would put ranks 0 and 4, of two nodes, on GPU 0).
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(0, 8, 2, 2), 0);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(2, 8, 2, 2), 0);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(3, 8, 2, 2), 1);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(4, 8, 2, 2), 2);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(7, 8, 2, 2), 3);
  EXPECT_EQ(SharedGpuMemory::gpuOfRank(4, 8, 2, 1), 0);  // one node: as without nodes
}

// The check itself, by hand: a buffer a rank held before the run is not the run's, a sibling's
// leak is charged to the sibling, and a rank alone on its GPU is left to its own check.
TEST(SharedGpuMemory, ADropIsChargedToTheRankHoldingItNeverToASibling) {
  mock_hip::resetAll();
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  void* before = nullptr;
  ASSERT_EQ(hipMalloc(&before, 1024), hipSuccess);  // rank 0's, before the run
  const SharedGpuMemory gpus(3, 2);                 // ranks 0 and 2 on GPU 0, rank 1 alone
  EXPECT_TRUE(gpus.shared(0));
  EXPECT_FALSE(gpus.shared(1));
  EXPECT_TRUE(gpus.shared(2));
  ASSERT_EQ(hipSetDevice(2), hipSuccess);
  void* leaked = nullptr;
  ASSERT_EQ(hipMalloc(&leaked, 4096), hipSuccess);  // rank 2's leak
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* alone = nullptr;
  ASSERT_EQ(hipMalloc(&alone, 512), hipSuccess);  // rank 1's: its own check judges it
  std::vector<RankResult> ranks(3);
  gpus.check(ranks);
  EXPECT_TRUE(ranks[0].deviceLeftovers.empty()) << ranks[0].deviceLeftovers.front();
  EXPECT_TRUE(ranks[1].deviceLeftovers.empty()) << ranks[1].deviceLeftovers.front();
  ASSERT_EQ(ranks[2].deviceLeftovers.size(), 1u);
  EXPECT_THAT(ranks[2].deviceLeftovers[0],
              HasSubstr("GPU 0 (mocked, shared by ranks 0, 2)'s free memory (hipMemGetInfo) fell "
                        "by 4096 bytes"));
  EXPECT_THAT(ranks[2].deviceLeftovers[0], HasSubstr("4096 bytes of it are rank 2's"));
  mock_hip::resetAll();
}

// Each C3 control still fails for its named finding with 1, 2 and 8 ranks a GPU.
TEST(SharedGpuMemory, EveryC3ControlFailsForItsNamedFindingAtEverySharing) {
  for (const std::string& file : c3Controls()) {
    for (const int perGpu : {1, 2, 8}) {
      const Checked checked = run(control(file), perGpu);
      EXPECT_TRUE(checked.judgement.passed)
          << file << " at " << perGpu << " a GPU: the control did not fail as it names\n"
          << checked.story();
      EXPECT_EQ(checked.c3().status, Verdict::Status::kFail) << file << " at " << perGpu;
    }
  }
}

// A buffer leaked on a shared GPU is caught by the GPU's check and charged to the rank that leaked
// it (rank 1 of c3-leaks-when-table-fails), never to its sibling on the same GPU.
TEST(SharedGpuMemory, ALeakOnASharedGpuIsChargedToTheLeakingRankOnly) {
  for (const int perGpu : {2, 8}) {
    const Checked checked = run(control("c3-leaks-when-table-fails.yaml"), perGpu);
    ASSERT_EQ(checked.record.ranks.size(), 2u);
    EXPECT_THAT(checked.record.ranks[1].deviceLeftovers,
                Contains(HasSubstr("GPU 0 (mocked, shared by ranks 0, 1)'s free memory")))
        << checked.story();
    EXPECT_THAT(checked.record.ranks[1].deviceLeftovers,
                Contains(HasSubstr("bytes of it are rank 1's allocations of the run")));
    EXPECT_THAT(checked.record.ranks[1].deviceLeftovers,
                Contains(HasSubstr("the mocked runtime still holds buffer")));
    EXPECT_TRUE(checked.record.ranks[0].deviceLeftovers.empty())
        << checked.record.ranks[0].deviceLeftovers.front();
  }
}

// The production core on the same files at the same sharings: C3 passes and no rank's device
// holds anything (a sibling's live buffer is never charged to a rank, nor one of another run).
TEST(SharedGpuMemory, TheProductionCorePassesTheSameFilesAtEverySharing) {
  for (const std::string& file : c3Controls()) {
    Scenario s = control(file);
    s.core.clear();
    s.expect.violations.clear();
    s.expect.findings.clear();
    for (const int perGpu : {1, 2, 8}) {
      const Checked checked = run(s, perGpu);
      EXPECT_EQ(checked.c3().status, Verdict::Status::kPass)
          << file << " at " << perGpu
          << " a GPU: " << ::testing::PrintToString(checked.c3Findings());
      for (const RankResult& r : checked.record.ranks) {
        EXPECT_TRUE(r.deviceLeftovers.empty())
            << file << " at " << perGpu << " rank " << r.rank << ": " << r.deviceLeftovers.front();
      }
    }
  }
}

}  // namespace
}  // namespace peerconf::harness::launch
