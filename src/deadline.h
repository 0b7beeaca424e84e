// Deadline arithmetic for the groups' collective waits (thread/, mpi/): when a wait that starts
// now must end, and a deadline in the seconds GroupTimeout reports.
#pragma once

#include <chrono>

namespace peerconf {

// now + d, saturating, so that a huge deadline means "no deadline" rather than overflow.
inline std::chrono::steady_clock::time_point deadlineFromNow(std::chrono::milliseconds d) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  if (d >= std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now)) {
    return Clock::time_point::max();
  }
  return now + d;
}

inline double deadlineSeconds(std::chrono::milliseconds d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace peerconf
