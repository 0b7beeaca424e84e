// `peerconf explore` (runExploreCommand): the search or the enumeration, its summary, and the
// exit status (0 nothing found, 2 a usage error, never an escaped exception).
#include "explore/command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace peerconf::harness::explore {
namespace {

using ::testing::HasSubstr;

TEST(ExploreCommand, AnExhaustiveRunOfOneRankPasses) {
  ExploreCommand command;
  command.exhaustive = true;
  command.enumeration.ranks = 1;
  command.enumeration.isolate = false;
  command.enumeration.quiet = true;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runExploreCommand(command, out, err), 0) << out.str() << err.str();
  EXPECT_FALSE(out.str().empty());  // the summary
  EXPECT_EQ(err.str(), "");
}

TEST(ExploreCommand, AnErrorIsExitTwoWithItsMessage) {
  ExploreCommand command;
  command.exhaustive = true;
  command.enumeration.ranks = 99;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runExploreCommand(command, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("peerconf explore: --exhaustive needs 1 to"));
}

TEST(ExploreCommand, ASearchThatCannotStartIsExitTwo) {
  ExploreCommand command;
  command.search.reproduce = "not a reproduce string";
  command.search.isolate = false;
  command.search.quiet = true;
  command.search.seed = 1;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runExploreCommand(command, out, err), 2) << out.str();
}

}  // namespace
}  // namespace peerconf::harness::explore
