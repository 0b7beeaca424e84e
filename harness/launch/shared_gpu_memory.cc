// SharedGpuMemory: a shared mocked GPU's free memory, judged where all its ranks are quiet.
#include "launch/shared_gpu_memory.h"

#include <algorithm>
#include <string>

#include "mock_hip/control.h"

namespace peerconf::harness::launch {

namespace {

std::string rankList(const std::vector<int>& ranks) {
  std::string text;
  for (const int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

}  // namespace

int SharedGpuMemory::gpuOfRank(int rank, int ranks, int ranksPerGpu, int nodes) {
  return model::gpuOfRank(rank, ranks, ranksPerGpu, nodes);
}

SharedGpuMemory::SharedGpuMemory(int ranks, int ranksPerGpu, int nodes)
    : heldBefore_(static_cast<std::size_t>(ranks)) {
  std::map<int, std::vector<int>> members;
  for (int rank = 0; rank < ranks; ++rank) {
    const int gpu = gpuOfRank(rank, ranks, ranksPerGpu, nodes);
    gpuOf_.push_back(gpu);
    mock_hip::placeOnGpu(rank, gpu);
    members[gpu].push_back(rank);
  }
  for (auto& [gpu, onIt] : members) {
    if (onIt.size() < 2) continue;
    for (const int rank : onIt) {
      for (const auto& e : mock_hip::liveAllocations(rank)) {
        heldBefore_[static_cast<std::size_t>(rank)].insert({e.ptr, e.generation});
      }
    }
    Gpu& shared = gpus_[gpu];
    shared.before = deviceMemory(Runtime::kMock, onIt.front());
    shared.ranks = std::move(onIt);
  }
}

bool SharedGpuMemory::shared(int rank) const {
  return gpus_.count(gpuOf_[static_cast<std::size_t>(rank)]) != 0;
}

void SharedGpuMemory::check(std::vector<model::RankResult>& ranks) const {
  for (const auto& [gpu, shared] : gpus_) {
    const std::string what =
        "GPU " + std::to_string(gpu) + " (mocked, shared by ranks " + rankList(shared.ranks) + ")";
    const int first = shared.ranks.front();
    auto leftovers = [&](int rank) -> std::vector<std::string>& {
      return ranks.at(static_cast<std::size_t>(rank)).deviceLeftovers;
    };
    const auto after = deviceMemory(Runtime::kMock, first);
    if (!shared.before || !after) {
      leftovers(first).push_back("hipMemGetInfo failed on " + what +
                                 (shared.before ? " after" : " before") +
                                 " the run: its memory unknown");
      continue;
    }
    if (after->freeBytes >= shared.before->freeBytes) continue;
    const std::size_t drop = shared.before->freeBytes - after->freeBytes;
    const std::string fell = what + "'s free memory (hipMemGetInfo) fell by " +
                             std::to_string(drop) +
                             " bytes over the run, read before any of its ranks started and after "
                             "every one had ended: ";
    std::size_t explained = 0;
    for (const int rank : shared.ranks) {
      std::size_t held = 0;
      for (const auto& e : mock_hip::liveAllocations(rank)) {
        if (heldBefore_[static_cast<std::size_t>(rank)].count({e.ptr, e.generation}) == 0) {
          held += e.size;
        }
      }
      if (held == 0) continue;
      explained += held;
      leftovers(rank).push_back(fell + std::to_string(held) + " bytes of it are rank " +
                                std::to_string(rank) + "'s allocations of the run");
    }
    if (explained < drop) {
      leftovers(first).push_back(fell + std::to_string(drop - explained) +
                                 " bytes of it are no rank's allocation of the run");
    }
  }
}

}  // namespace peerconf::harness::launch
