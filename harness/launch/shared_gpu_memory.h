// SharedGpuMemory: the thread launcher's device-memory check of the mocked GPUs that several ranks
// share (--ranks-per-gpu under the mock). A rank's own check (RankSettle) cannot compare a shared
// GPU's free memory: its siblings allocate and free on it at their own pace, so a baseline or a
// reading mid-run would count a sibling's live buffer as this rank's leak (or hide a leak of the
// same size). Here the whole GPU is read where every rank on it is quiet, before the run's threads
// start and after every one of them has ended, and a drop is charged to the ranks whose own
// devices hold allocations of the run (the per-device figures the mock gives, as a GPU runtime
// gives per-process ones); what no rank's allocation explains goes to the GPU's first rank. Each
// rank's own check still names its device's leftovers one by one (RankSettle::checkHeld).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "backend_factory.h"
#include "model/run_record.h"

namespace peerconf::harness::launch {

class SharedGpuMemory {
 public:
  // The GPU of rank `rank` of `ranks` at `ranksPerGpu` (> 0): rank mod ceil(ranks / ranksPerGpu),
  // the round-robin the MPI launcher gives local ranks on a node's GPUs; with the file's `nodes`
  // (> 1) that round-robin within each node, no GPU spanning two (model::gpuOfRank).
  static int gpuOfRank(int rank, int ranks, int ranksPerGpu, int nodes = 0);

  // Before any rank of the run starts: puts device r (rank r) on its GPU (mock_hip::placeOnGpu),
  // then reads every shared GPU's free memory and what each of its ranks' devices holds.
  SharedGpuMemory(int ranks, int ranksPerGpu, int nodes = 0);

  // Whether the rank's GPU carries other ranks too (then the launcher judges it, not the rank).
  bool shared(int rank) const;

  // Once every rank's thread has ended (none may still allocate): for each shared GPU whose free
  // memory fell over the run, appends the drop to the deviceLeftovers of the ranks that hold it.
  void check(std::vector<model::RankResult>& ranks) const;

 private:
  struct Gpu {
    std::vector<int> ranks;
    std::optional<DeviceMemory> before;
  };
  using Held = std::set<std::pair<std::uint64_t, std::uint64_t>>;  // ptr, generation

  std::vector<int> gpuOf_;        // by rank
  std::map<int, Gpu> gpus_;       // the shared ones, by GPU
  std::vector<Held> heldBefore_;  // by rank: its device's live allocations before the run
};

}  // namespace peerconf::harness::launch
