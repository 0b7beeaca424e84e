// Round packing: first fit, node by node, round by round.
#include "mpirun/rounds.h"

#include <set>

namespace peerconf::harness::mpirun {

RoundPlan packRounds(const std::vector<int>& ranks, const std::vector<int>& nodeSizes,
                     const std::vector<int>& nodeGpus) {
  RoundPlan plan;
  std::vector<std::size_t> pending(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    std::vector<RoundSlot> round;
    for (std::size_t node = 0; node < nodeSizes.size(); ++node) {
      int free = nodeSizes[node];
      const int gpus = node < nodeGpus.size() ? nodeGpus[node] : 0;
      std::set<int> busy;  // the node's GPUs a job of this round runs on
      // Whether a job of `need` ranks at the node's next free rank shares no GPU with another.
      auto ownGpus = [&](int need) {
        if (gpus <= 0) return true;
        const int offset = nodeSizes[node] - free;
        for (int r = offset; r < offset + need; ++r) {
          if (busy.count(r % gpus) != 0) return false;
        }
        return true;
      };
      for (auto it = pending.begin(); it != pending.end();) {
        const int need = ranks[*it];
        if (need <= free && ownGpus(need)) {
          const int offset = nodeSizes[node] - free;
          for (int r = offset; r < offset + need; ++r) {
            if (gpus > 0) busy.insert(r % gpus);
          }
          round.push_back({*it, static_cast<int>(node), nodeSizes[node] - free});
          free -= need;
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (round.empty()) break;  // what is left fits no node
    plan.rounds.push_back(std::move(round));
  }
  plan.unplaced = std::move(pending);
  return plan;
}

}  // namespace peerconf::harness::mpirun
