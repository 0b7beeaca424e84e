// The MPI launcher's part that needs no MPI job (mpi_launcher.h): whether this process was
// started by mpirun, read from the launcher's environment (Open MPI's or a PMI's). The session
// itself runs under mpiexec in mpi_launcher_comms_main.cc and in the suite/mpi runs.
#include "mpirun/mpi_launcher.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace peerconf::harness {

using mpirun::underMpirun;
namespace {

// Sets or unsets `name` for the test's scope, then puts back what was there.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvVar() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(UnderMpirun, NeitherLaunchersWorldSizeMeansNoMpirun) {
  const EnvVar ompi("OMPI_COMM_WORLD_SIZE", nullptr);
  const EnvVar pmi("PMI_SIZE", nullptr);
  EXPECT_FALSE(underMpirun());
}

TEST(UnderMpirun, OpenMpisWorldSizeMeansMpirun) {
  const EnvVar ompi("OMPI_COMM_WORLD_SIZE", "2");
  const EnvVar pmi("PMI_SIZE", nullptr);
  EXPECT_TRUE(underMpirun());
}

TEST(UnderMpirun, APmisSizeMeansMpirun) {
  const EnvVar ompi("OMPI_COMM_WORLD_SIZE", nullptr);
  const EnvVar pmi("PMI_SIZE", "4");
  EXPECT_TRUE(underMpirun());
}

}  // namespace
}  // namespace peerconf::harness
