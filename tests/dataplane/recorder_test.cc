// The host observer of the protocol (recorder.h): the history kept for the first steps only, every
// failed in-band check a finding on every step, the cap on findings, and a wrong all-reduce sum
// found only where no pair failed.
#include "dataplane/recorder.h"

#include <gtest/gtest.h>

#include "dataplane/driver.h"

namespace peerconf::harness::dataplane {

using model::DataplaneEventKind;
using model::makeLayout;
using model::Result;
using model::Spec;
using model::Violation;
namespace {

using layout::PairCheck;

constexpr std::uint32_t kRecorderGen = 0x1a2b3c4d;

layout::Layout twoRanks() { return makeLayout(Spec{}, 2); }

TEST(Recorder, TheHistoryCoversTheFirstStepsOnly) {
  const layout::Layout l = twoRanks();
  Result result;
  Recorder recorder(0, /*historySteps=*/2, result);
  for (std::uint64_t step = 0; step < 4; ++step) {
    const auto epoch = static_cast<std::uint32_t>(step);
    recorder.pushing(1, step, epoch, 0, 0);
    recorder.payloadStored(1, step);
    recorder.tagStoring(1, step);
    recorder.pushed(1, step, epoch, 0, l.tag(kRecorderGen, epoch));
    const layout::Word tag = l.tag(kRecorderGen, epoch);
    recorder.readPair(1, step, epoch, 0, layout::Taken{tag, tag, tag}, PairCheck::kGenuine);
    recorder.acknowledged(1, step, epoch, tag);
  }
  ASSERT_EQ(result.history.size(), 6u);  // a push, a read and an ack for steps 0 and 1
  EXPECT_EQ(result.history[0].kind, DataplaneEventKind::kPush);
  EXPECT_EQ(result.history[0].peer, 1);
  EXPECT_EQ(result.history[0].tag, l.tag(kRecorderGen, 0));
  EXPECT_LE(result.history[0].t2Ns, result.history[0].tNs);  // payload stored before the tag
  EXPECT_EQ(result.history[1].kind, DataplaneEventKind::kRead);
  EXPECT_EQ(result.history[1].want, l.tag(kRecorderGen, 0));  // the layout's expectation
  EXPECT_EQ(result.history[2].kind, DataplaneEventKind::kAck);
  EXPECT_EQ(result.history[2].tag, l.tag(kRecorderGen, 0));
  EXPECT_EQ(result.history[4].step, 1u);
  EXPECT_TRUE(result.findings.empty());
}

TEST(Recorder, AFailedCheckIsAFindingOnAnyStep) {
  const layout::Layout l = twoRanks();
  Result result;
  Recorder recorder(1, /*historySteps=*/0, result);
  recorder.readPair(
      0, 500, 9, 1,
      layout::Taken{l.tag(kRecorderGen, 7), l.tag(kRecorderGen, 7), l.tag(kRecorderGen, 9)},
      PairCheck::kStaleTag);
  recorder.overwriteSeen(0, 501, 10, 0, l.tag(kRecorderGen, 12));
  EXPECT_TRUE(result.history.empty());
  ASSERT_EQ(result.findings.size(), 2u);
  EXPECT_EQ(result.findings[0].violation, Violation::kStale);
  EXPECT_EQ(result.findings[0].rank, 1);
  EXPECT_EQ(result.findings[0].peer, 0);
  EXPECT_EQ(result.findings[0].step, 500u);
  EXPECT_EQ(result.findings[0].text,
            "accepted tag(gen 0x1a2b3c4d, epoch 7) at slot (1, source 0) epoch 9 (step 500) as "
            "rank 0's pair; this step's is tag(gen 0x1a2b3c4d, epoch 9)");
  EXPECT_EQ(result.findings[1].violation, Violation::kOverwrite);
  EXPECT_EQ(result.findings[1].epoch, 10u);
}

TEST(Recorder, FindingsStopAtTheCap) {
  const layout::Layout l = twoRanks();
  Result result;
  Recorder recorder(0, 0, result);
  for (std::uint64_t step = 0; step < Result::kMaxFindings + 10; ++step) {
    recorder.overwriteSeen(1, step, 0, 0, 0);
  }
  EXPECT_EQ(result.findings.size(), Result::kMaxFindings);
}

TEST(Recorder, AWrongSumIsItsOwnFindingOnlyWhenEveryPairCheckedOut) {
  const layout::Layout l = twoRanks();
  Result result;
  Recorder recorder(0, 0, result);
  recorder.reduced(3, 3, /*right=*/true);
  EXPECT_TRUE(result.findings.empty());
  recorder.reduced(4, 4, /*right=*/false);
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].text,
            "the all-reduce sum of epoch 4 (step 4) is wrong although every pair checked out");
  // A pair of step 5 failed: the wrong sum of step 5 is that pair's finding, not another.
  recorder.readPair(
      1, 5, 5, 0,
      layout::Taken{l.tag(kRecorderGen, 5), l.tag(kRecorderGen, 6), l.tag(kRecorderGen, 5)},
      PairCheck::kOverwritten);
  recorder.reduced(5, 5, /*right=*/false);
  EXPECT_EQ(result.findings.size(), 2u);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
