// Round packing: first fit, node by node, round by round.
#include "mpirun/rounds.h"

namespace peerconf::harness {

RoundPlan packRounds(const std::vector<int>& ranks, const std::vector<int>& nodeSizes) {
  RoundPlan plan;
  std::vector<std::size_t> pending(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    std::vector<RoundSlot> round;
    for (std::size_t node = 0; node < nodeSizes.size(); ++node) {
      int free = nodeSizes[node];
      for (auto it = pending.begin(); it != pending.end();) {
        const int need = ranks[*it];
        if (need <= free) {
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

}  // namespace peerconf::harness
