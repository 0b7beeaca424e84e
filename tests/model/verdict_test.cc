// Verdict: the properties' names and titles, which `violations` entries name a property, and
// when a verdict is acceptable (a negative control must fail).
#include "model/verdict.h"

#include <gtest/gtest.h>

namespace peerconf::harness {

using model::namesProperty;
using model::Property;
using model::shortName;
using model::Verdict;
namespace {

TEST(Verdict, NamesAndTitles) {
  EXPECT_EQ(shortName(Property::kC1Uniform), "C1");
  EXPECT_EQ(shortName(Property::kC8Bounded), "C8");
  EXPECT_EQ(toString(Property::kC6NoOverwrite), "C6 no unread data overwritten");
  EXPECT_EQ(toString(Property::kC3Cleanup), "C3 cleanup");
  EXPECT_EQ(shortName(static_cast<Property>(42)), "C?");
  EXPECT_EQ(toString(static_cast<Property>(42)), "C? unknown");
}

TEST(Verdict, NamesPropertyByIdTitleOrPrefix) {
  EXPECT_TRUE(namesProperty("C6", Property::kC6NoOverwrite));
  EXPECT_TRUE(namesProperty("c6", Property::kC6NoOverwrite));
  EXPECT_TRUE(namesProperty("C6 NO UNREAD DATA OVERWRITTEN", Property::kC6NoOverwrite));
  EXPECT_TRUE(namesProperty("C6: the slot", Property::kC6NoOverwrite));
  EXPECT_TRUE(namesProperty("C6 no overwrite", Property::kC6NoOverwrite));
  EXPECT_FALSE(namesProperty("C7", Property::kC6NoOverwrite));
  EXPECT_FALSE(namesProperty("C10", Property::kC1Uniform));  // another number, not C1
  EXPECT_FALSE(namesProperty("C", Property::kC1Uniform));
  EXPECT_FALSE(namesProperty("", Property::kC1Uniform));
  EXPECT_FALSE(namesProperty("uniform", Property::kC1Uniform));
}

TEST(Verdict, AcceptableUnlessItFailedUnexpectedlyOrAControlPassed) {
  Verdict v;
  for (auto status :
       {Verdict::Status::kPass, Verdict::Status::kFail, Verdict::Status::kNotApplicable}) {
    v.status = status;
    v.expectedViolation = false;
    EXPECT_EQ(v.acceptable(), status != Verdict::Status::kFail);
    EXPECT_EQ(v.failed(), status == Verdict::Status::kFail);
    v.expectedViolation = true;
    EXPECT_EQ(v.acceptable(), status == Verdict::Status::kFail);
  }
}

}  // namespace
}  // namespace peerconf::harness
