// The Group conformance suite instantiated for ThreadGroup at 2 to 16 ranks.
#include "thread/thread_group.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "group_conformance.h"
#include "thread/run_ranks.h"

namespace peerconf::testing {
namespace {

GroupHarness threadHarness(int ranks) {
  GroupHarness h;
  h.name = "ranks" + std::to_string(ranks);
  h.ranks = ranks;
  h.run = [ranks](std::chrono::milliseconds deadline, const RankCheck& check) {
    const auto outcomes =
        thread::runRanks(ranks, deadline, [&](int, Group& group) { check(group); });
    ASSERT_EQ(outcomes.size(), static_cast<std::size_t>(ranks));
    for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << outcome;
  };
  h.abort = [](Group& group, const std::string& why) {
    dynamic_cast<thread::ThreadGroup&>(group).world().abort(group.rank(), why);
  };
  h.shortDeadline = std::chrono::milliseconds(200);
  return h;
}

std::vector<GroupHarness> threadHarnesses() {
  std::vector<GroupHarness> all;
  for (int ranks = 2; ranks <= 16; ++ranks) all.push_back(threadHarness(ranks));
  return all;
}

INSTANTIATE_TEST_SUITE_P(Threads, GroupConformance, ::testing::ValuesIn(threadHarnesses()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace peerconf::testing
