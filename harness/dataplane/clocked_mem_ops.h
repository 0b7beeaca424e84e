// ClockedMemOps: the host data plane's memory operations on the calling thread's clock
// (clock.h's threadClock()). Under the real clock they are HostMemOps. Under a simulated clock
// every load and store is a scheduling point (another rank may run first), a pause sleeps a short
// virtual time that grows with the spins (a waiting rank blocks, so that the rank it waits for
// runs, and time passes only once every rank waits), and nowNs() is virtual.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "clock.h"
#include "layout/host_mem_ops.h"
#include "layout/mem_ops.h"

namespace peerconf::harness::dataplane {

struct ClockedMemOps {
  using Host = layout::HostMemOps;
  using Word = layout::Word;

  static Word loadAcquire(const Word* word) noexcept {
    point();
    return Host::loadAcquire(word);
  }
  static Word loadRelaxed(const Word* word) noexcept {
    point();
    return Host::loadRelaxed(word);
  }
  static void storeRelease(Word* word, Word value) noexcept {
    point();
    Host::storeRelease(word, value);
  }
  static void storeRelaxed(Word* word, Word value) noexcept {
    point();
    Host::storeRelaxed(word, value);
  }
  static void fenceAcquire() noexcept { Host::fenceAcquire(); }

  // Virtual pauses: 1 us on the first spin, growing by 1 us a spin up to 1 ms, so that a bounded
  // wait of a second costs about 1,500 turns of its rank.
  static void pause(std::uint32_t spins, const Word* word, Word seen) noexcept {
    Clock& clock = threadClock();
    if (!clock.simulated()) return Host::pause(spins, word, seen);
    clock.sleepFor(std::chrono::microseconds(std::clamp<std::uint32_t>(spins, 1, 1000)));
  }

  static std::uint64_t nowNs() noexcept {
    Clock& clock = threadClock();
    if (!clock.simulated()) return Host::nowNs();
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock.now().time_since_epoch())
            .count());
  }

 private:
  // A memory operation passes the turn 1 time in 32 (a seam call: 1 in 4): a data plane runs
  // thousands of them, and every handoff costs a thread switch.
  static constexpr unsigned kMemorySwitchOdds = 32;
  static void point() noexcept {
    Clock& clock = threadClock();
    if (clock.simulated()) clock.point(kMemorySwitchOdds);
  }
};

static_assert(layout::MemOps<ClockedMemOps>);

}  // namespace peerconf::harness::dataplane
