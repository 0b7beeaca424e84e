// MPI launcher: inside `mpirun -np N peerconf run ...` every process is one rank. Every process
// walks the same scenario list; each scenario runs on world ranks [0, scenario.ranks), and every
// rank's result is gathered to world rank 0, which checks and reports. One mpirun, many scenarios.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace peerconf::harness::mpirun {

// True when this process was started by mpirun (Open MPI or MPICH environment).
bool underMpirun();

// One scenario run the session must make (the scenario outlives the call).
struct MpiJob {
  const model::Scenario* scenario = nullptr;
  std::uint64_t seed = 0;
};

class MpiSession {
 public:
  // Initializes MPI, gives every process the same mocked-runtime job id, and splits the world
  // into nodes: by shared memory (MPI_COMM_TYPE_SHARED), or, with `simulatedNodes` > 0, into that
  // many blocks of consecutive ranks (to test multi-node packing on one box).
  MpiSession(int* argc, char*** argv, int simulatedNodes = 0);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  int nodes() const noexcept { return static_cast<int>(nodeMembers_.size()); }
  // The most ranks one TP group can have: IPC handles never cross a node.
  int largestNode() const noexcept;

  // Runs every job (collective over the world: every process passes the same list). Jobs are
  // packed in rounds onto TP groups formed within each node (first fit, in list order), so
  // several scenarios run at once; a failing or hung group is bounded by its own deadlines and
  // never stops the others. World rank 0 receives each job's record through `onRecord`, round
  // by round. Jobs needing more ranks than `largestNode()` must not be passed. Under --runtime
  // gpu each rank's GPU is local rank mod the node's GPUs in use (LaunchOptions::ranksPerGpu);
  // where ranks share GPUs, a round never puts two TP groups on one GPU (each device-memory check
  // then judges the one group on it), and every process warms its GPU up (context, pools) before
  // the first round, so no process's first use is charged to a scenario. Throws, on every rank,
  // when --ranks-per-gpu needs more GPUs than a node shows. Under the mock with --ranks-per-gpu,
  // the same placement and rounds over mocked GPUs (mock_hip::placeOnGpu).
  // Interrupts (mpirun_child.h): the ranks agree after every round (and before the first) whether
  // any of them has seen one; then every rank stops after that round, and runAll returns its
  // signal (0 when the list ran to its end).
  int runAll(const std::vector<MpiJob>& jobs, const launch::LaunchOptions& options,
             const std::function<void(std::size_t job, model::RunRecord record)>& onRecord);

  // Every process leaves with world rank 0's exit code.
  int agreeExitCode(int code);

 private:
  struct World;
  // Runs this rank's part of a scenario; hands back the communicators of its groups (`comms`)
  // and whether no collective may be pending on them here (`quiet`).
  // --runtime gpu: picks this rank's GPU, says so on stderr, warms it up; throws (on every rank)
  // when the asked sharing needs more GPUs than a node has. The mock: picks its mocked GPU only.
  void placeOnGpus(const launch::LaunchOptions& options);
  // The GPUs a node of `localRanks` ranks uses (the same on every rank once placeOnGpus ran).
  int gpusInUse(int localRanks) const;
  std::string runMember(const model::Scenario& scenario, std::uint64_t seed, int groupRank,
                        MPI_Comm group, const launch::LaunchOptions& options,
                        std::vector<MPI_Comm>& comms, bool& quiet);

  std::unique_ptr<World> world_;
  int rank_ = 0;
  int size_ = 1;
  int node_ = 0;                               // index into nodeMembers_ of this rank's node
  int localRank_ = 0;                          // index of this rank within its node
  std::vector<std::vector<int>> nodeMembers_;  // world ranks of each node, ascending
  int gpuDevice_ = -1;   // gpu, or mock with --ranks-per-gpu: this rank's GPU (set by runAll)
  int gpusInUse_ = 0;    // the same: GPUs of this node in use (the round-robin's modulus)
  int ranksPerGpu_ = 0;  // LaunchOptions::ranksPerGpu
  int visibleGpus_ = 0;  // GPUs world rank 0 sees
};

}  // namespace peerconf::harness::mpirun
