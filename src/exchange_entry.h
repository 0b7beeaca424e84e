// The handle exchange's wire format: every rank contributes one fixed-size entry, its IPC handle or
// the record of the failure (alloc, get-handle) that left it without one, so that one all-gather
// tells every rank at once that a rank cannot take part.
#pragma once

#include <cstddef>
#include <span>
#include <variant>
#include <vector>

#include "errors.h"
#include "ipc_backend.h"

namespace peerconf {

// Why a rank has no handle to contribute: the failing seam operation and the runtime's code.
struct ExchangeFailure {
  Op op = Op::kAlloc;
  int code = 0;
  friend bool operator==(const ExchangeFailure&, const ExchangeFailure&) = default;
};

// An entry is a header (magic, kind, operation, code) followed by the handle's bytes, which are all
// zero in a failure record. Decoding yields either an IpcHandle or an ExchangeFailure, never both:
// a failure record can never be opened as a handle.
class ExchangeEntry {
 public:
  static constexpr std::size_t kHeaderSize = 8;
  static constexpr std::size_t kSize = kHeaderSize + IpcHandle::kSize;

  static std::vector<std::byte> encode(const IpcHandle& handle);
  static std::vector<std::byte> encode(const ExchangeFailure& failure);

  // Decodes `peer`'s entry as received by `rank`. A malformed entry (wrong size or magic, unknown
  // kind or operation, a failure record carrying handle bytes) throws GroupError naming the peer.
  static std::variant<IpcHandle, ExchangeFailure> decode(std::span<const std::byte> raw, int rank,
                                                         int peer);

  // The handle bytes inside an encoded handle entry, for the fault decorators that corrupt or
  // replace a handle in transit; empty for a failure record or a malformed entry.
  static std::span<std::byte> handleBytes(std::span<std::byte> raw);
};

}  // namespace peerconf
