// ThreadWorld, ThreadGroup and runRanks beyond the Group conformance suite: every rank's outcome
// kept, a throwing rank waking the others, the broken state after a timeout, argument checks,
// and the rendezvous rate.
#include "thread/thread_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "errors.h"
#include "thread/run_ranks.h"

namespace peerconf::thread {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::vector<std::byte> intBytes(int value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ThreadWorld, RejectsBadArguments) {
  EXPECT_THROW(ThreadWorld(0), std::invalid_argument);
  EXPECT_THROW(ThreadWorld(2, -1ms), std::invalid_argument);
  auto world = std::make_shared<ThreadWorld>(3);
  EXPECT_THROW(ThreadGroup(world, 3), std::invalid_argument);
  EXPECT_THROW(ThreadGroup(world, -1), std::invalid_argument);
  EXPECT_THROW(ThreadGroup(nullptr, 0), std::invalid_argument);
  EXPECT_THROW(world->allReduceMin(7, 0), GroupError);
}

TEST(ThreadWorld, ASingleRankCompletesAlone) {
  auto world = std::make_shared<ThreadWorld>(1, 100ms);
  ThreadGroup group(world, 0);
  EXPECT_EQ(group.allReduceMin(5), 5);
  const auto all = group.allGather(intBytes(9));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], intBytes(9));
}

TEST(ThreadWorld, AHugeDeadlineWaitsWithoutOverflowing) {
  std::atomic<bool> firstWaiting{false};
  const auto outcomes = runRanks(2, std::chrono::milliseconds::max(), [&](int rank, Group& group) {
    if (rank == 1) {
      // Let rank 0 wait first, on a deadline at the end of time.
      while (!firstWaiting.load()) std::this_thread::yield();
      std::this_thread::sleep_for(20ms);
    } else {
      firstWaiting.store(true);
    }
    if (group.allReduceMin(rank) != 0) throw std::logic_error("wrong minimum");
  });
  EXPECT_TRUE(allOk(outcomes)) << outcomes[0] << ", " << outcomes[1];
}

TEST(RunRanks, ReportsEveryRanksOutcomeLabelledByRank) {
  // Ranks 1 and 3 throw their own errors; the others block in a collective and are woken by the
  // first abort. Every outcome is kept, not only the first error.
  const auto outcomes = runRanks(5, 30s, [](int rank, Group& group) {
    if (rank == 1) throw std::runtime_error("rank one's own failure");
    if (rank == 3) throw std::logic_error("rank three's own failure");
    group.allReduceMin(rank);
  });
  ASSERT_EQ(outcomes.size(), 5u);
  for (int r = 0; r < 5; ++r) EXPECT_EQ(outcomes[static_cast<std::size_t>(r)].rank, r);
  EXPECT_FALSE(allOk(outcomes));
  EXPECT_EQ(outcomes[1].message, "rank one's own failure");
  EXPECT_EQ(outcomes[3].message, "rank three's own failure");
  EXPECT_THROW(std::rethrow_exception(outcomes[1].error), std::runtime_error);
  EXPECT_THROW(std::rethrow_exception(outcomes[3].error), std::logic_error);
  for (const int r : {0, 2, 4}) {
    const RankOutcome& o = outcomes[static_cast<std::size_t>(r)];
    ASSERT_FALSE(o.ok()) << o;
    try {
      std::rethrow_exception(o.error);
    } catch (const GroupTimeout& e) {
      ADD_FAILURE() << "rank " << r << " waited for its deadline: " << e.what();
    } catch (const GroupError& e) {
      EXPECT_EQ(e.rank(), r);
      EXPECT_TRUE(e.peer() == 1 || e.peer() == 3) << e.what();
      EXPECT_TRUE(contains(e.what(), "own failure")) << e.what();
    }
  }
  std::ostringstream printed;
  printed << outcomes[1];
  EXPECT_EQ(printed.str(), "rank 1: rank one's own failure");
}

