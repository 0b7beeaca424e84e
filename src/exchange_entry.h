// The handle exchange's wire format: every rank contributes one fixed-size entry, its IPC handle or
// the record of the failure (alloc, get-handle) that left it without one, so that one all-gather
// tells every rank at once that a rank cannot take part. A handle entry also says what the rank
// registered (the buffer's size and the caller's label), so that every rank sees at once that a
// rank constructed another buffer than the others (PyTorch PR 198024: same sizes, wrong buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
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

// What a rank registered: the buffer's size and the label its caller gave it ("" = none).
struct Registration {
  std::uint64_t size = 0;
  std::string label;
  friend bool operator==(const Registration&, const Registration&) = default;
};

// An entry is a header (magic, kind, operation, code), the handle's bytes, the registered size
// (8 bytes, little-endian) and the label (kLabelSize bytes, NUL-padded). A failure record's
// handle, size and label are all zero. Decoding yields either an IpcHandle or an ExchangeFailure,
// never both: a failure record can never be opened as a handle.
class ExchangeEntry {
 public:
  static constexpr std::size_t kHeaderSize = 8;
  static constexpr std::size_t kRegisteredSizeSize = 8;
  // The longest label, in bytes: room for a name such as "kv-cache-layer-31", fixed so that every
  // entry keeps one size on the wire.
  static constexpr std::size_t kLabelSize = 32;
  static constexpr std::size_t kSize =
      kHeaderSize + IpcHandle::kSize + kRegisteredSizeSize + kLabelSize;

  // Whether `label` fits an entry: at most kLabelSize bytes of printable ASCII (messages quote it).
  static bool validLabel(std::string_view label);

  // `registration.label` must be a validLabel (std::invalid_argument otherwise).
  static std::vector<std::byte> encode(const IpcHandle& handle,
                                       const Registration& registration = {});
  static std::vector<std::byte> encode(const ExchangeFailure& failure);

  // Decodes `peer`'s entry as received by `rank`. A malformed entry (wrong size or magic, unknown
  // kind or operation, a label that is not NUL-padded printable ASCII, a failure record carrying
  // handle bytes, a size or a label) throws GroupError naming the peer.
  static std::variant<IpcHandle, ExchangeFailure> decode(std::span<const std::byte> raw, int rank,
                                                         int peer);
  // What an entry that decode() accepted registered (zero and "" for a failure record).
  static Registration registration(std::span<const std::byte> raw);

  // The handle bytes inside an encoded handle entry, for the fault decorators that corrupt or
  // replace a handle in transit; empty for a failure record or a malformed entry.
  static std::span<std::byte> handleBytes(std::span<std::byte> raw);
};

}  // namespace peerconf
