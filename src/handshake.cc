// Handshake: the collective protocol that builds a PeerBuffer, phase by phase.
#include "handshake.h"

#include <stdexcept>
#include <variant>

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

void Handshake::run(PeerBuffer& buffer, std::size_t nbytes, Group* group) {
  buffer_ = &buffer;
  group_ = group;
  nbytes_ = nbytes;
  allocateAndExport(nbytes);
  if (exchanging()) {
    exchange();
    decode();
    match();
  }
  mapPeers();
  settle();
}

// A failure before the exchange (alloc, get-handle) is kept, not thrown: the rank still joins
// the exchange with a failure record in place of its handle, so every rank learns of it from
// the one all-gather instead of waiting for this rank until the group's deadline.
// A label that cannot travel in an entry is kept the same way, before anything is allocated.
void Handshake::allocateAndExport(std::size_t nbytes) {
  try {
    if (!ExchangeEntry::validLabel(label())) {
      failedOp_ = Op::kHandshake;
      throw std::invalid_argument("the buffer's label '" + label() + "' is longer than " +
                                  std::to_string(ExchangeEntry::kLabelSize) +
                                  " bytes or not printable ASCII");
    }
    failedOp_ = Op::kAlloc;
    local() = backend().allocUncached(nbytes);
    bytes() = {local(), nbytes};
    failedOp_ = Op::kGetHandle;
    if (exchanging()) own_ = backend().getMemHandle(local());
  } catch (const std::exception&) {
    failure_ = std::current_exception();
  }
  if (!exchanging() && failure_) {
    release();
    std::rethrow_exception(failure_);
  }
}

// Every rank received the same entries, so a failure record reaches every rank here and they
// all raise together, without an agreement: the failing rank with its own error chained.
void Handshake::exchange() {
  try {
    entries_ =
        group_->allGather(failure_ ? ExchangeEntry::encode(failureRecord(failure_, failedOp_))
                                   : ExchangeEntry::encode(own_, {nbytes_, label()}));
  } catch (GroupError& e) {
    release();
    keepCause(e);
    throw;
  } catch (...) {
    release();
    throw;
  }
  if (failure_) {
    std::vector<std::string> cleanup = release();
    throw HandshakeError(rank(), true, failure_, std::move(cleanup));
  }
}

// Decode every entry. A failure record from a peer reached every rank (the header is the same
// on every rank), so every rank raises here together. A malformed entry or an exchange of the
// wrong length is this rank's failure (a GroupError naming the peer), agreed on below.
void Handshake::decode() {
  const int npes = size();
  handles_.resize(static_cast<std::size_t>(npes));
  bool anotherFailed = false;
  if (entries_.size() != static_cast<std::size_t>(npes)) {
    failure_ = std::make_exception_ptr(
        GroupError("the exchange returned " + std::to_string(entries_.size()) +
                       " entries for a group of " + std::to_string(npes),
                   Op::kAllGather, rank()));
  } else {
    for (int peer = 0; peer < npes; ++peer) {
      try {
        const auto entry =
            ExchangeEntry::decode(entries_[static_cast<std::size_t>(peer)], rank(), peer);
        if (const auto* handle = std::get_if<IpcHandle>(&entry)) {
          handles_[static_cast<std::size_t>(peer)] = *handle;
        } else {
          anotherFailed = true;
        }
      } catch (const std::exception&) {
        if (!failure_) failure_ = std::current_exception();
      }
    }
  }
  if (anotherFailed) {
    std::vector<std::string> cleanup = release();
    throw HandshakeError(rank(), false, nullptr, std::move(cleanup));
  }
}

// Rank 0's registration is the reference: every rank compares the same gathered entries, so each
// finds the same mismatches and raises the same error, with no further collective, and none opens
// a peer's buffer that is not the one it registered. A rank that could not decode every entry has
// its failure agreed on below instead.
void Handshake::match() {
  if (failure_) return;
  const auto registered = [&](int peer) {
    const Registration r = ExchangeEntry::registration(entries_[static_cast<std::size_t>(peer)]);
    return RegisteredBuffer{peer, static_cast<std::size_t>(r.size), r.label};
  };
  const RegisteredBuffer reference = registered(0);
  std::vector<RegisteredBuffer> mismatches;
  for (int peer = 1; peer < size(); ++peer) {
    RegisteredBuffer other = registered(peer);
    if (other.bytes != reference.bytes || other.label != reference.label) {
      mismatches.push_back(std::move(other));
    }
  }
  if (!mismatches.empty()) {
    std::vector<std::string> cleanup = release();
    throw BufferMismatchError(rank(), reference, std::move(mismatches), std::move(cleanup));
  }
}

// Every rank must reach the agreement, so a failure from here on is kept, not thrown: any
// std::exception (not only ours: a bad_alloc, a backend's own) while opening or building
// the table is this rank's failure.
void Handshake::mapPeers() {
  if (failure_) return;
  try {
    openPeers();
    buildTable();
  } catch (const std::exception&) {
    failure_ = std::current_exception();
  }
}

void Handshake::openPeers() {
  addresses().reserve(static_cast<std::size_t>(size()));
  for (int peer = 0; peer < size(); ++peer) {
    if (peer == rank()) {
      addresses().push_back(static_cast<std::int64_t>(local()));
      continue;
    }
    const DevicePtr base = backend().openMemHandle(handles_[static_cast<std::size_t>(peer)], peer);
    opened().emplace_back(peer, base);
    addresses().push_back(static_cast<std::int64_t>(base));
  }
}

// The device table is built before the agreement so that its failure is agreed on too.
void Handshake::buildTable() {
  const std::size_t tableBytes = addresses().size() * sizeof(std::int64_t);
  addressesDevice() = backend().allocDevice(tableBytes);
  backend().copyToDevice(addressesDevice(), addresses().data(), tableBytes);
}

bool Handshake::agree(bool mapped) { return tpAgree(mapped, group_); }

// A group call that fails after this rank's own failure (its peer hung in the agreement, say)
// raises the group's error, as every rank left waiting does; the rank's own failure stays
// attached to it as the cause, so that the report still says why this rank was failing.
void Handshake::keepCause(GroupError& error) const noexcept {
  if (failure_ && !error.cause()) error.attachCause(failure_);
}

void Handshake::settle() {
  if (size() == 1) {
    if (failure_) {
      release();
      std::rethrow_exception(failure_);
    }
    return;
  }

  bool agreed = false;
  try {
    agreed = agree(failure_ == nullptr);
  } catch (GroupError& e) {
    release();
    keepCause(e);
    throw;
  } catch (...) {
    release();
    throw;
  }
  if (!agreed) {
    std::vector<std::string> cleanup = release();
    throw HandshakeError(rank(), failure_ != nullptr, failure_, std::move(cleanup));
  }
}

}  // namespace peerconf
