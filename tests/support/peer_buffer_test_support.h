// What the tests of PeerBuffer over the mocked seams (mock_seams.h) have the mocks return: the
// local buffer's and the address table's device addresses, each peer's mapping and each rank's
// handle, and the exchange's answer of n ranks' handles.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "exchange_entry.h"
#include "ipc_backend.h"

namespace peerconf::testing {

inline constexpr DevicePtr kLocal = 0x1000;
inline constexpr DevicePtr kTable = 0x2000;
inline constexpr std::size_t kBytes = 4096;

// Peer p's buffer mapped at 0x100000 * (p + 1).
inline DevicePtr mappingOf(int peer) { return 0x100000 * static_cast<DevicePtr>(peer + 1); }

// Rank r's handle: first byte r + 1, the rest zero.
inline IpcHandle handleOf(int rank) {
  IpcHandle h;
  h.bytes[0] = static_cast<std::byte>(rank + 1);
  return h;
}

// Rank r's entry: its handle, registering `bytes` under `label`.
inline std::vector<std::byte> entryOf(int rank, std::size_t bytes = kBytes,
                                      const std::string& label = {}) {
  return ExchangeEntry::encode(handleOf(rank), {bytes, label});
}

// The all-gather's answer when every one of `n` ranks exported its handle of kBytes bytes
// labelled `label`.
inline std::vector<std::vector<std::byte>> gathered(int n, const std::string& label = {}) {
  std::vector<std::vector<std::byte>> out;
  for (int r = 0; r < n; ++r) out.push_back(entryOf(r, kBytes, label));
  return out;
}

}  // namespace peerconf::testing
