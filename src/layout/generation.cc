// Generation draw and agreement over the Group seam.
#include "layout/generation.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "clock.h"
#include "layout/payload.h"

namespace peerconf::layout {

std::uint32_t drawGeneration() {
  // Simulated time: from the run's seeded stream, so that a seed replays the same tags.
  if (Clock& clock = threadClock(); clock.simulated()) {
    for (;;) {
      const auto generation = static_cast<std::uint32_t>(clock.random());
      if (generation != 0) return generation;
    }
  }
  static std::atomic<std::uint64_t> counter{0};
  std::random_device device;
  const Word entropy =
      (static_cast<Word>(device()) << 32) ^ device() ^
      static_cast<Word>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<Word>(::getpid()) << 17) ^ mix64(counter.fetch_add(1));
  for (Word x = entropy;; x = mix64(x)) {
    const auto generation = static_cast<std::uint32_t>(mix64(x));
    if (generation != 0) return generation;
  }
}

bool generationInUse(const Layout& layout, const Word* buffer, std::uint32_t generation) {
  auto carries = [&](std::size_t word) {
    return tagGeneration(__atomic_load_n(buffer + word, __ATOMIC_RELAXED)) == generation;
  };
  if (carries(layout.abortWord())) return true;
  for (int r = 0; r < layout.ranks; ++r) {
    if (carries(layout.ackWord(r))) return true;
  }
  for (int slot = 0; slot < layout.slots(); ++slot) {
    for (int source = 0; source < layout.ranks; ++source) {
      for (int c = 0; c < layout.chunks(); ++c) {
        if (carries(layout.pairWord(slot, source) + layout.chunkTagWord(c))) return true;
      }
    }
  }
  return false;
}

std::uint32_t agreeGeneration(Group* group, const std::function<bool(std::uint32_t)>& inUse,
                              int maxTries) {
  for (int attempt = 0; attempt < maxTries; ++attempt) {
    std::uint32_t candidate = drawGeneration();
    if (group != nullptr && group->size() > 1) {
      std::vector<std::byte> mine(sizeof candidate);
      std::memcpy(mine.data(), &candidate, sizeof candidate);
      const auto all = group->allGather(mine);
      std::memcpy(&candidate, all.at(0).data(), sizeof candidate);
      const bool free = !inUse || !inUse(candidate);
      if (group->allReduceMin(free ? 1 : 0) == 1) return candidate;
    } else if (!inUse || !inUse(candidate)) {
      return candidate;
    }
  }
  throw std::runtime_error("no unused buffer generation after " + std::to_string(maxTries) +
                           " draws");
}

}  // namespace peerconf::layout
