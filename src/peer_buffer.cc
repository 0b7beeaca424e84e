// PeerBuffer: the collective handshake and the release path.
#include "peer_buffer.h"

#include <exception>
#include <variant>

#include "errors.h"
#include "exchange_entry.h"
#include "tp_agree.h"

namespace peerconf {

namespace {

// What a rank that could not take part tells the others in the exchange: the failing operation
// and the runtime's code, taken from the error when it is one of ours.
ExchangeFailure failureRecord(const std::exception_ptr& failure, Op phase) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return {e.op(), e.code()};
  } catch (...) {
    return {phase, 0};
  }
}

}  // namespace

PeerBuffer::PeerBuffer(std::size_t nbytes, IpcBackend& backend, Group* group)
    : backend_(backend),
      rank_(group != nullptr ? group->rank() : 0),
      npes_(group != nullptr ? group->size() : 1) {
  const bool exchange = group != nullptr && npes_ > 1;

  // A failure before the exchange (alloc, get-handle) is kept, not thrown: the rank still joins
  // the exchange with a failure record in place of its handle, so every rank learns of it from
  // the one all-gather instead of waiting for this rank until the group's deadline.
  std::exception_ptr failure;
  Op phase = Op::kAlloc;
  IpcHandle own;
  try {
    local_ = backend_.allocUncached(nbytes);
    bytes_ = {local_, nbytes};
    phase = Op::kGetHandle;
    if (exchange) own = backend_.getMemHandle(local_);
  } catch (const std::exception&) {
    failure = std::current_exception();
  }
  if (!exchange && failure) {
    release();
    std::rethrow_exception(failure);
  }

  std::vector<std::vector<std::byte>> entries;
  if (exchange) {
    try {
      entries = group->allGather(failure ? ExchangeEntry::encode(failureRecord(failure, phase))
                                         : ExchangeEntry::encode(own));
    } catch (...) {
      release();
      throw;
    }
    // Every rank received the same entries, so a failure record reaches every rank here and they
    // all raise together, without an agreement: the failing rank with its own error chained.
    if (failure) {
      std::vector<std::string> cleanup = release();
      throw HandshakeError(rank_, true, failure, std::move(cleanup));
    }
  }

  // Decode every entry. A failure record from a peer reached every rank (the header is the same
  // on every rank), so every rank raises here together. A malformed entry or an exchange of the
  // wrong length is this rank's failure (a GroupError naming the peer), agreed on below.
  std::vector<IpcHandle> handles(static_cast<std::size_t>(npes_));
  if (exchange) {
    bool anotherFailed = false;
    if (entries.size() != static_cast<std::size_t>(npes_)) {
      failure = std::make_exception_ptr(
          GroupError("the exchange returned " + std::to_string(entries.size()) +
                         " entries for a group of " + std::to_string(npes_),
                     Op::kAllGather, rank_));
    } else {
      for (int peer = 0; peer < npes_; ++peer) {
        try {
          const auto entry =
              ExchangeEntry::decode(entries[static_cast<std::size_t>(peer)], rank_, peer);
          if (const auto* handle = std::get_if<IpcHandle>(&entry)) {
            handles[static_cast<std::size_t>(peer)] = *handle;
          } else {
            anotherFailed = true;
          }
        } catch (const std::exception&) {
          if (!failure) failure = std::current_exception();
        }
      }
    }
    if (anotherFailed) {
      std::vector<std::string> cleanup = release();
      throw HandshakeError(rank_, false, nullptr, std::move(cleanup));
    }
  }

  // Every rank must reach the agreement, so a failure from here on is kept, not thrown: any
  // std::exception (not only ours: a bad_alloc, a backend's own) while opening or building
  // the table is this rank's failure.
  if (!failure) {
    try {
      addresses_.reserve(static_cast<std::size_t>(npes_));
      for (int peer = 0; peer < npes_; ++peer) {
        if (peer == rank_) {
          addresses_.push_back(static_cast<std::int64_t>(local_));
          continue;
        }
        const DevicePtr base =
            backend_.openMemHandle(handles[static_cast<std::size_t>(peer)], peer);
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
