// SwapsPeerAddresses: the production handshake and release path, copied, with the defect marked
// "PLANTED DEFECT".
#include "planted/swaps_peer_addresses.h"

#include <cstring>
#include <exception>

#include "errors.h"
#include "tp_agree.h"

namespace peerconf::planted {

namespace {

std::vector<std::byte> handleBytes(const IpcHandle& handle) {
  return {handle.bytes.begin(), handle.bytes.end()};
}

IpcHandle handleFrom(const std::vector<std::byte>& raw, int rank, int peer) {
  if (raw.size() != IpcHandle::kSize) {
    throw GroupError("handle from peer " + std::to_string(peer) + " has " +
                         std::to_string(raw.size()) + " bytes, expected " +
                         std::to_string(IpcHandle::kSize),
                     Op::kAllGather, rank, peer);
  }
  IpcHandle handle;
  std::memcpy(handle.bytes.data(), raw.data(), IpcHandle::kSize);
  return handle;
}

}  // namespace

SwapsPeerAddresses::SwapsPeerAddresses(std::size_t nbytes, IpcBackend& backend, Group* group)
    : backend_(backend),
      rank_(group != nullptr ? group->rank() : 0),
      npes_(group != nullptr ? group->size() : 1) {
  local_ = backend_.allocUncached(nbytes);
  bytes_ = {local_, nbytes};

  std::vector<std::vector<std::byte>> handles;
  if (group != nullptr && npes_ > 1) {
    try {
      handles = group->allGather(handleBytes(backend_.getMemHandle(local_)));
    } catch (...) {
      release();
      throw;
    }
  }

  // Every rank must reach the agreement, so a mapping failure is kept, not thrown.
  std::exception_ptr failure;
  try {
    addresses_.reserve(static_cast<std::size_t>(npes_));
    for (int peer = 0; peer < npes_; ++peer) {
      if (peer == rank_) {
        addresses_.push_back(static_cast<std::int64_t>(local_));
        continue;
      }
      const IpcHandle handle = handleFrom(handles[static_cast<std::size_t>(peer)], rank_, peer);
      const DevicePtr base = backend_.openMemHandle(handle, peer);
      opened_.emplace_back(peer, base);
      addresses_.push_back(static_cast<std::int64_t>(base));
    }
    // PLANTED DEFECT: the first two peers trade slots (own slot untouched), before the device
    // table is copied: both tables agree with each other and are both wrong (C4).
    std::vector<std::size_t> peers;
    for (int peer = 0; peer < npes_; ++peer) {
      if (peer != rank_) peers.push_back(static_cast<std::size_t>(peer));
    }
    if (peers.size() >= 2) std::swap(addresses_[peers[0]], addresses_[peers[1]]);
    // The device table is built before the agreement so that its failure is agreed on too.
    addressesDevice_ = backend_.allocDevice(addresses_.size() * sizeof(std::int64_t));
    backend_.copyToDevice(addressesDevice_, addresses_.data(),
                          addresses_.size() * sizeof(std::int64_t));
  } catch (const Error&) {
    failure = std::current_exception();
  }

  if (npes_ == 1) {
    if (failure) {
      release();
      std::rethrow_exception(failure);
    }
    return;
  }

  bool agreed = false;
  try {
    agreed = tpAgree(failure == nullptr, group);
  } catch (...) {
    release();
    throw;
  }
  if (!agreed) {
    std::vector<std::string> cleanup = release();
    throw HandshakeError(rank_, failure != nullptr, failure, std::move(cleanup));
  }
}

SwapsPeerAddresses::~SwapsPeerAddresses() { release(); }

std::vector<std::string> SwapsPeerAddresses::release() noexcept {
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

void SwapsPeerAddresses::close() {
  std::vector<std::string> failures = release();
  if (!failures.empty()) throw CloseError(rank_, std::move(failures));
}

}  // namespace peerconf::planted
