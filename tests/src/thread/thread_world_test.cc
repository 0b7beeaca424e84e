// ThreadWorld (thread_world.cc), the rendezvous of ranks as threads, beyond the Group conformance
// suite: argument checks, the results of its collectives, abort (the first wins, naming its rank),
// all-gathers of different sizes, the broken state after a timeout, a protocol violation, deadlines
// read on a SimClock, and the rendezvous rate.
#include "thread/thread_world.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"
#include "sim_clock.h"
#include "thread/run_ranks.h"
#include "thread_test_support.h"

namespace peerconf::thread {
namespace {

using namespace std::chrono_literals;
using testing::contains;
using testing::intBytes;
using testing::runAttached;
using testing::WaitCountingClock;
using SteadyClock = std::chrono::steady_clock;

TEST(ThreadWorld, RejectsBadArguments) {
  EXPECT_THROW(ThreadWorld(0), std::invalid_argument);
  EXPECT_THROW(ThreadWorld(2, -1ms), std::invalid_argument);
  ThreadWorld world(3);
  EXPECT_EQ(world.size(), 3);
  EXPECT_EQ(world.deadline(), kDefaultGroupDeadline);
  EXPECT_FALSE(world.clock().simulated()) << "no clock given: the real one";
  try {
    world.allReduceMin(7, 0);
    ADD_FAILURE() << "rank 7 of a world of 3 was accepted";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.op(), Op::kAllReduce);
    EXPECT_TRUE(contains(e.what(), "outside a world of 3")) << e.what();
  }
}

TEST(ThreadWorld, ReducesToTheMinimumAndGathersByRank) {
  auto world = std::make_shared<ThreadWorld>(3, 30s);
  std::vector<int> minima(3, 0);
  std::vector<std::vector<std::vector<std::byte>>> gathered(3);
  const auto outcomes = runRanks(world, [&](int rank, Group& group) {
    minima[static_cast<std::size_t>(rank)] = group.allReduceMin(10 - rank);
    gathered[static_cast<std::size_t>(rank)] = group.allGather(intBytes(100 + rank));
  });
  ASSERT_TRUE(allOk(outcomes));
  EXPECT_EQ(minima, std::vector<int>({8, 8, 8}));
  const std::vector<std::vector<std::byte>> expected = {intBytes(100), intBytes(101),
                                                        intBytes(102)};
  for (const auto& got : gathered) EXPECT_EQ(got, expected);
}

TEST(ThreadWorld, AllGathersOfDifferentSizesFailOnEveryRankAndTheWorldStaysUsable) {
  auto world = std::make_shared<ThreadWorld>(2, 30s);
  const auto outcomes = runRanks(world, [](int rank, Group& group) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(4 + rank));
    try {
      group.allGather(bytes);
      ADD_FAILURE() << "rank " << rank << " gathered entries of different sizes";
    } catch (const GroupError& e) {
      EXPECT_TRUE(contains(e.what(), "all-gather sizes differ")) << e.what();
      EXPECT_EQ(e.op(), Op::kAllGather);
    }
    if (group.allReduceMin(rank) != 0) throw std::logic_error("wrong minimum after the failure");
  });
  EXPECT_TRUE(allOk(outcomes)) << outcomes[0] << ", " << outcomes[1];
  EXPECT_FALSE(world->aborted());
}

// Rank 1 never calls: whether rank 0 is already waiting or not, the abort fails its call with a
// GroupError naming rank 1 and why; a second abort does not replace the first.
TEST(ThreadWorld, AnAbortFailsPendingAndLaterCallsNamingTheFirstAbortingRank) {
  auto world = std::make_shared<ThreadWorld>(2, 60s);
  std::thread rank0([&] {
    for (int call = 0; call < 2; ++call) {
      try {
        world->allReduceMin(0, 1);
        ADD_FAILURE() << "an all-reduce completed without rank 1";
      } catch (const GroupTimeout&) {
        ADD_FAILURE() << "rank 0 waited for its deadline";
      } catch (const GroupError& e) {
        EXPECT_EQ(e.peer(), 1);
        EXPECT_EQ(e.rank(), 0);
        EXPECT_TRUE(contains(e.what(), "rank 1 aborted the group: rank 1 died")) << e.what();
      }
    }
  });
  world->abort(1, "rank 1 died");
  world->abort(0, "a later abort");
  rank0.join();
  EXPECT_TRUE(world->aborted());
}

