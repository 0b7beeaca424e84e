// The systematic walk's parts without a run (systematic.h): the chooser's options and the
// depth-first order with its preemption bound, counted on a fixed tree of choices.
#include "explore/systematic.h"

#include <gtest/gtest.h>

#include <vector>

namespace peerconf::harness::explore {
namespace {

// Runs the walk over a program whose every execution makes the same choices: `shape[i]` options
// at choice i, a preemption when `preemptive[i]` and the option is not 0. The executions walked.
int walk(const std::vector<int>& shape, const std::vector<bool>& preemptive, int bound) {
  std::vector<int> prefix;
  int executions = 0;
  for (;;) {
    std::vector<Choice> choices;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const int taken = i < prefix.size() ? prefix[i] : 0;
      choices.push_back(Choice{shape[i], taken, preemptive[i]});
    }
    ++executions;
    if (!nextPrefix(choices, bound, prefix)) return executions;
  }
}

TEST(Systematic, TheWalkRunsEveryExecutionWithinThePreemptionBoundOnce) {
  // Two preemptive choices of 2 options, one free choice of 3: 3 x (1 + 2 + 1) executions in all.
  const std::vector<int> shape = {2, 2, 3};
  const std::vector<bool> preemptive = {true, true, false};
  EXPECT_EQ(walk(shape, preemptive, 0), 3);   // only the free choice
  EXPECT_EQ(walk(shape, preemptive, 1), 9);   // (0,0), (1,0), (0,1)
  EXPECT_EQ(walk(shape, preemptive, 2), 12);  // and (1,1)
  EXPECT_EQ(walk(shape, preemptive, 5), 12);
}

TEST(Systematic, TheChooserPutsTheHolderFirstAndFollowsItsPrefix) {
  PrefixChooser chooser({1, 0, 1});
  EXPECT_EQ(chooser.pick(1, {0, 1, 2}), 0);  // option 1 of [1, 0, 2]: a preemption
  EXPECT_EQ(chooser.pick(2, {0, 1, 2}), 2);  // option 0: the holder goes on
  EXPECT_EQ(chooser.pick(-1, {1, 2}), 2);    // the holder blocked: option 1 of [1, 2]
  EXPECT_EQ(chooser.pick(0, {0, 1}), 0);     // past the prefix: the default
  ASSERT_EQ(chooser.choices().size(), 4u);
  EXPECT_TRUE(chooser.choices()[0].preemptive);
  EXPECT_FALSE(chooser.choices()[2].preemptive);
  EXPECT_FALSE(chooser.diverged());
  PrefixChooser short_({3});
  EXPECT_EQ(short_.pick(0, {0, 1}), 0);  // option 3 of 2: the run did not repeat itself
  EXPECT_TRUE(short_.diverged());
}

// The self-check's recount: a preemption is a switch away from a holder that could go on, read
// from the ranks (not the option index); an older read is a memory choice other than the newest.
TEST(Systematic, TheRecountFindsPreemptionsFromTheRanksRun) {
  PrefixChooser chooser({1, 0, 1, 0, 2});
  chooser.pick(1, {0, 1, 2});  // ran 0 while 1 could go on: a preemption
  chooser.pick(2, {0, 1, 2});  // the holder goes on
  chooser.pick(-1, {1, 2});    // the holder blocked: free
  chooser.choose(3);           // the newest value
  chooser.choose(3);           // an older one
  EXPECT_EQ(preemptionsMade(chooser.choices()), 1);
  EXPECT_EQ(olderReadsMade(chooser.choices()), 1);
  // A chooser whose option 0 were the lowest rank, not the holder, switches at "the default":
  // the recount sees the preemption the option index hides.
  std::vector<Choice> lowestFirst = {Choice{3, 0, true, false, 2, 0}};
  EXPECT_EQ(preemptionsMade(lowestFirst), 1);
}

}  // namespace
}  // namespace peerconf::harness::explore
