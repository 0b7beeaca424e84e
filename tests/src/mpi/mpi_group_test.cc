// The PeerBuffer handshake over MpiGroup and the mocked HIP runtime, each rank a process
// (device = rank, one job id broadcast from rank 0): success through every peer address (peers'
// buffers are the same shm segments mapped into each process), one rank's open failure raising on
// every rank, every rank's ledger clean, and no segment of this job left in /dev/shm.
#include "mpi/mpi_group.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "group_handshake_checks.h"
#include "mock_hip/control.h"
#include "mpi_shared_job.h"
#include "mpi_test_support.h"

namespace peerconf::testing {
namespace {

using namespace std::chrono_literals;

class MpiHandshake : public ::testing::Test {
 protected:
  void SetUp() override {
    mock_hip::clearFaultHooks();
    mock_hip::clearLedgers();
  }
  void TearDown() override {
    mock_hip::clearFaultHooks();
    agreeOnFailures(MPI_COMM_WORLD);
  }
};

TEST_F(MpiHandshake, EveryRankWritesEveryPeerThroughItsAddresses) {
  mpi::MpiGroup group(MPI_COMM_WORLD, 30s, mpi::OnTimeout::kThrow);
  checkHandshakeSucceeds(group);
}

void runOpenFailure(int failingRank, int failingPeer, int code) {
  if (worldRank() == failingRank) {
    mock_hip::setFaultHook(failingRank, failOpenOf(failingPeer, code));
  }
  mpi::MpiGroup group(MPI_COMM_WORLD, 30s, mpi::OnTimeout::kThrow);
  checkHandshakeFailsEverywhere(group, failingRank, failingPeer, code);
}

TEST_F(MpiHandshake, LastRanksOpenOfRankZeroFailsWithInvalidValue) {
  runOpenFailure(worldSize() - 1, 0, 1);
}

TEST_F(MpiHandshake, RankZerosOpenOfTheLastRankFailsWithMapFailed) {
  runOpenFailure(0, worldSize() - 1, 205);
}

TEST_F(MpiHandshake, AMiddleRanksOpenFailsWithMapFailed) {
  const int size = worldSize();
  runOpenFailure(size / 2, (size / 2 + 1) % size, 205);
}

TEST_F(MpiHandshake, SuccessAgainAfterTheFailures) {
  mpi::MpiGroup group(MPI_COMM_WORLD, 30s, mpi::OnTimeout::kThrow);
  checkHandshakeSucceeds(group);
}

// Defined last so that it runs after every handshake above.
TEST(MpiHandshakeCleanup, NoSegmentOfThisJobIsLeftInDevShm) {
  MPI_Barrier(MPI_COMM_WORLD);
  int pid = static_cast<int>(getpid());
  std::vector<int> pids(static_cast<std::size_t>(worldSize()));
  MPI_Allgather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (worldRank() == 0) {
    EXPECT_EQ(leftoverSegments(mock_hip::job(), pids), std::vector<std::string>{});
  }
  agreeOnFailures(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace peerconf::testing
