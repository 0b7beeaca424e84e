// The memory operations the data-plane protocol is written against. A MemOps type instantiates
// the protocol for one kind of executor: host threads over mapped memory (host_mem_ops.h), or a
// GPU kernel with system-scope atomics (a later issue).
#pragma once

#include <cstdint>

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
#else
#define PEERCONF_MEM_OPS class
#endif

}  // namespace peerconf::layout
