// The PeerBuffer handshake over ThreadGroup and the mocked HIP runtime, 2 to 16 ranks as threads
// of this process (device = rank): success through every peer address, and one rank's open
// failure raising on every rank with nothing left behind.
#include "thread/run_ranks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "group_handshake_checks.h"
#include "mock_hip/control.h"

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
