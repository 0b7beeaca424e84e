// The host driver of the data plane (driver.h), its own functions: the layout a spec names, the
// checks before any group call (unknown layout, buffer too small), what a run describes, a
// two-rank run and a planned stop, the closing barrier's failure, the prefills, the generation of
// an earlier buffer and the clock domain. The protocol itself is tested in
// tests/src/layout/protocol_test.cc through this driver.
#include "dataplane/driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "dataplane_test_support.h"
#include "layout/rank_base.h"
#include "layout/tag.h"
#include "mock_seams.h"

namespace peerconf::harness::dataplane {

using model::DataplaneOutcome;
using model::makeLayout;
using model::Prefill;
using model::Result;
using model::Spec;
using model::Stop;
namespace {

using namespace std::chrono_literals;

TEST(DataPlaneDriver, ALayoutThatCannotRunIsAnErrorBeforeAnyGroupCall) {
  Spec spec;
  Result result;
  layout::Shape shape;
  const layout::Engine* engine = startLayout(spec, 2, 1 << 20, result, shape);
  ASSERT_NE(engine, nullptr);
  EXPECT_GT(result.slots, 0);
  const std::size_t needs = engine->bytes(shape);
  EXPECT_EQ(needs, makeLayout(spec, 2).bytes());

  Result small;
  EXPECT_EQ(startLayout(spec, 2, 64, small, shape), nullptr);
  EXPECT_EQ(small.outcome, DataplaneOutcome::kError);
  EXPECT_EQ(small.detail, "layout reference needs " + std::to_string(needs) +
                              " bytes for 2 ranks, the buffer has 64");

  spec.layout = "no-such-layout";
  Result unknown;
  EXPECT_EQ(startLayout(spec, 2, 1 << 20, unknown, shape), nullptr);
  EXPECT_EQ(unknown.outcome, DataplaneOutcome::kError);
  EXPECT_EQ(unknown.detail, "unknown layout 'no-such-layout'");
}

TEST(DataPlaneDriver, ARunDescribesWhatRunsBeforeItStarts) {
  Spec spec;
  spec.steps = 100;
  spec.history = 1024;
  spec.startEpoch = 7;
  Result result;
  describeRun(spec, 4, 250ms, result);
  EXPECT_EQ(result.layout, "reference");
  EXPECT_EQ(result.workload, "exchange");
  EXPECT_EQ(result.ranks, 4);
  EXPECT_EQ(result.depth, spec.depth);
  EXPECT_EQ(result.payloadWords, spec.payload);
  EXPECT_EQ(result.startEpoch, 7u);
  EXPECT_EQ(result.stepsPlanned, 100u);
  EXPECT_EQ(result.timeoutNs, 250'000'000);
  EXPECT_EQ(result.historySteps, 100u);  // never more than the steps
  EXPECT_EQ(result.clockDomain, clockDomain());
  EXPECT_NE(clockDomain(), 0u);
}

TEST(DataPlaneDriver, TwoRanksCompleteEveryStepUnderOneGeneration) {
  Spec spec;
  spec.steps = 50;
  const auto run = testing::runOnThreads(spec, 2);
  ASSERT_TRUE(run.errors.empty());
  ASSERT_EQ(run.results.size(), 2u);
  for (const Result& r : run.results) {
    EXPECT_EQ(r.outcome, DataplaneOutcome::kCompleted) << r.detail;
    EXPECT_EQ(r.stepsDone, 50u);
    EXPECT_NE(r.generation, 0u);
  }
  EXPECT_EQ(run.results[0].generation, run.results[1].generation);
}

TEST(DataPlaneDriver, APlannedStopEndsTheRankWhereItWasPlanned) {
  Spec spec;
  spec.steps = 50;
  spec.stop = Stop{1, 10};
  const auto run = testing::runOnThreads(spec, 2, 300ms);
  ASSERT_EQ(run.results.size(), 2u);
  EXPECT_EQ(run.results[1].outcome, DataplaneOutcome::kStopped);
  EXPECT_EQ(run.results[1].detail, stopDetail(1, 10));
  EXPECT_EQ(stopDetail(1, 10), "rank 1 stopped at step 10 as planned");
  EXPECT_NE(run.results[0].outcome, DataplaneOutcome::kCompleted);  // its peer is gone
}

TEST(DataPlaneDriver, AClosingBarrierThatFailsTurnsACompletedRunIntoAnError) {
  Result alone;
  alone.outcome = DataplaneOutcome::kCompleted;
  closingBarrier(nullptr, alone);  // no group: nothing to wait for
  EXPECT_EQ(alone.outcome, DataplaneOutcome::kCompleted);
  EXPECT_TRUE(alone.detail.empty());

  ::testing::NiceMock<peerconf::testing::MockGroup> group;
  EXPECT_CALL(group, allReduceMin(1)).WillOnce(::testing::Throw(std::runtime_error("peer left")));
  Result result;
  result.outcome = DataplaneOutcome::kCompleted;
  closingBarrier(&group, result);
  EXPECT_EQ(result.outcome, DataplaneOutcome::kError);
  EXPECT_EQ(result.detail, "the closing barrier failed: peer left");

  EXPECT_CALL(group, allReduceMin(1)).WillOnce(::testing::Throw(std::runtime_error("again")));
  Result stopped;
  stopped.outcome = DataplaneOutcome::kStopped;
  stopped.detail = "rank 0 stopped";
  closingBarrier(&group, stopped);
  EXPECT_EQ(stopped.outcome, DataplaneOutcome::kStopped);  // only a completed run becomes an error
  EXPECT_EQ(stopped.detail, "rank 0 stopped; the closing barrier failed: again");
}

TEST(DataPlaneDriver, AnEarlierGenerationIsAnotherOneAndNeverZero) {
  for (const std::uint32_t g : {1u, 0x00c0ffeeu, 0xffffffffu}) {
    EXPECT_NE(earlierGeneration(g), g);
    EXPECT_NE(earlierGeneration(g), 0u);
  }
  EXPECT_EQ(earlierGeneration(0x5bd1e995u), 1u);  // the one generation that would give 0
}

TEST(DataPlaneDriver, APrefillWritesOnlyWhenTheSpecAsksForOne) {
  Spec spec;
  const layout::Layout l = makeLayout(spec, 2);
  const layout::Engine& engine = *layout::findLayout("reference")->engine;
  const layout::Shape shape = model::shapeOf(spec, 2);
  std::vector<layout::Word> none(l.words(), 0);
  prefill(spec, engine, shape, 0, none.data(), 0x1234);
  EXPECT_EQ(none, std::vector<layout::Word>(l.words(), 0));
  for (const Prefill kind : {Prefill::kStaleEpochs, Prefill::kEarlierBuffer}) {
    spec.prefill = kind;
    std::vector<layout::Word> buffer(l.words(), 0);
    prefill(spec, engine, shape, 0, buffer.data(), 0x1234);
    EXPECT_NE(buffer, std::vector<layout::Word>(l.words(), 0)) << toString(kind);
    EXPECT_EQ(buffer[layout::kAbortWord], 0u) << toString(kind);  // no abort word left
  }
}

// earlier-abort: what earlier-buffer leaves, and that life's abort word in word 0: the earlier
// generation, the abort bit and the rank that gave up (the next one), never this run's generation.
TEST(DataPlaneDriver, AnEarlierAbortLeavesTheEarlierLifesAbortWordBesideItsPairs) {
  Spec spec;
  const layout::Layout l = makeLayout(spec, 3);
  const layout::Engine& engine = *layout::findLayout("reference")->engine;
  const layout::Shape shape = model::shapeOf(spec, 3);
  std::vector<layout::Word> earlier(l.words(), 0);
  spec.prefill = Prefill::kEarlierBuffer;
  prefill(spec, engine, shape, 1, earlier.data(), 0x1234);
  std::vector<layout::Word> aborted(l.words(), 0);
  spec.prefill = Prefill::kEarlierAbort;
  prefill(spec, engine, shape, 1, aborted.data(), 0x1234);
  const layout::Word word = aborted[layout::kAbortWord];
  EXPECT_EQ(layout::tagGeneration(word), earlierGeneration(0x1234));
  EXPECT_EQ(layout::tagEpoch(word), layout::kAbortBit | 2u);
  aborted[layout::kAbortWord] = 0;
  EXPECT_EQ(aborted, earlier);  // everything else is earlier-buffer's
}

}  // namespace
}  // namespace peerconf::harness::dataplane
