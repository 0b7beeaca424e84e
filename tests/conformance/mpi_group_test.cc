// The Group conformance suite instantiated for MpiGroup at the job's size (run under mpiexec at
// 2, 4 and 8 ranks). Each test gets a fresh duplicate of MPI_COMM_WORLD with OnTimeout::kThrow, so
// the timeout cases leave only that duplicate unusable.
#include "mpi/mpi_group.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "errors.h"
#include "group_conformance.h"
#include "mpi_test_support.h"

namespace peerconf::testing {
namespace {

GroupHarness mpiHarness() {
  GroupHarness h;
  h.ranks = worldSize();
  h.name = "ranks" + std::to_string(h.ranks);
  h.run = [](std::chrono::milliseconds deadline, const RankCheck& check) {
    try {
      mpi::MpiGroup group(MPI_COMM_WORLD, deadline, mpi::OnTimeout::kThrow);
      check(group);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << worldRank() << " threw: " << e.what();
    }
    agreeOnFailures(MPI_COMM_WORLD);
  };
  // Ranks are oversubscribed processes here: allow for the scheduler.
  h.shortDeadline = std::chrono::milliseconds(500);
  h.timeoutSlack = std::chrono::milliseconds(3000);
  return h;
}

INSTANTIATE_TEST_SUITE_P(Mpi, GroupConformance, ::testing::Values(mpiHarness()),
                         [](const auto& info) { return info.param.name; });

TEST(MpiGroup, CallsAfterATimeoutFailFastOnTheTimedOutRank) {
  const int rank = worldRank();
  const int size = worldSize();
  {
    mpi::MpiGroup group(MPI_COMM_WORLD, std::chrono::milliseconds(300), mpi::OnTimeout::kThrow);
    if (rank != size - 1) {
      EXPECT_THROW(group.allReduceMin(1), GroupTimeout);
      EXPECT_FALSE(group.usable());
      const auto start = std::chrono::steady_clock::now();
      try {
        group.allReduceMin(1);
        ADD_FAILURE() << "a call on an unusable group returned";
      } catch (const GroupTimeout& e) {
        ADD_FAILURE() << "expected an immediate GroupError: " << e.what();
      } catch (const GroupError& e) {
        EXPECT_NE(std::string(e.what()).find("unusable"), std::string::npos) << e.what();
      }
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
    }
  }
  agreeOnFailures(MPI_COMM_WORLD);
}

TEST(MpiGroup, DuplicatesTheCommunicatorWithErrorsReturned) {
  mpi::MpiGroup group(MPI_COMM_WORLD, std::chrono::milliseconds(20000));
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(MPI_COMM_WORLD, group.comm(), &cmp);
  EXPECT_EQ(cmp, MPI_CONGRUENT);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(group.comm(), &handler);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  EXPECT_EQ(group.rank(), worldRank());
  EXPECT_EQ(group.size(), worldSize());
  EXPECT_EQ(group.onTimeout(), mpi::OnTimeout::kAbort);
  agreeOnFailures(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace peerconf::testing
