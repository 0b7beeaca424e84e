// HostMemOps: the protocol's memory operations for host threads and processes over mapped
// memory (the mocked HIP runtime's shared memory): __atomic builtins on the mapped words.
// Lock-free 8-byte atomics work across processes that map the same pages.
#pragma once

#include <sched.h>
#include <time.h>

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
  static void storeRelease(Word* word, Word value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
  }
  static void storeRelaxed(Word* word, Word value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
  }
  static void fenceAcquire() noexcept { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

  // Spin briefly, then yield, then sleep: ranks often outnumber cores (8 ranks on 2 cores), and
  // a peer that is late by design must not be starved by the ranks waiting for it.
  static void pause(std::uint32_t spins) noexcept {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
    } else if (spins < (1u << 14)) {
      sched_yield();
    } else {
      const timespec nap{0, 20000};
      nanosleep(&nap, nullptr);
    }
  }

  static std::uint64_t nowNs() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }
};

static_assert(MemOps<HostMemOps>);

}  // namespace peerconf::layout
