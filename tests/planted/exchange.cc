// exchangeAsProduction: the production core's exchange, for the planted copies.
#include "planted/exchange.h"

#include <string>
#include <variant>

#include "errors.h"
#include "exchange_entry.h"

namespace peerconf::planted {

Exchanged exchangeAsProduction(std::size_t nbytes, IpcBackend& backend, Group* group, int rank,
                               int npes) {
  Exchanged out;
  out.handles.resize(static_cast<std::size_t>(npes));
  const bool exchange = group != nullptr && npes > 1;
  std::exception_ptr failure;
  ExchangeFailure record{Op::kAlloc, 0};
  IpcHandle own;
  try {
    out.local = backend.allocUncached(nbytes);
    record.op = Op::kGetHandle;
    if (exchange) own = backend.getMemHandle(out.local);
  } catch (const std::exception& e) {
    failure = std::current_exception();
    if (const auto* error = dynamic_cast<const Error*>(&e)) record = {error->op(), error->code()};
  }
  std::vector<std::string> cleanup;
  auto freeLocal = [&] {
    if (out.local == 0) return;
    try {
      backend.freeDeviceMem(out.local);
    } catch (const std::exception& e) {
      cleanup.emplace_back(e.what());
    }
    out.local = 0;
  };
  if (!exchange) {
    if (failure) {
      freeLocal();
      std::rethrow_exception(failure);
    }
    return out;
  }
  std::vector<std::vector<std::byte>> entries;
  try {
    entries =
        group->allGather(failure ? ExchangeEntry::encode(record) : ExchangeEntry::encode(own));
  } catch (...) {
    freeLocal();
    throw;
  }
  if (failure) {
    freeLocal();
    throw HandshakeError(rank, true, failure, cleanup);
  }
  if (entries.size() != static_cast<std::size_t>(npes)) {
    out.failure = std::make_exception_ptr(
        GroupError("wrong number of exchange entries", Op::kAllGather, rank));
    return out;
  }
  bool anotherFailed = false;
  for (int peer = 0; peer < npes; ++peer) {
    try {
      const auto entry = ExchangeEntry::decode(entries[static_cast<std::size_t>(peer)], rank, peer);
      if (const auto* handle = std::get_if<IpcHandle>(&entry)) {
        out.handles[static_cast<std::size_t>(peer)] = *handle;
      } else {
        anotherFailed = true;
      }
    } catch (const std::exception&) {
      if (!out.failure) out.failure = std::current_exception();
    }
  }
  if (anotherFailed) {
    freeLocal();
    throw HandshakeError(rank, false, nullptr, cleanup);
  }
  return out;
}

}  // namespace peerconf::planted
