// PeerBuffer: the collective handshake (its phases in handshake.cc) and the release path.
#include "peer_buffer.h"

#include "errors.h"
#include "handshake.h"

namespace peerconf {

PeerBuffer::PeerBuffer(std::size_t nbytes, IpcBackend& backend, Group* group,
                       std::string_view label)
    : PeerBuffer(nbytes, backend, group, Handshake(), label) {}

PeerBuffer::PeerBuffer(std::size_t nbytes, IpcBackend& backend, Group* group, Handshake&& handshake,
                       std::string_view label)
    : backend_(backend),
      rank_(group != nullptr ? group->rank() : 0),
      npes_(group != nullptr ? group->size() : 1),
      label_(label) {
  handshake.run(*this, nbytes, group);
}

PeerBuffer::~PeerBuffer() { release(); }

std::vector<std::string> PeerBuffer::release() noexcept {
  std::vector<std::string> failures;
  auto attempt = [&](auto&& call) {
    try {
      call();
    } catch (const std::exception& e) {
      failures.emplace_back(e.what());
    }
  };
  std::vector<std::pair<int, DevicePtr>> opened;
  opened.swap(opened_);
  for (const auto& [peer, base] : opened) {
    attempt([&, peer = peer, base = base] { backend_.closeMemHandle(base, peer); });
  }
  if (addressesDevice_ != 0) {
    const DevicePtr table = std::exchange(addressesDevice_, 0);
    attempt([&] { backend_.freeDeviceMem(table); });
  }
  if (local_ != 0) {
    const DevicePtr local = std::exchange(local_, 0);
    bytes_ = {};
    attempt([&] { backend_.freeDeviceMem(local); });
  }
  addresses_.clear();
  return failures;
}

void PeerBuffer::close() {
  std::vector<std::string> failures = release();
  if (!failures.empty()) throw CloseError(rank_, std::move(failures));
}

}  // namespace peerconf
