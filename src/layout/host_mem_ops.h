// Protocol API: HostMemOps, the protocol's memory operations for host threads and processes over
// mapped memory (the mocked HIP runtime's shared memory): __atomic builtins on the mapped words.
// Lock-free 8-byte atomics work across processes that map the same pages.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "layout/mem_ops.h"

namespace peerconf::layout {

struct HostMemOps {
  static Word loadAcquire(const Word* word) noexcept {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
  }
  static Word loadRelaxed(const Word* word) noexcept {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
  }
  // A release store is what a wait waits for (a tag, an acknowledgement, the abort word): it
  // wakes the ranks of this process blocked on the word (pause below), when there are any (a
  // count the blocked ones keep). The fence pairs with the blocking rank's count: either the
  // store sees the count, or the blocking rank's futex sees the stored word and does not sleep.
  static void storeRelease(Word* word, Word value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&blocked_, __ATOMIC_RELAXED) == 0) return;
    futex(word, FUTEX_WAKE, INT32_MAX, nullptr);
  }
  static void storeRelaxed(Word* word, Word value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
  }
  static void fenceAcquire() noexcept { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
  static void fenceRelease() noexcept { __atomic_thread_fence(__ATOMIC_RELEASE); }
  static void fenceSeqCst() noexcept { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

  // Spin briefly, then block on the word until a store wakes it or kBlockNs pass. Ranks often
  // outnumber cores (8 ranks on 2 cores, or other jobs beside the run), and a peer that is late
  // or descheduled must not be starved by the ranks waiting for it: a rank that yields in a loop
  // gives its time slice to whatever else runs, and under load a data plane of 4,000 steps ran
  // 25 times slower that way (ci/bench/RESULTS.md, "waiting under load"). Blocked, the waiter
  // gives its core to the peer and runs again as soon as the peer's store lands. The futex
  // compares the word's low half (a tag's epoch) with `seen`'s: a store that changes only the
  // high half is seen within kBlockNs, as are the abort word and the deadline, which the caller
  // reads every 64 rounds. Non-private: a rank waits on its own mapping of its buffer while the
  // peer stores through another mapping of the same pages. Ranks that are processes
  // (peersInOtherProcesses) sleep kBlockNs instead: a futex on a shared file mapping costs
  // microseconds a wake, and their stores could not see the other processes' blocked waits anyway.
  static void pause(std::uint32_t spins, const Word* word, Word seen) noexcept {
    if (spins < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      return;
    }
    const timespec block{0, kBlockNs};
    if (word == nullptr || __atomic_load_n(&otherProcesses_, __ATOMIC_RELAXED)) {
      nanosleep(&block, nullptr);
      return;
    }
    __atomic_fetch_add(&blocked_, 1, __ATOMIC_SEQ_CST);
    futex(const_cast<Word*>(word), FUTEX_WAIT, static_cast<std::uint32_t>(seen), &block);
    __atomic_fetch_sub(&blocked_, 1, __ATOMIC_RELAXED);
  }
  static constexpr std::uint32_t kSpins =
      256;  // a few microseconds: a peer on another core answers within them
  static constexpr long kBlockNs = 50000;

  // The ranks are processes that map each other's words (MPI ranks over the mocked runtime's
  // shared segments): a wait sleeps instead of blocking on the word. Set by such a rank before
  // its data plane.
  static void peersInOtherProcesses(bool on) noexcept {
    __atomic_store_n(&otherProcesses_, on, __ATOMIC_RELAXED);
  }

  static std::uint64_t nowNs() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }

 private:
  static inline int blocked_ = 0;  // this process's ranks blocked in pause() now
  static inline bool otherProcesses_ = false;

  // The word's low half on this little-endian host (where a tag keeps its epoch).
  static void futex(Word* word, int op, std::uint32_t value, const timespec* timeout) noexcept {
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
  }
};

PEERCONF_ASSERT_MEM_OPS(HostMemOps);

}  // namespace peerconf::layout
