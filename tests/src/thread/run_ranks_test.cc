// runRanks: every rank's outcome kept and labelled, a throwing rank waking the others, a world
// aborted before the run; and the PeerBuffer handshake over ThreadGroup and the mocked HIP runtime,
// 2 to 16 ranks as threads of this process (device = rank): success through every peer address,
// and one rank's open failure raising on every rank with nothing left behind.
#include "thread/run_ranks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"
#include "group_handshake_checks.h"
#include "mock_hip/control.h"
#include "thread_test_support.h"

namespace peerconf::testing {
namespace {

using namespace std::chrono_literals;

void expectEveryRankOk(const std::vector<thread::RankOutcome>& outcomes, int ranks) {
  ASSERT_EQ(outcomes.size(), static_cast<std::size_t>(ranks));
  for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << outcome;
}

void expectNothingLeft(int ranks) {
  for (int device = 0; device < ranks; ++device) {
    EXPECT_EQ(liveOnDevice(device), "") << "device " << device;
  }
  EXPECT_EQ(leftoverSegments(mock_hip::job(), {static_cast<int>(getpid())}),
            std::vector<std::string>{});
}

class ThreadHandshake : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    mock_hip::clearFaultHooks();
    mock_hip::clearLedgers();
  }
  void TearDown() override { mock_hip::clearFaultHooks(); }
};

TEST_P(ThreadHandshake, EveryRankWritesEveryPeerThroughItsAddresses) {
  const int ranks = GetParam();
  expectEveryRankOk(thread::runRanks(ranks, 30s, [](int, Group& g) { checkHandshakeSucceeds(g); }),
                    ranks);
  expectNothingLeft(ranks);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ThreadHandshake, ::testing::Range(2, 17),
                         [](const auto& info) { return "ranks" + std::to_string(info.param); });

struct OpenFailure {
  int ranks;
  int failingRank;
  int failingPeer;
  int code;  // hipErrorInvalidValue (1) or hipErrorMapFailed (205)
};

void PrintTo(const OpenFailure& f, std::ostream* out) {
  *out << f.ranks << " ranks, rank " << f.failingRank << " fails to open peer " << f.failingPeer
       << " with " << f.code;
}

std::vector<OpenFailure> openFailures() {
  std::vector<OpenFailure> all;
  for (int ranks = 2; ranks <= 16; ++ranks) {
    all.push_back({ranks, ranks - 1, 0, 1});
    all.push_back({ranks, 0, ranks - 1, 205});
    if (ranks >= 3) all.push_back({ranks, ranks / 2, ranks / 2 + 1, 205});
  }
  return all;
}

class ThreadHandshakeFailure : public ::testing::TestWithParam<OpenFailure> {
 protected:
  void SetUp() override {
    mock_hip::clearFaultHooks();
    mock_hip::clearLedgers();
  }
  void TearDown() override { mock_hip::clearFaultHooks(); }
};

TEST_P(ThreadHandshakeFailure, RaisesOnEveryRankAndLeavesNothing) {
  const OpenFailure f = GetParam();
  mock_hip::setFaultHook(f.failingRank, failOpenOf(f.failingPeer, f.code));
  expectEveryRankOk(thread::runRanks(f.ranks, 30s,
                                     [&](int, Group& g) {
                                       checkHandshakeFailsEverywhere(g, f.failingRank,
                                                                     f.failingPeer, f.code);
                                     }),
                    f.ranks);
  expectNothingLeft(f.ranks);
}

INSTANTIATE_TEST_SUITE_P(Cases, ThreadHandshakeFailure, ::testing::ValuesIn(openFailures()),
                         [](const auto& info) {
                           const OpenFailure& f = info.param;
                           return "ranks" + std::to_string(f.ranks) + "_rank" +
                                  std::to_string(f.failingRank) + "_opens" +
                                  std::to_string(f.failingPeer) + "_error" + std::to_string(f.code);
                         });

}  // namespace
}  // namespace peerconf::testing

namespace peerconf::thread {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

using testing::contains;
using testing::intBytes;
using testing::WaitCountingClock;

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
  const auto start = SteadyClock::now();
  auto clock = std::make_shared<WaitCountingClock>();
  auto world = std::make_shared<ThreadWorld>(4, 60s, clock);
  const auto outcomes = runRanks(world, [&](int rank, Group& group) {
    if (rank == 2) {
      // The other three are blocked in the gather.
      if (!clock->awaitWaiters(3)) throw std::logic_error("the others never blocked");
      throw std::runtime_error("rank 2 died");
    }
    group.allGather(intBytes(rank));
  });
  EXPECT_LT(SteadyClock::now() - start, 5s);
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

}  // namespace
}  // namespace peerconf::thread
