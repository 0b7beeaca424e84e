// ThreadGroup: one rank's view of a ThreadWorld; what it refuses, and that it forwards a rank's
// calls to its world. The world's own behaviour is in thread_world_test.cc, runRanks' in
// run_ranks_test.cc.
#include "thread/thread_group.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "thread_test_support.h"

namespace peerconf::thread {
namespace {

using namespace std::chrono_literals;

using testing::intBytes;

TEST(ThreadGroup, RejectsARankOutsideItsWorldAndNoWorld) {
  auto world = std::make_shared<ThreadWorld>(3);
  EXPECT_THROW(ThreadGroup(world, 3), std::invalid_argument);
  EXPECT_THROW(ThreadGroup(world, -1), std::invalid_argument);
  EXPECT_THROW(ThreadGroup(nullptr, 0), std::invalid_argument);
  const ThreadGroup group(world, 2);
  EXPECT_EQ(group.rank(), 2);
  EXPECT_EQ(group.size(), 3);
  EXPECT_EQ(&group.world(), world.get());
}

TEST(ThreadGroup, ASingleRankCompletesAlone) {
  auto world = std::make_shared<ThreadWorld>(1, 100ms);
  ThreadGroup group(world, 0);
  EXPECT_EQ(group.allReduceMin(5), 5);
  const auto all = group.allGather(intBytes(9));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], intBytes(9));
}

}  // namespace
}  // namespace peerconf::thread
