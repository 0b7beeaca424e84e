// checkRun: every checker over a run, in property order.
#include "checkers/checkers.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "synthetic_run.h"

namespace peerconf::harness::checkers {

using model::Property;
using model::reproduceCommand;
using model::RunRecord;
using model::Verdict;
namespace {

std::vector<Property> properties(const std::vector<Verdict>& verdicts) {
  std::vector<Property> out;
  for (const Verdict& v : verdicts) out.push_back(v.property);
  return out;
}

TEST(CheckRun, BuiltinsInPropertyOrderAndAllAcceptableOnCleanRuns) {
  for (const RunRecord& record :
       {testing::successRun(), testing::openFailureRun(), testing::hangRun(),
        testing::withoutLedgers(testing::openFailureRun(3, 0, 2))}) {
    const auto verdicts = checkRun(record, builtinCheckers());
    EXPECT_EQ(properties(verdicts),
              (std::vector<Property>{Property::kC1Uniform, Property::kC2Message,
                                     Property::kC3Cleanup, Property::kC4Addresses,
                                     Property::kC5Agreement, Property::kC6NoOverwrite,
                                     Property::kC7NoStale, Property::kC8Bounded}));
    for (const Verdict& verdict : verdicts) {
      EXPECT_TRUE(verdict.acceptable()) << record.scenario.name << ": " << testing::dump(verdict);
    }
  }
}

TEST(CheckRun, EveryProgramRunsTheSameEightCheckers) {
  // The list is explicit: checkRun(record) and builtinCheckers() are the same C1..C8, whatever
  // else the program links (no checker arrives from a static initializer).
  const auto verdicts = checkRun(testing::successRun());
  EXPECT_EQ(properties(verdicts), properties(checkRun(testing::successRun(), builtinCheckers())));
  EXPECT_EQ(properties(verdicts).size(), 8u);
}

TEST(CheckRun, ACheckerThatThrowsFails) {
  RunRecord record = testing::successRun();
  record.scenario.expect.violations = {"C7"};
  const auto verdicts = checkRun(record, {{Property::kC7NoStale, [](const RunRecord&) -> Verdict {
                                             throw std::runtime_error("boom");
                                           }}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_TRUE(verdicts[0].failed());
  EXPECT_FALSE(verdicts[0].acceptable());  // a crash never satisfies a negative control
  EXPECT_NE(verdicts[0].summary.find("boom"), std::string::npos);
  EXPECT_EQ(verdicts[0].reproduce, reproduceCommand(record));
}

}  // namespace
}  // namespace peerconf::harness::checkers
