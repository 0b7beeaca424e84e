// A 2-rank PeerBuffer handshake through the installed package: ranks as threads (ThreadGroup),
// the GPU backend over the mocked HIP runtime from makeIpcBackend. Prints "handshake ok".
#include <chrono>
#include <iostream>

#include "backend_factory.h"
#include "mock_hip/control.h"
#include "peer_buffer.h"
#include "thread/run_ranks.h"

int main() {
  constexpr int kRanks = 2;
  const auto outcomes = peerconf::thread::runRanks(
      kRanks, std::chrono::seconds(10), [](int rank, peerconf::Group& group) {
        auto backend = peerconf::makeIpcBackend(peerconf::Runtime::kMock, rank, rank);
        peerconf::PeerBuffer buffer(1 << 16, *backend, &group);
        if (buffer.addresses().size() != kRanks ||
            static_cast<peerconf::DevicePtr>(buffer.addresses()[rank]) != buffer.bytes().data) {
          throw std::runtime_error("addresses are wrong");
        }
        buffer.close();
      });
  bool ok = peerconf::thread::allOk(outcomes);
  for (const auto& outcome : outcomes) std::cout << outcome << "\n";
  for (int device = 0; device < kRanks; ++device) {
    if (!peerconf::mock_hip::liveAllocations(device).empty() ||
        !peerconf::mock_hip::liveMappings(device).empty()) {
      std::cout << "device " << device << " still holds memory\n";
      ok = false;
    }
  }
  std::cout << (ok ? "handshake ok" : "handshake FAILED") << "\n";
  return ok ? 0 : 1;
}
