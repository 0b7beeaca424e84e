// For MPI test executables over the mocked HIP runtime: every rank runs under rank 0's job id
// (broadcast in a gtest environment, set before any test allocates). Including this header
// registers the environment, once per executable.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>

#include "mock_hip/control.h"
#include "mpi_test_support.h"

namespace peerconf::testing {

class SharedMockHipJob : public ::testing::Environment {
 public:
  void SetUp() override {
    std::uint64_t job = worldRank() == 0 ? mock_hip::job() : 0;
    MPI_Bcast(&job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    mock_hip::setJob(job);
  }
};

[[maybe_unused]] inline ::testing::Environment* const sharedMockHipJob =
    ::testing::AddGlobalTestEnvironment(new SharedMockHipJob);

}  // namespace peerconf::testing
