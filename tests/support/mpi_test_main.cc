// main() for gtest binaries run under mpiexec: MPI_Init before gtest (test parameters read the
// world size), rank 0 prints the usual report, other ranks only their failures, and the exit
// status is agreed so that every rank exits non-zero if any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "mpi_test_support.h"

namespace peerconf::testing {

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void agreeOnFailures(MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int failed = ::testing::Test::HasFailure() ? 1 : 0;
  std::vector<int> all(static_cast<std::size_t>(size));
  MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
  std::string failedRanks;
  for (int r = 0; r < size; ++r) {
    if (all[static_cast<std::size_t>(r)] != 0 && r != rank) {
      failedRanks += (failedRanks.empty() ? "" : ", ") + std::to_string(r);
    }
  }
  if (!failedRanks.empty() && failed == 0) {
    ADD_FAILURE() << "rank(s) " << failedRanks << " failed this test (see their output)";
  }
}

namespace {

// Prints only failures, each tagged with the rank (for ranks other than 0).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace peerconf::testing

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = peerconf::testing::worldRank();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new peerconf::testing::RankFailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
