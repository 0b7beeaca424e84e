// ThreadGroup: forwards one rank's collectives to the shared ThreadWorld.
#include "thread/thread_group.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace peerconf::thread {

ThreadGroup::ThreadGroup(std::shared_ptr<ThreadWorld> world, int rank)
    : world_(std::move(world)), rank_(rank) {
  if (world_ == nullptr) throw std::invalid_argument("ThreadGroup: null world");
  if (rank_ < 0 || rank_ >= world_->size()) {
    throw std::invalid_argument("ThreadGroup: rank " + std::to_string(rank_) +
                                " outside a world of " + std::to_string(world_->size()));
  }
}

int ThreadGroup::allReduceMin(int value) { return world_->allReduceMin(rank_, value); }

std::vector<std::vector<std::byte>> ThreadGroup::allGather(std::span<const std::byte> bytes) {
  return world_->allGather(rank_, bytes);
}

}  // namespace peerconf::thread