TEST(ThreadWorld, AHugeDeadlineWaitsWithoutOverflowing) {
  auto clock = std::make_shared<WaitCountingClock>();
  auto world = std::make_shared<ThreadWorld>(2, std::chrono::milliseconds::max(), clock);
  const auto outcomes = runRanks(world, [&](int rank, Group& group) {
    // Rank 0 waits first, on a deadline at the end of time: an overflow would make it time out
    // at once (or never wait) instead of meeting rank 1.
    if (rank == 1 && !clock->awaitWaiters(1)) throw std::logic_error("rank 0 never waited");
    if (group.allReduceMin(rank) != 0) throw std::logic_error("wrong minimum");
  });
  EXPECT_TRUE(allOk(outcomes)) << outcomes[0] << ", " << outcomes[1];
  // Saturated at the end of time, not wrapped around to some other time.
  EXPECT_EQ(clock->lastDeadline(), peerconf::Clock::TimePoint::max());
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
  const auto start = SteadyClock::now();
  const auto outcomes = runRanks(4, 30s, [](int rank, Group& group) {
    for (int i = 0; i < kRounds; ++i) {
      if (group.allReduceMin(i + rank) != i) throw std::logic_error("wrong minimum");
    }
  });
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  EXPECT_TRUE(allOk(outcomes));
  const double rate = kRounds / seconds;
  RecordProperty("rendezvous_per_second", std::to_string(static_cast<long>(rate)));
  std::printf("%d four-rank rendezvous in %.3f s: %.0f per second\n", kRounds, seconds, rate);
  EXPECT_GT(rate, 2000.0);
}

TEST(ThreadWorldOnSimClock, TimesOutOnSimulatedTimeInstantly) {
  // Rank 1 never calls: rank 0's all-reduce must time out after exactly the deadline (an hour),
  // in simulated time, at once in real time.
  auto clock = std::make_shared<SimClock>(2, 9);
  auto world = std::make_shared<ThreadWorld>(2, std::chrono::hours(1), clock);
  bool threw = false;
  peerconf::Clock::TimePoint at{};
  const auto wallStart = std::chrono::steady_clock::now();
  runAttached(*clock, 2, [&](int id) {
    if (id != 0) return;
    try {
      world->allReduceMin(0, 1);
    } catch (const GroupTimeout&) {
      threw = true;
      at = clock->now();
    }
  });
  EXPECT_TRUE(threw);
  // The deadline counts from the call, which itself costs the clock's call cost.
  EXPECT_EQ(at - peerconf::Clock::TimePoint{},
            peerconf::Clock::Duration(std::chrono::hours(1)) + SimClock::kCallCost);
  EXPECT_LT(std::chrono::steady_clock::now() - wallStart, 10s);
}

// A timeout names the ranks that never arrived in the call, on every rank it wakes.
TEST(ThreadWorldOnSimClock, ATimeoutNamesTheRanksThatDidNotArrive) {
  auto clock = std::make_shared<SimClock>(4, 3);
  auto world = std::make_shared<ThreadWorld>(4, 300ms, clock);
  std::vector<std::vector<int>> missing(4);
  std::vector<std::string> what(4);
  runAttached(*clock, 4, [&](int id) {
    if (id == 1 || id == 3) return;  // never arrive
    try {
      world->allReduceMin(id, 1);
    } catch (const GroupTimeout& e) {
      missing[static_cast<std::size_t>(id)] = e.missing();
      what[static_cast<std::size_t>(id)] = e.what();
    }
  });
  for (int rank : {0, 2}) {
    EXPECT_EQ(missing[static_cast<std::size_t>(rank)], (std::vector<int>{1, 3}));
    EXPECT_TRUE(contains(what[static_cast<std::size_t>(rank)], "(ranks 1, 3 did not arrive)"))
        << what[static_cast<std::size_t>(rank)];
  }
}

TEST(ThreadWorldOnSimClock, CompletesItsCollectives) {
  auto clock = std::make_shared<SimClock>(3, 1);
  auto world = std::make_shared<ThreadWorld>(3, 1s, clock);
  std::vector<int> got(3, -1);
  runAttached(*clock, 3, [&](int id) {
    got[static_cast<std::size_t>(id)] = world->allReduceMin(id, 10 + id);
  });
  EXPECT_EQ(got, std::vector<int>({10, 10, 10}));
  // Nobody waited out a deadline: only the calls' own cost passed.
  EXPECT_LT(clock->now() - peerconf::Clock::TimePoint{}, 10 * SimClock::kCallCost);
}

}  // namespace
}  // namespace peerconf::thread
