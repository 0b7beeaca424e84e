// ThreadWorld: the shared rendezvous of an in-process group whose ranks are threads. One world
// serves N ranks; each rank talks to it through its own ThreadGroup.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "clock.h"
#include "errors.h"
#include "group.h"

namespace peerconf::thread {

// Collectives are generation-counted rendezvous under one mutex: every rank deposits its
// contribution in its own slot, the last to arrive computes the result and opens the next
// generation, and the others wake on a condition variable (no polling, no sleeps).
//
// Failure model:
// - A call that does not complete within the world's deadline throws GroupTimeout (naming the
//   ranks that never arrived in it) on the rank whose deadline passed and breaks the world: ranks
//   waiting in that call wake and throw GroupTimeout too, and every later call on any rank throws
//   GroupError (a rendezvous with a missing rank can never be completed correctly).
// - abort() makes every pending and later call on every rank throw GroupError naming the rank
//   that aborted (as `peer()`) and why, so a rank that throws or dies wakes the others.
// - Ranks calling different collectives at the same point is a protocol violation: it aborts the
//   world. All-gathers whose sizes differ fail with GroupError on every rank; the world stays
//   usable.
class ThreadWorld {
 public:
  // A world of `size` ranks (>= 1) whose calls each time out after `deadline`, read on `clock`
  // (null: the real clock). Under a SimClock every rank's thread must be attached to it.
  explicit ThreadWorld(int size, std::chrono::milliseconds deadline = kDefaultGroupDeadline,
                       std::shared_ptr<Clock> clock = nullptr);
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int size() const noexcept { return size_; }
  std::chrono::milliseconds deadline() const noexcept { return deadline_; }
  Clock& clock() const noexcept { return *clock_; }

  // Fails every pending and later call on every rank with GroupError naming `rank` and `why`.
  // The first abort wins; later ones are ignored. Safe to call from any thread, any time.
  void abort(int rank, std::string why);
  // True once abort() was called.
  bool aborted() const;

  // The collectives of rank `rank`; ThreadGroup forwards to these.
  int allReduceMin(int rank, int value);
  std::vector<std::vector<std::byte>> allGather(int rank, std::span<const std::byte> bytes);

 private:
  using Gathered = std::vector<std::vector<std::byte>>;

  // Deposits this rank's contribution (through `deposit`, under the lock), then completes the
  // generation or waits for it. Returns with the lock held and the generation's result valid.
  template <typename Deposit>
  void rendezvous(std::unique_lock<std::mutex>& lock, int rank, Op op, Deposit&& deposit);
  // Throws if the world was aborted or broken (lock held).
  void throwIfFailed(int rank, Op op) const;
  // The last rank to arrive computes the result of the generation (lock held).
  void complete();
  void checkRank(int rank, Op op) const;

  const int size_;
  const std::chrono::milliseconds deadline_;
  const std::shared_ptr<Clock> clock_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;

  // The generation being gathered and how many ranks have arrived in it.
  std::uint64_t generation_ = 0;
  int arrived_ = 0;
  Op op_ = Op::kAllReduce;  // the collective of the current generation (valid when arrived_ > 0)
  std::vector<int> values_;
  std::vector<bool> present_;  // the ranks that arrived in the current generation
  std::vector<std::vector<std::byte>> slots_;

  // The result of the last completed generation. It stays valid until the next generation
  // completes, which needs every rank, so every waiter reads it before it can be overwritten.
  int minResult_ = 0;
  std::shared_ptr<const Gathered> gathered_;
  std::string gatherError_;

  bool aborted_ = false;
  int abortRank_ = kNoPeer;
  std::string abortWhy_;

  bool broken_ = false;  // a rank timed out: no rendezvous can complete any more
  int brokenRank_ = kNoPeer;
  Op brokenOp_ = Op::kAllReduce;
};

}  // namespace peerconf::thread
