// Layout names (layout_names.cc): every layout named once, the reference first, names read back
// to their kind, unknown names refused, which layouts are the shipped negative controls, and the
// text of a tag and a slot.
#include "layout/layout_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "layout/layout.h"
#include "layout/tag.h"

namespace peerconf::layout {
namespace {

TEST(LayoutNames, EveryLayoutIsNamedOnceTheReferenceFirstAndEachNameReadsBack) {
  const std::vector<std::string> names = layoutNames();
  // Every kind layoutName (layout.h) knows is in the table: the values below 256 with a name.
  std::size_t kinds = 0;
  for (int k = 0; k < 256; ++k) {
    if (std::string(layoutName(static_cast<LayoutKind>(k))) != "unknown") ++kinds;
  }
  ASSERT_EQ(kinds, 15u);
  ASSERT_EQ(names.size(), kinds);
  EXPECT_EQ(names.front(), "reference");
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const std::string& name : names) {
    const auto kind = layoutKindFromName(name);
    ASSERT_TRUE(kind.has_value()) << name;
    EXPECT_EQ(layoutName(*kind), name);
  }
}

TEST(LayoutNames, TagsAndSlotsAreNamedAsTheFindingsSayThem) {
  EXPECT_EQ(describeTag(makeTag(0x1a2b3c4du, 17)), "tag(gen 0x1a2b3c4d, epoch 17)");
  EXPECT_EQ(describeSlot(1, 2), "slot (1, source 2)");
}

TEST(LayoutNames, AnUnknownNameHasNoKind) {
  EXPECT_FALSE(layoutKindFromName("").has_value());
  EXPECT_FALSE(layoutKindFromName("Reference").has_value()) << "names are case-sensitive";
  EXPECT_FALSE(layoutKindFromName("reference ").has_value());
  EXPECT_FALSE(layoutKindFromName("no-such-layout").has_value());
}

TEST(LayoutNames, OnlyTheReferenceAndChunkTaggedLayoutsAreNotNegativeControls) {
  int controls = 0;
  for (const std::string& name : layoutNames()) {
    if (isNegativeControl(*layoutKindFromName(name))) ++controls;
  }
  EXPECT_EQ(controls, static_cast<int>(layoutNames().size()) - 2);
  EXPECT_FALSE(isNegativeControl(LayoutKind::kReference));
  EXPECT_FALSE(isNegativeControl(LayoutKind::kChunkTagged));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kSingleBuffer));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kChunkTagBeforePayload));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kRelaxedTag));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kWaitNamesSelf));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kAckBeforeRead));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kDeviceScopeFence));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kReaderWithoutAcquire));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kRearmBeforeRead));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kEpochSignedGe));
}

}  // namespace
}  // namespace peerconf::layout
