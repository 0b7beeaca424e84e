// C6 no unread data overwritten on synthetic histories: a clean one passes; a planted overwrite,
// an untrusted acknowledgement or an early zeroing fails, naming rank, slot and epoch.
#include "checkers/no_overwrite.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "dataplane_test_support.h"
#include "layout/layout.h"

namespace peerconf::harness::dataplane {

using model::DataplaneEvent;
using model::DataplaneEventKind;
using model::Property;
using model::Verdict;
using model::Violation;
namespace {

using layout::Layout;
using testing::anyFinding;
using testing::cleanHistory;
using testing::describe;
using testing::findEvent;
using testing::recordOf;

constexpr std::uint32_t kGen = testing::kCleanGeneration;

TEST(NoOverwrite, ACleanHistoryPasses) {
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(cleanHistory()));
  EXPECT_EQ(c6.status, Verdict::Status::kPass) << describe(c6);
  EXPECT_EQ(c6.property, Property::kC6NoOverwrite);
  EXPECT_NE(c6.summary.find("12 pushes replayed"), std::string::npos) << c6.summary;
}

TEST(NoOverwrite, NotApplicableWithoutADataPlane) {
  const auto [without, skipped] = testing::withoutAndSkipped(checkers::checkNoOverwrite);
  EXPECT_EQ(without.status, Verdict::Status::kNotApplicable);
  // A rank that reports a data plane it skipped: asked for and not run, which fails.
  EXPECT_TRUE(skipped.failed());
}

TEST(NoOverwrite, APlantedOverwriteFailsNamingRankSlotAndEpoch) {
  auto results = cleanHistory();
  Layout layout;
  // Rank 0 pushes epoch 5 having seen rank 1 acknowledge only epoch 2: the pair of epoch 3 in
  // slot 1 was still unread.
  findEvent(results[0], DataplaneEventKind::kPush, 5)->aux = layout.tag(kGen, 2);
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6,
                         "rank 0 pushed its pair of epoch 5 (step 5) into slot (1, source 0) "
                         "of rank 1's buffer while its pair of epoch 3 there was unread",
                         0))
      << describe(c6);
}

TEST(NoOverwrite, TrustingAnAcknowledgementTheReaderNeverWroteFails) {
  auto results = cleanHistory();
  Layout layout;
  // Rank 0 trusts an acknowledgement of epoch 6 at step 5: rank 1 had not read epoch 6 (nor
  // written that acknowledgement) — memory left by someone else.
  findEvent(results[0], DataplaneEventKind::kPush, 5)->aux = layout.tag(kGen, 6);
  auto& reads = results[1].history;
  reads.erase(std::remove_if(reads.begin(), reads.end(),
                             [](const DataplaneEvent& e) {
                               return (e.kind == DataplaneEventKind::kRead ||
                                       e.kind == DataplaneEventKind::kAck) &&
                                      e.epoch == 6;
                             }),
              reads.end());
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6, "never wrote", 0)) << describe(c6);
}

TEST(NoOverwrite, ZeroingAPairBeforeReadingItFails) {
  auto results = cleanHistory();
  Layout layout;
  DataplaneEvent zero;
  zero.kind = DataplaneEventKind::kZero;
  zero.peer = 0;
  zero.slot = 0;
  zero.step = 0;
  zero.tag = layout.tag(kGen, 0);  // rank 0's pair of epoch 0, not yet read
  results[1].history.insert(results[1].history.begin(), zero);
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6,
                         "rank 1 zeroed slot (0, source 0) of its buffer over rank 0's pair "
                         "of epoch 0 before reading it",
                         1))
      << describe(c6);
  // Zeroing stale memory (no pair of this run) is harmless.
  results[1].history.front().tag = layout.tag(kGen + 1, 0);
  EXPECT_EQ(checkers::checkNoOverwrite(recordOf(results)).status, Verdict::Status::kPass);
}

TEST(NoOverwrite, InBandFindingsFailEvenWithoutHistory) {
  auto results = cleanHistory();
  for (auto& r : results) {
    r.history.clear();
    r.historySteps = 0;
  }
  results[1].overwrites = 1;
  results[1].findings.push_back({Violation::kOverwrite, 1, 0, 1, 7, 7,
                                 "waiting for rank 0's pair "
                                 "of epoch 7 (step 7) at slot (1, source 0), found ..."});
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6, "in-band: waiting for rank 0's pair of epoch 7", 1)) << describe(c6);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
