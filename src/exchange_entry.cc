// ExchangeEntry: encoding and strict decoding of one rank's contribution to the handle exchange.
#include "exchange_entry.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace peerconf {

namespace {

constexpr std::byte kMagic0{0x50};  // 'P'
constexpr std::byte kMagic1{0x43};  // 'C'
constexpr std::byte kHandleKind{1};
constexpr std::byte kFailureKind{2};
constexpr std::size_t kKindAt = 2;
constexpr std::size_t kOpAt = 3;
constexpr std::size_t kCodeAt = 4;
constexpr std::size_t kRegisteredSizeAt = ExchangeEntry::kHeaderSize + IpcHandle::kSize;
constexpr std::size_t kLabelAt = kRegisteredSizeAt + ExchangeEntry::kRegisteredSizeSize;

std::vector<std::byte> header(std::byte kind) {
  std::vector<std::byte> raw(ExchangeEntry::kSize, std::byte{0});
  raw[0] = kMagic0;
  raw[1] = kMagic1;
  raw[kKindAt] = kind;
  return raw;
}

bool knownOp(unsigned value) { return value <= static_cast<unsigned>(Op::kClose); }

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

bool allZero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

bool ExchangeEntry::validLabel(std::string_view label) {
  return label.size() <= kLabelSize && std::all_of(label.begin(), label.end(), printable);
}

std::vector<std::byte> ExchangeEntry::encode(const IpcHandle& handle,
                                             const Registration& registration) {
  if (!validLabel(registration.label)) {
    throw std::invalid_argument("an exchange entry's label is at most " +
                                std::to_string(kLabelSize) + " printable ASCII characters");
  }
  std::vector<std::byte> raw = header(kHandleKind);
  std::copy(handle.bytes.begin(), handle.bytes.end(), raw.begin() + kHeaderSize);
  for (std::size_t i = 0; i < kRegisteredSizeSize; ++i) {
    raw[kRegisteredSizeAt + i] = static_cast<std::byte>(registration.size >> (8 * i));
  }
  std::memcpy(raw.data() + kLabelAt, registration.label.data(), registration.label.size());
  return raw;
}

std::vector<std::byte> ExchangeEntry::encode(const ExchangeFailure& failure) {
  std::vector<std::byte> raw = header(kFailureKind);
  raw[kOpAt] = static_cast<std::byte>(failure.op);
  const auto code = static_cast<std::uint32_t>(failure.code);
  for (std::size_t i = 0; i < 4; ++i) raw[kCodeAt + i] = static_cast<std::byte>(code >> (8 * i));
  return raw;
}

std::variant<IpcHandle, ExchangeFailure> ExchangeEntry::decode(std::span<const std::byte> raw,
                                                               int rank, int peer) {
  auto malformed = [&](const std::string& why) {
    return GroupError("exchange entry from peer " + std::to_string(peer) + " is malformed: " + why,
                      Op::kAllGather, rank, peer);
  };
  if (raw.size() != kSize) {
    throw malformed("it has " + std::to_string(raw.size()) + " bytes, expected " +
                    std::to_string(kSize));
  }
  if (raw[0] != kMagic0 || raw[1] != kMagic1) throw malformed("bad magic");
  const auto handlePart = raw.subspan(kHeaderSize, IpcHandle::kSize);
  const auto registered = raw.subspan(kRegisteredSizeAt);
  // The label: printable ASCII, then NUL padding only (one spelling per label, so that comparing
  // the bytes compares the labels).
  const auto label = raw.subspan(kLabelAt, kLabelSize);
  const auto end = std::find(label.begin(), label.end(), std::byte{0});
  if (!std::all_of(label.begin(), end, [](std::byte b) { return printable(static_cast<char>(b)); }))
    throw malformed("the label is not printable ASCII");
  if (!allZero({end, label.end()})) throw malformed("the label's padding is not NUL");
  if (raw[kKindAt] == kHandleKind) {
    const bool headerClear = std::all_of(raw.begin() + kOpAt, raw.begin() + kHeaderSize,
                                         [](std::byte b) { return b == std::byte{0}; });
    if (!headerClear) throw malformed("a handle entry carries a failure's operation or code");
    IpcHandle handle;
    std::memcpy(handle.bytes.data(), handlePart.data(), IpcHandle::kSize);
    return handle;
  }
  if (raw[kKindAt] == kFailureKind) {
    const auto op = std::to_integer<unsigned>(raw[kOpAt]);
    if (!knownOp(op)) throw malformed("unknown operation " + std::to_string(op));
    if (!allZero(handlePart)) throw malformed("a failure record carries handle bytes");
    if (!allZero(registered)) throw malformed("a failure record carries a size or a label");
    std::uint32_t code = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      code |= std::to_integer<std::uint32_t>(raw[kCodeAt + i]) << (8 * i);
    }
    return ExchangeFailure{static_cast<Op>(op), static_cast<int>(code)};
  }
  throw malformed("unknown kind " + std::to_string(std::to_integer<unsigned>(raw[kKindAt])));
}

Registration ExchangeEntry::registration(std::span<const std::byte> raw) {
  Registration out;
  if (raw.size() != kSize) return out;
  for (std::size_t i = 0; i < kRegisteredSizeSize; ++i) {
    out.size |= std::to_integer<std::uint64_t>(raw[kRegisteredSizeAt + i]) << (8 * i);
  }
  const auto label = raw.subspan(kLabelAt, kLabelSize);
  const auto end = std::find(label.begin(), label.end(), std::byte{0});
  for (auto it = label.begin(); it != end; ++it) out.label.push_back(static_cast<char>(*it));
  return out;
}

std::span<std::byte> ExchangeEntry::handleBytes(std::span<std::byte> raw) {
  if (raw.size() != kSize || raw[0] != kMagic0 || raw[1] != kMagic1 || raw[kKindAt] != kHandleKind)
    return {};
  return raw.subspan(kHeaderSize, IpcHandle::kSize);
}

}  // namespace peerconf
