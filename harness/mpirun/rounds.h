// Round packing of the MPI session: which scenario runs on which ranks of which node, round by
// round. Pure (no MPI), so that every process computes the same plan and a test can check it.
#pragma once

#include <cstddef>
#include <vector>

namespace peerconf::harness::mpirun {

// One job of a round: it runs on local ranks [offset, offset + its ranks) of `node`.
struct RoundSlot {
  std::size_t job = 0;  // index into the job list
  int node = 0;         // index into the node list
  int offset = 0;       // the node's first local rank it uses

  bool operator==(const RoundSlot&) const = default;
};

struct RoundPlan {
  std::vector<std::vector<RoundSlot>> rounds;  // in order; none empty
  std::vector<std::size_t> unplaced;           // jobs larger than every node, in list order
};

// Packs jobs needing `ranks[job]` ranks each onto nodes of `nodeSizes[node]` ranks: each round,
// node by node, first fit of the pending jobs in list order onto the node's free ranks (a TP group
// never crosses a node: IPC handles do not). A job that fits no node is never placed.
// `nodeGpus[node]` > 0: the node's local rank r runs on GPU r mod nodeGpus[node] (ranks sharing
// GPUs), and a round puts no two jobs on one GPU of a node; absent or 0: no such limit.
RoundPlan packRounds(const std::vector<int>& ranks, const std::vector<int>& nodeSizes,
                     const std::vector<int>& nodeGpus = {});

}  // namespace peerconf::harness::mpirun
