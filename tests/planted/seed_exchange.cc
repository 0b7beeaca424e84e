// SeedExchange: the production handshake and release path, copied, with the defect marked
// "PLANTED DEFECT".
#include "planted/seed_exchange.h"

#include <cstring>
#include <exception>
#include <variant>

#include "errors.h"
#include "exchange_entry.h"
#include "planted/exchange.h"
#include "tp_agree.h"

namespace peerconf::planted {

SeedExchange::SeedExchange(std::size_t nbytes, IpcBackend& backend, Group* group)
    : backend_(backend),
      rank_(group != nullptr ? group->rank() : 0),
      npes_(group != nullptr ? group->size() : 1) {
  // PLANTED DEFECT: the seed's exchange. An alloc or get-handle failure is raised here, before
  // the exchange: this rank never joins it, and every other rank waits for it in the all-gather
  // until the group's deadline.
  local_ = backend_.allocUncached(nbytes);
  bytes_ = {local_, nbytes};
  Exchanged exchanged;
  exchanged.handles.resize(static_cast<std::size_t>(npes_));
  if (group != nullptr && npes_ > 1) {
    std::vector<std::vector<std::byte>> entries;
    try {
      entries = group->allGather(ExchangeEntry::encode(backend_.getMemHandle(local_)));
    } catch (...) {
      release();
      throw;
    }
    for (int peer = 0; peer < npes_ && peer < static_cast<int>(entries.size()); ++peer) {
      try {
        const auto entry =
            ExchangeEntry::decode(entries[static_cast<std::size_t>(peer)], rank_, peer);
        if (const auto* handle = std::get_if<IpcHandle>(&entry)) {
          exchanged.handles[static_cast<std::size_t>(peer)] = *handle;
        }
      } catch (const std::exception&) {
        if (!exchanged.failure) exchanged.failure = std::current_exception();
      }
    }
  }

  // Every rank must reach the agreement, so a mapping failure is kept, not thrown.
  std::exception_ptr failure = exchanged.failure;
  if (!failure) try {
      addresses_.reserve(static_cast<std::size_t>(npes_));
      for (int peer = 0; peer < npes_; ++peer) {
        if (peer == rank_) {
          addresses_.push_back(static_cast<std::int64_t>(local_));
          continue;
        }
        const IpcHandle& handle = exchanged.handles[static_cast<std::size_t>(peer)];
        const DevicePtr base = backend_.openMemHandle(handle, peer);
        opened_.emplace_back(peer, base);
        addresses_.push_back(static_cast<std::int64_t>(base));
      }
      // The device table is built before the agreement so that its failure is agreed on too.
      addressesDevice_ = backend_.allocDevice(addresses_.size() * sizeof(std::int64_t));
      backend_.copyToDevice(addressesDevice_, addresses_.data(),
                            addresses_.size() * sizeof(std::int64_t));
    } catch (const std::exception&) {
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

SeedExchange::~SeedExchange() { release(); }

std::vector<std::string> SeedExchange::release() noexcept {
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

void SeedExchange::close() {
  std::vector<std::string> failures = release();
  if (!failures.empty()) throw CloseError(rank_, std::move(failures));
}

}  // namespace peerconf::planted
