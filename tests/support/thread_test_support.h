// Helpers for the tests of the thread group, the thread world and the simulated clock.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "sim_clock.h"

namespace peerconf::testing {

// The bytes of an int, as a group's gather carries them.
inline std::vector<std::byte> intBytes(int value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `body(id)` on `n` threads attached to `clock`; joins them.
template <typename Body>
void runAttached(SimClock& clock, int n, Body body) {
  std::vector<std::thread> threads;
  for (int id = 0; id < n; ++id) {
    threads.emplace_back([&clock, &body, id] {
      clock.attach(id);
      ThreadClockScope scope(clock);
      body(id);
      clock.detach();
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace peerconf::testing
