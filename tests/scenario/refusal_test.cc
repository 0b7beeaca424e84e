// Files a rule must refuse (scenario/refusal.h): the header read, and a refusal compared with it:
// accepted, refused elsewhere, refused otherwise, and refused as stated.
#include "scenario/refusal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace peerconf::harness::scenario {
namespace {

using ::testing::HasSubstr;

TEST(Refusal, ReadsTheHeader) {
  const auto expected =
      expectedRefusal("# expect-error: 14:12: every rank dies or hangs\nranks: 2\n");
  ASSERT_TRUE(expected);
  EXPECT_EQ(expected->mark.line, 14);
  EXPECT_EQ(expected->mark.column, 12);
  EXPECT_EQ(expected->fragment, "every rank dies or hangs");
}

TEST(Refusal, AFileWithoutAWellFormedHeaderAnnouncesNothing) {
  EXPECT_FALSE(expectedRefusal("ranks: 2\n"));
  EXPECT_FALSE(expectedRefusal("# expect-error: 14: no column\n"));
  EXPECT_FALSE(expectedRefusal("# expect-error: 14:12:\n"));
  EXPECT_FALSE(expectedRefusal("# expect-error: 0:1: line zero\n"));
  EXPECT_FALSE(expectedRefusal("\n# expect-error: 1:1: not the first line\n"));
}

TEST(Refusal, RefusedAsStatedIsNoProblem) {
  const ExpectedRefusal expected{{14, 12}, "every rank dies"};
  const model::ScenarioError error("a.yaml", {14, 12}, "every rank dies or hangs, so ...");
  EXPECT_EQ(refusalProblem("a.yaml", expected, error), "");
}

TEST(Refusal, AcceptedIsAProblem) {
  const ExpectedRefusal expected{{14, 12}, "every rank dies"};
  EXPECT_EQ(refusalProblem("a.yaml", expected, std::nullopt),
            "must be refused at a.yaml:14:12 with \"every rank dies\", but it was accepted");
}

TEST(Refusal, RefusedElsewhereOrOtherwiseIsAProblem) {
  const ExpectedRefusal expected{{14, 12}, "every rank dies"};
  for (const model::ScenarioError& error :
       {model::ScenarioError("a.yaml", {13, 12}, "every rank dies or hangs"),
        model::ScenarioError("a.yaml", {14, 3}, "every rank dies or hangs"),
        model::ScenarioError("a.yaml", {14, 12}, "duplicate key 'outcome'"),
        model::ScenarioError("b.yaml", {14, 12}, "every rank dies or hangs")}) {
    EXPECT_THAT(refusalProblem("a.yaml", expected, error),
                HasSubstr("but it was refused otherwise: " + std::string(error.what())));
  }
}

}  // namespace
}  // namespace peerconf::harness::scenario
