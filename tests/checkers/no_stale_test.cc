// C7 no stale acceptance on synthetic histories: a clean one passes; a pair taken with another
// step's tag, one its writer never pushed, or one taken before its writer stored it fails,
// naming rank, slot and epoch.
#include "checkers/no_stale.h"

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
using namespace testing;  // the data-plane test helpers (dataplane_test_support.h)

constexpr std::uint32_t kStaleGen = kCleanGeneration;

TEST(NoStale, ACleanHistoryPasses) {
  const Verdict c7 = checkers::checkNoStale(recordOf(cleanHistory()));
  EXPECT_EQ(c7.status, Verdict::Status::kPass) << describe(c7);
  EXPECT_EQ(c7.property, Property::kC7NoStale);
  EXPECT_NE(c7.summary.find("16 reads replayed"), std::string::npos) << c7.summary;
}

TEST(NoStale, NotApplicableWithoutADataPlane) {
  const auto [without, skipped] = testing::withoutAndSkipped(checkers::checkNoStale);
  EXPECT_EQ(without.status, Verdict::Status::kNotApplicable);
  // A rank that reports a data plane it skipped: asked for and not run, which fails.
  EXPECT_TRUE(skipped.failed());
}

TEST(NoStale, APlantedStaleAcceptanceFailsNamingRankSlotAndEpoch) {
  auto results = cleanHistory();
  Layout layout;
  DataplaneEvent* read = findEvent(results[1], DataplaneEventKind::kRead, 4);
  read->tag = layout.tag(kStaleGen, 2);  // the slot's previous pair taken for epoch 4
  read->aux = read->tag;
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7,
                         "rank 1 took tag(gen 0x00c0ffee, epoch 2) as rank 0's pair of epoch 4 "
                         "(step 4) at slot (0, source 0)",
                         1))
      << describe(c7);
}

TEST(NoStale, APairTakenBeforeItsWriterStoredItFails) {
  auto results = cleanHistory();
  // Right tag, but taken 1 ms before rank 0 stored it: an earlier buffer's pair with this
  // epoch (the no-generation control), or a tag published before its payload.
  findEvent(results[1], DataplaneEventKind::kRead, 3)->tNs =
      findEvent(results[0], DataplaneEventKind::kPush, 3)->tNs - 1'000'000;
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7, "before rank 0 stored that tag", 1)) << describe(c7);

  auto torn = cleanHistory();
  DataplaneEvent* push = findEvent(torn[0], DataplaneEventKind::kPush, 3);
  push->t2Ns = push->tNs + 2'000'000;  // payload complete 2 ms after the tag
  const Verdict c7torn = checkers::checkNoStale(recordOf(torn));
  ASSERT_TRUE(c7torn.failed()) << describe(c7torn);
  EXPECT_TRUE(anyFinding(c7torn, "still storing its payload", 1)) << describe(c7torn);

  // Clocks of different hosts are not compared.
  for (auto& r : results) r.clockDomain = &r == &results[0] ? 1 : 2;
  EXPECT_EQ(checkers::checkNoStale(recordOf(results)).status, Verdict::Status::kPass);
}

TEST(NoStale, APairItsWriterNeverPushedFails) {
  auto results = cleanHistory();
  auto& pushes = results[0].history;
  pushes.erase(std::remove_if(pushes.begin(), pushes.end(),
                              [](const DataplaneEvent& e) {
                                return e.kind == DataplaneEventKind::kPush && e.step == 6;
                              }),
               pushes.end());
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7, "never pushed for that step", 1)) << describe(c7);
}

// An in-band overwrite is C6's, not C7's; an in-band stale pair is C7's even without history.
TEST(NoStale, OnlyInBandStaleFindingsFailIt) {
  auto results = cleanHistory();
  for (auto& r : results) {
    r.history.clear();
    r.historySteps = 0;
  }
  results[1].overwrites = 1;
  results[1].findings.push_back({Violation::kOverwrite, 1, 0, 1, 7, 7, "an overwrite"});
  EXPECT_EQ(checkers::checkNoStale(recordOf(results)).status, Verdict::Status::kPass);
  results[0].stale = 1;
  results[0].findings.push_back({Violation::kStale, 0, 1, 0, 3, 3, "a stale pair at epoch 3"});
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7, "in-band: a stale pair at epoch 3", 0)) << describe(c7);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
