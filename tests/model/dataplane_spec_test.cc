// The layout a data-plane spec names (model/dataplane_spec.h): its shape from the spec, and an
// unknown layout refused by name.
#include "model/dataplane_spec.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace peerconf::harness::dataplane {

using model::makeLayout;
using model::Spec;
namespace {

TEST(DataPlaneSpec, TheSpecNamesTheLayout) {
  Spec spec;
  spec.depth = 3;
  spec.payload = 4;
  const layout::Layout l = makeLayout(spec, 3);
  EXPECT_EQ(l.ranks, 3);
  EXPECT_EQ(l.depth, 3);
  EXPECT_EQ(l.payloadWords, 4);
  EXPECT_EQ(l.windowNs, 2'000'000u);
  spec.layout = "no-such-layout";
  try {
    (void)makeLayout(spec, 2);
    FAIL() << "an unknown layout was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown data-plane layout 'no-such-layout'");
  }
}

}  // namespace
}  // namespace peerconf::harness::dataplane
