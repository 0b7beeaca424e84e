// The Group seam's conformance suite, written once and instantiated per implementation and rank
// count (threads: thread_group_conformance_test.cc, MPI: mpi_group_conformance_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

#include "group.h"
#include "sanitizer.h"

namespace peerconf::testing {

using RankCheck = std::function<void(Group& group)>;

// How the suite reaches one implementation at one rank count.
struct GroupHarness {
  std::string name;  // test-name suffix, alphanumeric
  int ranks = 0;
  // Runs `check` on every rank, each with its rank's Group of a fresh group of `ranks` ranks whose
  // calls time out after the given deadline; returns once every rank is done. A rank's exception
  // and a failure on any rank become gtest failures of this test, labelled by rank.
  std::function<void(std::chrono::milliseconds deadline, const RankCheck& check)> run;
  // Aborts the group on behalf of `group.rank()`, for implementations that can abort without
  // ending the process; empty otherwise (MPI's abort ends the job).
  std::function<void(Group& group, const std::string& why)> abort;
  // How far past its deadline a timed-out call may return (scheduling, oversubscription; longer
  // under a sanitizer).
  std::chrono::milliseconds timeoutSlack{1000 * kSanitizerSlowdown};
  // The deadline of the timeout cases (short, so the suite stays fast).
  std::chrono::milliseconds shortDeadline{300};
};

inline void PrintTo(const GroupHarness& harness, std::ostream* out) {
  *out << harness.name << " (" << harness.ranks << " ranks)";
}

class GroupConformance : public ::testing::TestWithParam<GroupHarness> {};

}  // namespace peerconf::testing
