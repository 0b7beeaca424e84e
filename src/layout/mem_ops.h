// Protocol API: the memory operations a layout is written against. A MemOps type instantiates a
// layout for one kind of executor: host threads over mapped memory (host_mem_ops.h), ranks on the
// harness's clock with simulated weak memory (clocked_mem_ops.h), or a GPU kernel with
// system-scope atomics (src/gpu_kernels/gpu_api.h). A layout may call a MemOps type directly, or
// through Access<M> below, which names every access by its memory order and GPU scope.
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/tag.h"

#if !defined(__CUDACC__) && !defined(__HIPCC__)
#include <concepts>
#endif

namespace peerconf::layout {

// A MemOps type provides these static PEERCONF_HD functions on aligned 64-bit words of local or
// peer memory:
//   Word loadAcquire(const Word*)      later loads and stores stay after it
//   Word loadRelaxed(const Word*)      atomic, unordered
//   void storeRelease(Word*, Word)     earlier loads and stores stay before it (system scope)
//   void storeRelaxed(Word*, Word)     atomic, unordered
//   void fenceAcquire()                earlier loads stay before later loads (the tag re-check)
//   void pause(std::uint32_t spins, const Word* word, Word seen)
//                                      back off inside a wait on `word` (last read as `seen`;
//                                      null: a hold that waits on no word); `spins` counts its
//                                      iterations. A store to `word` may end it early.
//   std::uint64_t nowNs()              a monotonic clock for the waits' deadlines
// and may provide (Access<M> uses them when present, else the nearest stronger operation):
//   void fenceRelease()                earlier loads and stores stay before later stores
//   void fenceSeqCst()                 a full fence
//   Word loadAcquireAt(word, scope), void storeReleaseAt(word, value, scope),
//   void fenceAcquireAt(scope), fenceReleaseAt(scope), fenceSeqCstAt(scope)
//                                      the same at a GPU scope narrower than kSystem, ordering
//                                      only against threads within that scope (else: the
//                                      system-scope operation, which is stronger)
#if !defined(__CUDACC__) && !defined(__HIPCC__)
template <class M>
concept MemOps = requires(Word* word, const Word* cword, Word value, std::uint32_t spins) {
  { M::loadAcquire(cword) } -> std::same_as<Word>;
  { M::loadRelaxed(cword) } -> std::same_as<Word>;
  { M::storeRelease(word, value) } -> std::same_as<void>;
  { M::storeRelaxed(word, value) } -> std::same_as<void>;
  { M::fenceAcquire() } -> std::same_as<void>;
  { M::pause(spins, cword, value) } -> std::same_as<void>;
  { M::nowNs() } -> std::same_as<std::uint64_t>;
};
#define PEERCONF_MEM_OPS ::peerconf::layout::MemOps
// Checks that M is a MemOps type where the concept exists (not under the GPU compilers).
#define PEERCONF_ASSERT_MEM_OPS(M) static_assert(::peerconf::layout::MemOps<M>)
#else
#define PEERCONF_MEM_OPS class
#define PEERCONF_ASSERT_MEM_OPS(M) static_assert(true)
#endif

// Memory orders, as C++ and PTX name them.
enum class Order : std::uint8_t { kRelaxed, kAcquire, kRelease, kAcqRel, kSeqCst };

// GPU scopes: whom an access or fence orders against. Peer memory over NVLink or xGMI is read by
// another device, so what publishes a pair to a peer needs kSystem; kDevice orders only against
// threads of the same GPU, kBlock only against the same thread block.
enum class Scope : std::uint8_t { kBlock, kDevice, kSystem };

PEERCONF_HD constexpr const char* orderName(Order order) {
  switch (order) {
    case Order::kRelaxed:
      return "relaxed";
    case Order::kAcquire:
      return "acquire";
    case Order::kRelease:
      return "release";
    case Order::kAcqRel:
      return "acq_rel";
    case Order::kSeqCst:
      return "seq_cst";
  }
  return "unknown";
}

PEERCONF_HD constexpr const char* scopeName(Scope scope) {
  switch (scope) {
    case Scope::kBlock:
      return "block";
    case Scope::kDevice:
      return "device";
    case Scope::kSystem:
      return "system";
  }
  return "unknown";
}

// Every access a layout makes, named by order and scope: Access<M>::load<Order::kAcquire,
// Scope::kSystem>(word). An order M has no operation for runs as the nearest stronger one (acq_rel
// and seq_cst loads as acquire, stores as release, each followed by a full fence for seq_cst).
// Scopes: simulated time (ClockedMemOps on --clock sim) gives every scope narrower than kSystem
// its meaning for a peer buffer (the PTX model's): every other rank is another device, so such an
// acquire or release synchronizes with none of them and such a fence orders nothing against them.
// The GPUs and real time run every scope as kSystem: stronger than the hardware. Write the scope
// the hardware needs.
template <class M>
struct Access {
  template <Order O, Scope S = Scope::kSystem>
  PEERCONF_HD static Word load(const Word* word) {
    static_assert(O != Order::kRelease, "a load cannot be a release");
    if constexpr (O == Order::kRelaxed) {
      return M::loadRelaxed(word);
    } else if constexpr (S != Scope::kSystem && requires { M::loadAcquireAt(word, S); }) {
      const Word value = M::loadAcquireAt(word, S);
      if constexpr (O == Order::kSeqCst) fence<Order::kSeqCst, S>();
      return value;
    } else {
      const Word value = M::loadAcquire(word);
      if constexpr (O == Order::kSeqCst) fence<Order::kSeqCst, S>();
      return value;
    }
  }

  template <Order O, Scope S = Scope::kSystem>
  PEERCONF_HD static void store(Word* word, Word value) {
    static_assert(O != Order::kAcquire, "a store cannot be an acquire");
    if constexpr (O == Order::kRelaxed) {
      M::storeRelaxed(word, value);
    } else if constexpr (S != Scope::kSystem && requires { M::storeReleaseAt(word, value, S); }) {
      M::storeReleaseAt(word, value, S);
      if constexpr (O == Order::kSeqCst) fence<Order::kSeqCst, S>();
    } else {
      M::storeRelease(word, value);
      if constexpr (O == Order::kSeqCst) fence<Order::kSeqCst, S>();
    }
  }

  template <Order O, Scope S = Scope::kSystem>
  PEERCONF_HD static void fence() {
    if constexpr (O == Order::kAcquire && S != Scope::kSystem &&
                  requires { M::fenceAcquireAt(S); }) {
      M::fenceAcquireAt(S);
    } else if constexpr (O == Order::kAcquire) {
      M::fenceAcquire();
    } else if constexpr (S != Scope::kSystem && O == Order::kRelease &&
                         requires { M::fenceReleaseAt(S); }) {
      M::fenceReleaseAt(S);
    } else if constexpr (S != Scope::kSystem && O != Order::kRelease &&
                         requires { M::fenceSeqCstAt(S); }) {
      M::fenceSeqCstAt(S);
    } else if constexpr (O == Order::kRelease && requires { M::fenceRelease(); }) {
      M::fenceRelease();
    } else if constexpr (requires { M::fenceSeqCst(); }) {
      M::fenceSeqCst();
    } else if constexpr (requires { M::fenceRelease(); }) {
      M::fenceRelease();
      M::fenceAcquire();
    } else {
      static_assert(O == Order::kAcquire, "this MemOps type has no release fence");
    }
  }
};

}  // namespace peerconf::layout
