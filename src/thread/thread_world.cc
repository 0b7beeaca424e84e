// ThreadWorld: generation-counted rendezvous with a deadline, abort and a broken state.
#include "thread/thread_world.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "deadline.h"

namespace peerconf::thread {

ThreadWorld::ThreadWorld(int size, std::chrono::milliseconds deadline, std::shared_ptr<Clock> clock)
    : size_(size),
      deadline_(deadline),
      clock_(clock ? std::move(clock) : std::shared_ptr<Clock>(&realClock(), [](Clock*) {})) {
  if (size < 1) throw std::invalid_argument("ThreadWorld: size must be >= 1");
  if (deadline.count() < 0) throw std::invalid_argument("ThreadWorld: negative deadline");
  values_.resize(static_cast<std::size_t>(size));
  present_.resize(static_cast<std::size_t>(size));
  slots_.resize(static_cast<std::size_t>(size));
}

void ThreadWorld::abort(int rank, std::string why) {
  {
    std::lock_guard lock(mutex_);
    if (aborted_) return;
    aborted_ = true;
    abortRank_ = rank;
    abortWhy_ = std::move(why);
  }
  clock_->notifyAll(cv_);
}

bool ThreadWorld::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

void ThreadWorld::checkRank(int rank, Op op) const {
  if (rank < 0 || rank >= size_) {
    throw GroupError(std::string(opName(op)) + " from rank " + std::to_string(rank) +
                         " outside a world of " + std::to_string(size_),
                     op, rank);
  }
}

void ThreadWorld::throwIfFailed(int rank, Op op) const {
  if (aborted_) {
    throw GroupError(std::string(opName(op)) + " on rank " + std::to_string(rank) +
                         " failed: rank " + std::to_string(abortRank_) +
                         " aborted the group: " + abortWhy_,
                     op, rank, abortRank_);
  }
  if (broken_) {
    throw GroupError(std::string(opName(op)) + " on rank " + std::to_string(rank) +
                         " failed: the group is unusable since rank " +
                         std::to_string(brokenRank_) + " timed out in " +
                         std::string(opName(brokenOp_)),
                     op, rank, brokenRank_);
  }
}

void ThreadWorld::complete() {
  if (op_ == Op::kAllReduce) {
    minResult_ = *std::min_element(values_.begin(), values_.end());
  } else {
    gatherError_.clear();
    gathered_.reset();
    const std::size_t expected = slots_.front().size();
    for (int r = 0; r < size_; ++r) {
      const std::size_t got = slots_[static_cast<std::size_t>(r)].size();
      if (got != expected) {
        gatherError_ = "all-gather sizes differ: rank 0 passed " + std::to_string(expected) +
                       " bytes, rank " + std::to_string(r) + " passed " + std::to_string(got);
        break;
      }
    }
    if (gatherError_.empty()) {
      // The slots are moved out: each rank refills its own slot in the next gather.
      gathered_ = std::make_shared<const Gathered>(std::move(slots_));
      slots_ = Gathered(static_cast<std::size_t>(size_));
    }
  }
  arrived_ = 0;
  std::fill(present_.begin(), present_.end(), false);
  ++generation_;
}

template <typename Deposit>
void ThreadWorld::rendezvous(std::unique_lock<std::mutex>& lock, int rank, Op op,
                             Deposit&& deposit) {
  const Clock::TimePoint deadline = Clock::after(clock_->now(), deadline_);
  throwIfFailed(rank, op);
  if (arrived_ > 0 && op_ != op) {
    const std::string why = "rank " + std::to_string(rank) + " called " + std::string(opName(op)) +
                            " while other ranks are in " + std::string(opName(op_));
    aborted_ = true;
    abortRank_ = rank;
    abortWhy_ = why;
    clock_->notifyAll(cv_);
    throw GroupError(why, op, rank);
  }
  op_ = op;
  deposit();
  present_[static_cast<std::size_t>(rank)] = true;
  const std::uint64_t generation = generation_;
  if (++arrived_ == size_) {
    complete();
    clock_->notifyAll(cv_);
    return;
  }
  clock_->waitUntil(lock, cv_, deadline,
                    [&] { return generation_ != generation || aborted_ || broken_; });
  if (generation_ != generation) return;  // completed, even if a failure followed
  if (aborted_) throwIfFailed(rank, op);
  if (!broken_) {
    broken_ = true;
    brokenRank_ = rank;
    brokenOp_ = op;
    clock_->notifyAll(cv_);
  }
  // Ranks woken by another rank's timeout report the collective's timeout as well, naming the
  // ranks that never arrived in it.
  std::vector<int> missing;
  for (int r = 0; r < size_; ++r) {
    if (!present_[static_cast<std::size_t>(r)]) missing.push_back(r);
  }
  throw GroupTimeout(op, rank, deadlineSeconds(deadline_), std::move(missing));
}

int ThreadWorld::allReduceMin(int rank, int value) {
  checkRank(rank, Op::kAllReduce);
  clock_->point();  // every group call is a scheduling point under simulated time
  std::unique_lock lock(mutex_);
  rendezvous(lock, rank, Op::kAllReduce, [&] { values_[static_cast<std::size_t>(rank)] = value; });
  return minResult_;
}

std::vector<std::vector<std::byte>> ThreadWorld::allGather(int rank,
                                                           std::span<const std::byte> bytes) {
  checkRank(rank, Op::kAllGather);
  clock_->point();
  std::shared_ptr<const Gathered> result;
  {
    std::unique_lock lock(mutex_);
    rendezvous(lock, rank, Op::kAllGather,
               [&] { slots_[static_cast<std::size_t>(rank)].assign(bytes.begin(), bytes.end()); });
    if (!gatherError_.empty()) throw GroupError(gatherError_, Op::kAllGather, rank);
    result = gathered_;
  }
  return *result;  // copied outside the lock
}

}  // namespace peerconf::thread
