// The buffer's generation (generation.cc): a draw is never 0; generationInUse finds a generation
// in any tag word; agreeGeneration settles on rank 0's candidate, redraws while any rank holds
// it, gives up after maxTries, talks to no group of one rank and passes on what the group throws.
#include "layout/generation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "errors.h"
#include "layout/layout.h"
#include "mock_seams.h"
#include "sim_clock.h"
#include "thread/run_ranks.h"

namespace peerconf {
namespace {

using layout::Layout;
using layout::LayoutKind;
using layout::Word;
using ::testing::_;
using ::testing::Return;
using ::testing::StrictMock;
using ::testing::Throw;
using namespace std::chrono_literals;

std::vector<std::byte> generationBytes(std::uint32_t generation) {
  std::vector<std::byte> out(sizeof generation);
  std::memcpy(out.data(), &generation, sizeof generation);
  return out;
}

// On simulated time a generation comes from the run's seeded stream: the same seed draws the same
// ones (a run replays its tags byte for byte), another seed others; on real time they are random.
std::vector<std::uint32_t> drawnOnSim(std::uint64_t seed) {
  SimClock clock(1, seed);
  ThreadClockScope scope(clock);
  std::vector<std::uint32_t> out;
  for (int i = 0; i < 4; ++i) out.push_back(layout::drawGeneration());
  return out;
}

TEST(DataPlaneGeneration, OnSimulatedTimeTheSeedDrawsIt) {
  const auto first = drawnOnSim(5);
  EXPECT_EQ(drawnOnSim(5), first);
  EXPECT_NE(drawnOnSim(6), first);
  for (const std::uint32_t g : first) EXPECT_NE(g, 0u);
  EXPECT_NE(layout::drawGeneration(), layout::drawGeneration()) << "real time: random";
}

TEST(DataPlaneGeneration, NeverZeroAndRedrawnWhileAnyRankHoldsIt) {
  for (int i = 0; i < 1000; ++i) EXPECT_NE(layout::drawGeneration(), 0u);
  std::vector<std::uint32_t> seen(3, 0);
  std::atomic<int> clashes{0};
  const auto outcomes = thread::runRanks(3, 5s, [&](int rank, Group& group) {
    int asked = 0;
    seen[static_cast<std::size_t>(rank)] = layout::agreeGeneration(&group, [&](std::uint32_t) {
      // Rank 2 claims the first two candidates are in its memory.
      const bool clash = rank == 2 && asked++ < 2;
      if (clash) ++clashes;
      return clash;
    });
  });
  ASSERT_TRUE(thread::allOk(outcomes));
  EXPECT_EQ(clashes.load(), 2);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[1], seen[2]);
}

TEST(DataPlaneGeneration, InUseFindsAGenerationInAnyTagWord) {
  Layout layout;
  layout.ranks = 3;
  std::vector<Word> buffer(layout.words(), 0);
  EXPECT_FALSE(layout::generationInUse(layout, buffer.data(), 77));
  buffer[layout.pairWord(1, 2)] = layout.tag(77, 5);
  EXPECT_TRUE(layout::generationInUse(layout, buffer.data(), 77));
  buffer[layout.pairWord(1, 2)] = 0;
  buffer[layout.ackWord(2)] = layout.tag(77, 5);
  EXPECT_TRUE(layout::generationInUse(layout, buffer.data(), 77));
}

TEST(DataPlaneGeneration, InUseLooksAtTheAbortWordAndEveryChunksTag) {
  Layout layout;
  layout.kind = LayoutKind::kChunkTagged;
  layout.ranks = 2;
  std::vector<Word> buffer(layout.words(), 0);
  buffer[layout.abortWord()] = layout.tag(9, 1);
  EXPECT_TRUE(layout::generationInUse(layout, buffer.data(), 9));
  EXPECT_FALSE(layout::generationInUse(layout, buffer.data(), 10));
  buffer[layout.abortWord()] = 0;
  const int last = layout.chunks() - 1;
  buffer[layout.pairWord(layout.slots() - 1, 1) + layout.chunkTagWord(last)] = layout.tag(10, 3);
  EXPECT_TRUE(layout::generationInUse(layout, buffer.data(), 10));
}

TEST(DataPlaneGeneration, EveryRankTakesRankZerosCandidate) {
  StrictMock<testing::MockGroup> group;
  EXPECT_CALL(group, size()).WillRepeatedly(Return(3));
  EXPECT_CALL(group, allGather(_))
      .WillOnce(Return(std::vector<std::vector<std::byte>>{
          generationBytes(0x1234), generationBytes(0x5555), generationBytes(0x6666)}));
  EXPECT_CALL(group, allReduceMin(1)).WillOnce(Return(1));
  std::uint32_t asked = 0;
  EXPECT_EQ(layout::agreeGeneration(&group,
                                    [&](std::uint32_t g) {
                                      asked = g;
                                      return false;
                                    }),
            0x1234u);
  EXPECT_EQ(asked, 0x1234u) << "a rank asked about another candidate than rank 0's";
}

TEST(DataPlaneGeneration, OneRankDrawsWithoutTheGroupAndGivesUpAfterMaxTries) {
  StrictMock<testing::MockGroup> single;  // any call but size() fails the test
  EXPECT_CALL(single, size()).WillRepeatedly(Return(1));
  EXPECT_NE(layout::agreeGeneration(&single, nullptr), 0u);
  EXPECT_NE(layout::agreeGeneration(nullptr, nullptr), 0u);
  int asked = 0;
  try {
    layout::agreeGeneration(
        nullptr,
        [&](std::uint32_t) {
          ++asked;
          return true;
        },
        3);
    ADD_FAILURE() << "an always-clashing generation was agreed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no unused buffer generation after 3 draws");
  }
  EXPECT_EQ(asked, 3);
}

TEST(DataPlaneGeneration, WhatTheGroupThrowsReachesTheCaller) {
  StrictMock<testing::MockGroup> group;
  EXPECT_CALL(group, size()).WillRepeatedly(Return(2));
  EXPECT_CALL(group, allGather(_)).WillOnce(Throw(GroupTimeout(Op::kAllGather, 1, 0.5)));
  EXPECT_THROW(layout::agreeGeneration(&group, nullptr), GroupTimeout);
}

}  // namespace
}  // namespace peerconf
