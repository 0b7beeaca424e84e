// Deadlines of the group calls (group.h): every collective wait has one.
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

}  // namespace peerconf
