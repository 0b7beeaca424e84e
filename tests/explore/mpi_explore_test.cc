// `peerconf explore` under mpirun, without MPI: what each process explores, the report it sends
// to world rank 0, and rank 0's summary and exit code. runExploreUnderMpi itself (MPI_Init, the
// broadcast of the base seed, the gather, MPI_Finalize, the refusal of --exhaustive) needs an MPI
// job and is not run here.
#include "explore/mpi_explore.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace peerconf::harness::explore {
namespace {

using ::testing::HasSubstr;

TEST(MpiExplore, EachProcessExploresItsOwnSeedAndDirectoryInProcess) {
  ExploreOptions search;
  search.cases = 17;
  search.outDir = "out";
  search.isolate = true;
  search.quiet = false;
  const ExploreOptions third = shardOptions(search, 100, 3);
  EXPECT_EQ(third.seed, 103u);
  EXPECT_EQ(third.outDir, "out/rank-3");
  EXPECT_TRUE(third.quiet);
  EXPECT_FALSE(third.isolate);  // no fork after MPI_Init
  EXPECT_EQ(third.cases, 17);   // the rest as asked
  EXPECT_EQ(shardOptions(search, 100, 0).seed, 100u);
}

TEST(MpiExplore, ReportsSummarizeToTheTotalsAndEachFailure) {
  ExploreResult clean;
  clean.seed = 7;
  clean.cases = 40;
  clean.passed = 40;
  ExploreResult failing;
  failing.seed = 8;
  failing.cases = 3;
  failing.failure = ExploreFailure{};
  failing.failure->file = "out/rank-1/case.yaml";
  failing.failure->summary = "C1 uniform outcome: mixed outcome";
  std::ostringstream out;
  EXPECT_EQ(summarizeShards({shardReport(clean, 2.0), shardReport(failing, 1.0)}, 7, out), 1);
  EXPECT_THAT(out.str(), HasSubstr("rank 1 (seed 8): C1 uniform outcome: mixed outcome\n"
                                   "  written to out/rank-1/case.yaml\n"));
  EXPECT_THAT(out.str(), HasSubstr("2 explorers (seeds 7..8), 43 cases in 2 s (21.5 cases/s), "
                                   "1 explorer(s) found a failure"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("rank 0 (")));

  std::ostringstream ok;
  EXPECT_EQ(summarizeShards({shardReport(clean, 0.0)}, 7, ok), 0);
  EXPECT_THAT(ok.str(), HasSubstr("1 explorers (seeds 7..7), 40 cases in 0 s (0 cases/s), 0 "));
}

TEST(MpiExplore, AProcessThatGaveUpIsAFailureWithItsReason) {
  ExploreResult gaveUp;
  gaveUp.seed = 5;
  gaveUp.gaveUp = "cannot read the reproduce string";
  std::ostringstream out;
  EXPECT_EQ(summarizeShards({shardReport(gaveUp, 1.0)}, 5, out), 1);
  EXPECT_THAT(out.str(), HasSubstr("rank 0 (seed 5):  cannot read the reproduce string\n"));
}

}  // namespace
}  // namespace peerconf::harness::explore
