// MPI launcher: inside `mpirun -np N peerconf run ...` every process is one rank. Every process
// walks the same scenario list; each scenario runs on world ranks [0, scenario.ranks), and every
// rank's result is gathered to world rank 0, which checks and reports. One mpirun, many scenarios.
#pragma once

#include <memory>
#include <optional>

#include "launcher.h"

namespace peerconf::harness {

// True when this process was started by mpirun (Open MPI or MPICH environment).
bool underMpirun();

class MpiSession {
 public:
  // Initializes MPI and gives every process the same mocked-runtime job id.
  MpiSession(int* argc, char*** argv);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  // Runs one scenario (collective over the world: every process calls it, in the same order).
  // Returns the whole record on world rank 0, nothing elsewhere.
  std::optional<RunRecord> run(const Scenario& scenario, std::uint64_t seed,
                               const LaunchOptions& options);

  // Every process leaves with world rank 0's exit code.
  int agreeExitCode(int code);

 private:
  struct World;
  std::unique_ptr<World> world_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace peerconf::harness