TEST(RunRanks, AThrowingRankWakesBlockedRanksLongBeforeTheDeadline) {
  const auto start = Clock::now();
  std::atomic<int> blocked{0};
  const auto outcomes = runRanks(4, 60s, [&](int rank, Group& group) {
    if (rank == 2) {
      // Wait until the others are about to block (they may not have entered the wait yet).
      while (blocked.load() < 3) std::this_thread::yield();
      std::this_thread::sleep_for(10ms);
      throw std::runtime_error("rank 2 died");
    }
    blocked.fetch_add(1);
    group.allGather(intBytes(rank));
  });
  EXPECT_LT(Clock::now() - start, 5s);
  for (const int r : {0, 1, 3}) {
    const RankOutcome& o = outcomes[static_cast<std::size_t>(r)];
    EXPECT_TRUE(contains(o.message, "rank 2 aborted the group")) << o;
    EXPECT_TRUE(contains(o.message, "rank 2 died")) << o;
  }
  EXPECT_EQ(outcomes[2].message, "rank 2 died");
}

TEST(RunRanks, AllOkWhenEveryBodyReturns) {
  const auto outcomes = runRanks(3, 5s, [](int rank, Group& group) {
    EXPECT_EQ(group.rank(), rank);
    EXPECT_EQ(group.allReduceMin(rank + 10), 10);
  });
  EXPECT_TRUE(allOk(outcomes));
  for (const auto& o : outcomes) EXPECT_TRUE(o.message.empty()) << o;
}

TEST(RunRanks, AWorldAbortedBeforeTheRunFailsEveryCall) {
  auto world = std::make_shared<ThreadWorld>(3, 30s);
  world->abort(1, "stopped before the start");
  EXPECT_TRUE(world->aborted());
  const auto outcomes = runRanks(world, [](int rank, Group& group) { group.allReduceMin(rank); });
  for (const auto& o : outcomes) EXPECT_TRUE(contains(o.message, "stopped before the start")) << o;
}

TEST(ThreadWorld, ATimeoutBreaksTheWorldForEveryRank) {
  auto world = std::make_shared<ThreadWorld>(3, 100ms);
  std::atomic<int> timedOut{0};
  const auto outcomes = runRanks(world, [&](int rank, Group& group) {
    if (rank != 2) {
      EXPECT_THROW(group.allReduceMin(rank), GroupTimeout);
      timedOut.fetch_add(1);
    } else {
      while (timedOut.load() < 2) std::this_thread::yield();
    }
    // Rank 2 arrives after the others gave up: it must not complete a rendezvous with them.
    try {
      group.allReduceMin(rank);
      ADD_FAILURE() << "rank " << rank << " completed a rendezvous on a broken world";
    } catch (const GroupTimeout&) {
      ADD_FAILURE() << "rank " << rank << " waited instead of failing at once";
    } catch (const GroupError& e) {
      EXPECT_TRUE(contains(e.what(), "timed out")) << e.what();
    }
  });
  EXPECT_TRUE(allOk(outcomes));
}

TEST(ThreadWorld, DifferentCollectivesAtTheSamePointAbortTheWorld) {
  const auto outcomes = runRanks(2, 30s, [](int rank, Group& group) {
    if (rank == 0) {
      group.allReduceMin(0);
    } else {
      group.allGather(intBytes(1));
    }
  });
  for (const auto& o : outcomes) {
    EXPECT_FALSE(o.ok());
    EXPECT_TRUE(contains(o.message, "while other ranks are in")) << o;
  }
}

TEST(ThreadWorld, ThousandsOfFourRankRendezvousPerSecond) {
  constexpr int kRounds = 5000;
  const auto start = Clock::now();
  const auto outcomes = runRanks(4, 30s, [](int rank, Group& group) {
    for (int i = 0; i < kRounds; ++i) {
      if (group.allReduceMin(i + rank) != i) throw std::logic_error("wrong minimum");
    }
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(allOk(outcomes));
  const double rate = kRounds / seconds;
  RecordProperty("rendezvous_per_second", std::to_string(static_cast<long>(rate)));
  std::printf("%d four-rank rendezvous in %.3f s: %.0f per second\n", kRounds, seconds, rate);
  EXPECT_GT(rate, 2000.0);
}

}  // namespace
}  // namespace peerconf::thread
