// Layout names (layout_names.cc): every layout named once, the reference first, names read back
// to their kind, unknown names refused, and which layouts are the shipped negative controls.
#include "layout/layout_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "layout/layout.h"

namespace peerconf::layout {
namespace {

TEST(LayoutNames, EveryLayoutIsNamedOnceTheReferenceFirstAndEachNameReadsBack) {
  const std::vector<std::string> names = layoutNames();
  ASSERT_EQ(names.size(), static_cast<std::size_t>(kLayoutKinds));
  EXPECT_EQ(names.front(), "reference");
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const std::string& name : names) {
    const auto kind = layoutKindFromName(name);
    ASSERT_TRUE(kind.has_value()) << name;
    EXPECT_EQ(layoutName(*kind), name);
  }
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
  EXPECT_EQ(controls, kLayoutKinds - 2);
  EXPECT_FALSE(isNegativeControl(LayoutKind::kReference));
  EXPECT_FALSE(isNegativeControl(LayoutKind::kChunkTagged));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kSingleBuffer));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kChunkTagBeforePayload));
  EXPECT_TRUE(isNegativeControl(LayoutKind::kRelaxedTag));
}

}  // namespace
}  // namespace peerconf::layout
