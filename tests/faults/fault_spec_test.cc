// The fault vocabulary's one table: every site and point has one name that reads back, the
// hipError_t names read both ways, and each error site's default error.
#include "faults/fault_spec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace peerconf::faults {
namespace {

TEST(FaultSpec, EverySiteAndPointHasOneNameThatReadsBack) {
  std::set<std::string_view> names;
  for (Site site : allSites()) {
    const std::string_view name = siteName(site);
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name << " names two sites";
    EXPECT_EQ(siteFromName(name), site) << name;
  }
  EXPECT_EQ(allSites().size(), static_cast<std::size_t>(Site::kHandleMapped) + 1);
  for (Point point : allPoints()) {
    EXPECT_EQ(pointFromName(pointName(point)), point) << pointName(point);
  }
  EXPECT_EQ(siteFromName("opne"), std::nullopt);
  EXPECT_EQ(pointFromName("agreement"), std::nullopt);
}

TEST(FaultSpec, HipErrorNamesReadBothWays) {
  EXPECT_EQ(hipErrorName(205), "hipErrorMapFailed");
  EXPECT_EQ(hipErrorCode("hipErrorMapFailed"), 205);
  EXPECT_EQ(hipErrorName(1234), "hipError(1234)");
  EXPECT_EQ(hipErrorCode("hipErrorMapFailled"), std::nullopt);
  int last = -1;
  for (const auto& [code, name] : hipErrorNames()) {
    EXPECT_GT(code, last) << "the table is ascending";
    last = code;
    EXPECT_EQ(hipErrorName(code), name);
    EXPECT_EQ(hipErrorCode(name), code);
  }
}

TEST(FaultSpec, ErrorSitesDefaultToTheRuntimesUsualError) {
  EXPECT_EQ(defaultError(Site::kAlloc), 2);
  EXPECT_EQ(defaultError(Site::kAllocTable), 2);
  for (Site site : {Site::kGetHandle, Site::kOpen, Site::kClose, Site::kFree, Site::kCopyTable}) {
    EXPECT_EQ(defaultError(site), 1) << siteName(site);
  }
  for (Site site : {Site::kDelay, Site::kDeath, Site::kHang, Site::kGroupFail, Site::kHandleCorrupt,
                    Site::kHandleStale, Site::kNotReady}) {
    EXPECT_EQ(defaultError(site), 0) << siteName(site);
  }
}

TEST(FaultSpec, AppliesToExactlyItsRanks) {
  FaultSpec fault;
  fault.ranks = {0, 2};
  EXPECT_TRUE(fault.appliesTo(0));
  EXPECT_FALSE(fault.appliesTo(1));
  EXPECT_TRUE(fault.appliesTo(2));
  EXPECT_FALSE(fault.appliesTo(3));
  EXPECT_FALSE(FaultSpec{}.appliesTo(0));
}

}  // namespace
}  // namespace peerconf::faults
