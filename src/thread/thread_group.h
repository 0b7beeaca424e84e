// ThreadGroup: one rank's view of a ThreadWorld, the Group seam for ranks run as threads of one
// process (fast property runs, TSan).
#pragma once

#include <memory>

#include "group.h"
#include "thread/thread_world.h"

namespace peerconf::thread {

// One rank of a ThreadWorld. Each rank's thread uses its own ThreadGroup; the world is shared.
// Calls follow the Group contract and the world's failure model (see ThreadWorld).
class ThreadGroup : public Group {
 public:
  // Rank `rank` in [0, world->size()) of `world`; throws std::invalid_argument otherwise.
  ThreadGroup(std::shared_ptr<ThreadWorld> world, int rank);

  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }
  int allReduceMin(int value) override;
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override;

  ThreadWorld& world() const noexcept { return *world_; }

 private:
  std::shared_ptr<ThreadWorld> world_;
  int rank_;
};

}  // namespace peerconf::thread
