// Protocol API: ClockedMemOps, the host data plane's memory operations on the calling thread's
// clock (clock.h's threadClock()). Under the real clock they are HostMemOps. Under a simulated
// clock every load and store is a scheduling point (another rank may run first), a pause sleeps a
// short virtual time that grows with the spins (a waiting rank blocks, so that the rank it waits
// for runs, and time passes only once every rank waits), and nowNs() is virtual.
//
// Weak memory on simulated time (as weak as a GPU's): a relaxed store waits in its rank's store
// buffer and becomes visible to the other ranks at a later memory operation of its rank, drawn
// from the run's seed, in any order (a store issued after it may land first); a release store
// first makes every earlier store of its rank visible; a rank's loads see its own pending stores,
// and every load goes to memory in program order (an acquire orders what follows it). Held stores
// keep landing while their rank runs (a waiting rank polls, so they land while it waits), and a
// rank that ends its data plane (drain) makes all of them visible, as a GPU's stores eventually
// land. So a tag stored relaxed after its payload may be seen before the payload: the
// ordering bug x86 threads never show (layout `relaxed-tag`). Scopes (mem_ops.h's Access): a
// release of device or block scope orders nothing against the other ranks, which are other
// devices (layout `device-scope-fence`). Real time: x86 order, as before.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "clock.h"
#include "layout/host_mem_ops.h"
#include "layout/mem_ops.h"

namespace peerconf::layout {

struct ClockedMemOps {
  using Host = HostMemOps;

  static Word loadAcquire(const Word* word) noexcept {
    Word pending = 0;
    if (point() && tBuffer.forward(word, pending)) return pending;
    return Host::loadAcquire(word);
  }
  static Word loadRelaxed(const Word* word) noexcept {
    Word pending = 0;
    if (point() && tBuffer.forward(word, pending)) return pending;
    return Host::loadRelaxed(word);
  }
  static void storeRelease(Word* word, Word value) noexcept {
    if (point()) tBuffer.drainAll();
    Host::storeRelease(word, value);
  }
  static void storeRelaxed(Word* word, Word value) noexcept {
    if (!point()) return Host::storeRelaxed(word, value);
    tBuffer.hold(word, value);
  }
  static void fenceAcquire() noexcept { Host::fenceAcquire(); }
  // A release fence makes every store the rank holds visible before any later one.
  static void fenceRelease() noexcept {
    if (point()) tBuffer.drainAll();
    Host::fenceRelease();
  }
  static void fenceSeqCst() noexcept {
    if (point()) tBuffer.drainAll();
    Host::fenceSeqCst();
  }
  // Narrower than system scope (a GPU's device or block): on simulated time every other rank is
  // another device, which such a release orders nothing against, so the rank's held stores stay
  // held and a release store is held like a relaxed one. Real time: the system-scope operation.
  static void storeReleaseAt(Word* word, Word value, Scope scope) noexcept {
    if (scope == Scope::kSystem || !threadClock().simulated()) return storeRelease(word, value);
    storeRelaxed(word, value);
  }
  static void fenceReleaseAt(Scope scope) noexcept {
    if (scope == Scope::kSystem) return fenceRelease();
    if (!point()) Host::fenceRelease();
  }
  static void fenceSeqCstAt(Scope scope) noexcept {
    if (scope == Scope::kSystem) return fenceSeqCst();
    if (!point()) Host::fenceSeqCst();
  }

  // Makes every store this thread's rank still holds visible (the end of its data plane).
  // Nothing to do under the real clock.
  static void drain() noexcept { tBuffer.drainAll(); }
  // Stores this thread's rank holds back (tests).
  static std::size_t pendingStores() noexcept { return tBuffer.size(); }

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

  // One rank's relaxed stores not yet visible to the others, one entry a word (a later store to
  // the same word replaces the value: the word's own order is kept).
  class StoreBuffer {
   public:
    void hold(Word* word, Word value) {
      for (Pending& p : pending_) {
        if (p.word == word) {
          p.value = value;
          return;
        }
      }
      pending_.push_back(Pending{word, value});
    }
    bool forward(const Word* word, Word& value) const {
      for (const Pending& p : pending_) {
        if (p.word == word) {
          value = p.value;
          return true;
        }
      }
      return false;
    }
    // Each held store lands with chance 1/2 (one bit of a draw from the run's seed each), the
    // ones left keep waiting: stores land out of the order they were issued in.
    void drainSome(Clock& clock) {
      if (pending_.empty()) return;
      std::uint64_t bits = clock.random();
      int left = 64;
      for (std::size_t i = 0; i < pending_.size();) {
        if (left == 0) {
          bits = clock.random();
          left = 64;
        }
        const bool lands = (bits & 1u) != 0;
        bits >>= 1;
        --left;
        if (lands) {
          Host::storeRelaxed(pending_[i].word, pending_[i].value);
          pending_[i] = pending_.back();
          pending_.pop_back();
        } else {
          ++i;
        }
      }
    }
    void drainAll() noexcept {
      for (const Pending& p : pending_) Host::storeRelaxed(p.word, p.value);
      pending_.clear();
    }
    std::size_t size() const noexcept { return pending_.size(); }

   private:
    struct Pending {
      Word* word;
      Word value;
    };
    std::vector<Pending> pending_;
  };
  static inline thread_local StoreBuffer tBuffer;

  // A scheduling point before a memory operation; true on simulated time (weak memory applies),
  // after some of the rank's held stores landed.
  static bool point() noexcept {
    Clock& clock = threadClock();
    if (!clock.simulated()) return false;
    clock.point(kMemorySwitchOdds);
    tBuffer.drainSome(clock);
    return true;
  }
};

PEERCONF_ASSERT_MEM_OPS(ClockedMemOps);

}  // namespace peerconf::layout
