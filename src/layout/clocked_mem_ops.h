// Protocol API: ClockedMemOps, the host data plane's memory operations on the calling thread's
// clock (clock.h's threadClock()). Under the real clock they are HostMemOps. Under a simulated
// clock every load and store is a scheduling point (another rank may run first), a pause sleeps a
// short virtual time that grows with the spins (a waiting rank blocks, so that the rank it waits
// for runs, and time passes only once every rank waits), and nowNs() is virtual.
//
// Weak memory on simulated time (as weak as a GPU's, and named): every access goes through the
// run's SimMemory (sim_memory.h), the view machine of the promising semantics without promises,
// RC11's release/acquire/relaxed/seq_cst with the PTX model's scopes. A load may return an older
// value of its word unless something ordered it (an acquire of the release that published the new
// one, an acquire fence after it, a seq_cst fence), so a tag stored relaxed after its payload, or
// read without acquire, may come with the payload's old value: the ordering bugs x86 threads never
// show (layouts `relaxed-tag`, `reader-without-acquire`). Scopes: every other rank is another GPU,
// so a release, acquire or fence of device or block scope orders nothing against the other ranks
// (layout `device-scope-fence`). drain() is this rank's side of a barrier: nothing it has seen or
// written can be read older afterwards. Real time: x86 order, as before.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "clock.h"
#include "layout/host_mem_ops.h"
#include "layout/mem_ops.h"
#include "sim_memory.h"

namespace peerconf::layout {

struct ClockedMemOps {
  using Host = HostMemOps;

  static Word loadAcquire(const Word* word) noexcept { return load(word, true, Scope::kSystem); }
  static Word loadRelaxed(const Word* word) noexcept { return load(word, false, Scope::kSystem); }
  static void storeRelease(Word* word, Word value) noexcept {
    store(word, value, true, Scope::kSystem);
  }
  static void storeRelaxed(Word* word, Word value) noexcept {
    store(word, value, false, Scope::kSystem);
  }
  static void fenceAcquire() noexcept { fence(SimMemory::Fence::kAcquire, Scope::kSystem); }
  static void fenceRelease() noexcept { fence(SimMemory::Fence::kRelease, Scope::kSystem); }
  static void fenceSeqCst() noexcept { fence(SimMemory::Fence::kSeqCst, Scope::kSystem); }
  // Narrower than system scope (a GPU's device or block): on simulated time every other rank is
  // another device, which such an operation orders nothing against (PTX: no synchronization
  // unless each side's scope includes the other): an acquire or release access runs as a relaxed
  // one, a fence as nothing. Real time: the system-scope operation.
  static Word loadAcquireAt(const Word* word, Scope scope) noexcept {
    return load(word, true, scope);
  }
  static void storeReleaseAt(Word* word, Word value, Scope scope) noexcept {
    store(word, value, true, scope);
  }
  static void fenceAcquireAt(Scope scope) noexcept { fence(SimMemory::Fence::kAcquire, scope); }
  static void fenceReleaseAt(Scope scope) noexcept { fence(SimMemory::Fence::kRelease, scope); }
  static void fenceSeqCstAt(Scope scope) noexcept { fence(SimMemory::Fence::kSeqCst, scope); }

  // This rank's side of a barrier (the end of its data plane, before the group barrier that opens
  // it): on simulated time no rank reads what it has seen or written older afterwards. Nothing to
  // do under the real clock.
  static void drain() noexcept {
    int participant = -1;
    if (SimMemory* memory = memoryOf(threadClock(), participant)) memory->publish(participant);
  }

  // Simulated time: from now until closeTap(), what each store of this rank overwrote is appended
  // to `into` (the memory model's word: SimMemory::recordOverwrites), so that the recorder of a
  // store into a slot that is not a push (observer.h's rearming/rearmed) knows what it overwrote
  // with no load of the layout's. False on real time: what a store overwrote is not known there,
  // and C6 judges such a store by the recorded order instead.
  static bool openTap(std::vector<Word>* into) noexcept {
    int participant = -1;
    SimMemory* memory = memoryOf(threadClock(), participant);
    if (memory == nullptr) return false;
    memory->recordOverwrites(participant, into);
    return true;
  }
  static void closeTap() noexcept { openTap(nullptr); }

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

  // The run's simulated memory and the calling thread's participant id in it, or null (real
  // time, or a thread that is not one of the clock's participants): then the host operation runs.
  static SimMemory* memoryOf(Clock& clock, int& participant) noexcept {
    SimMemory* memory = clock.simMemory();
    participant = clock.participant();
    return participant >= 0 ? memory : nullptr;
  }
  // The same after a scheduling point.
  static SimMemory* point(int& participant) noexcept {
    Clock& clock = threadClock();
    SimMemory* memory = memoryOf(clock, participant);
    if (memory != nullptr) clock.point(kMemorySwitchOdds);
    return memory;
  }
  // An acquire or release narrower than system scope orders nothing against the other ranks on
  // simulated time; on real time it runs at system scope.
  static Word load(const Word* word, bool acquire, Scope scope) noexcept {
    int participant = -1;
    if (SimMemory* memory = point(participant)) {
      return memory->load(participant, word, acquire && scope == Scope::kSystem);
    }
    return acquire ? Host::loadAcquire(word) : Host::loadRelaxed(word);
  }
  static void store(Word* word, Word value, bool release, Scope scope) noexcept {
    int participant = -1;
    if (SimMemory* memory = point(participant)) {
      return memory->store(participant, word, value, release && scope == Scope::kSystem);
    }
    if (release) return Host::storeRelease(word, value);
    Host::storeRelaxed(word, value);
  }
  static void fence(SimMemory::Fence kind, Scope scope) noexcept {
    int participant = -1;
    if (SimMemory* memory = point(participant)) {
      if (scope == Scope::kSystem) memory->fence(participant, kind);
      return;
    }
    if (kind == SimMemory::Fence::kAcquire) return Host::fenceAcquire();
    if (kind == SimMemory::Fence::kRelease) return Host::fenceRelease();
    Host::fenceSeqCst();
  }
};

PEERCONF_ASSERT_MEM_OPS(ClockedMemOps);

}  // namespace peerconf::layout
