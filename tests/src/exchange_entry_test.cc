// ExchangeEntry: the exchange's wire format round-trips, and nothing malformed or forged decodes.
#include "exchange_entry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

namespace peerconf {
namespace {

IpcHandle someHandle() {
  IpcHandle h;
  for (std::size_t i = 0; i < IpcHandle::kSize; ++i) h.bytes[i] = static_cast<std::byte>(i + 1);
  return h;
}

TEST(ExchangeEntryTest, HandleRoundTrips) {
  auto raw = ExchangeEntry::encode(someHandle());
  ASSERT_EQ(raw.size(), ExchangeEntry::kSize);
  const auto entry = ExchangeEntry::decode(raw, 0, 1);
  ASSERT_TRUE(std::holds_alternative<IpcHandle>(entry));
  EXPECT_EQ(std::get<IpcHandle>(entry), someHandle());
  EXPECT_EQ(ExchangeEntry::handleBytes(raw).size(), IpcHandle::kSize);
}

TEST(ExchangeEntryTest, FailureRoundTripsWithNegativeCodesAndHasNoHandleBytes) {
  for (const ExchangeFailure failure :
       {ExchangeFailure{Op::kAlloc, 2}, ExchangeFailure{Op::kGetHandle, -7},
        ExchangeFailure{Op::kClose, 0x7fffffff}}) {
    auto raw = ExchangeEntry::encode(failure);
    const auto entry = ExchangeEntry::decode(raw, 0, 1);
    ASSERT_TRUE(std::holds_alternative<ExchangeFailure>(entry));
    EXPECT_EQ(std::get<ExchangeFailure>(entry), failure);
    EXPECT_TRUE(ExchangeEntry::handleBytes(raw).empty()) << "a failure record exposes a handle";
  }
}

TEST(ExchangeEntryTest, AHandleEntryCarriesItsSizeAndLabel) {
  for (const Registration& r :
       {Registration{4096, "weights"}, Registration{0, ""},
        Registration{~std::uint64_t{0}, std::string(ExchangeEntry::kLabelSize, '~')}}) {
    const auto raw = ExchangeEntry::encode(someHandle(), r);
    ASSERT_EQ(raw.size(), ExchangeEntry::kSize);
    const auto entry = ExchangeEntry::decode(raw, 0, 1);
    ASSERT_TRUE(std::holds_alternative<IpcHandle>(entry));
    EXPECT_EQ(std::get<IpcHandle>(entry), someHandle());
    EXPECT_EQ(ExchangeEntry::registration(raw), r);
  }
  EXPECT_EQ(ExchangeEntry::registration(ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2})),
            Registration{});
}

TEST(ExchangeEntryTest, OnlyShortPrintableLabelsAreEncoded) {
  EXPECT_TRUE(ExchangeEntry::validLabel(""));
  EXPECT_TRUE(ExchangeEntry::validLabel("kv-cache layer 3"));
  EXPECT_FALSE(ExchangeEntry::validLabel(std::string(ExchangeEntry::kLabelSize + 1, 'a')));
  EXPECT_FALSE(ExchangeEntry::validLabel("new\nline"));
  EXPECT_FALSE(ExchangeEntry::validLabel(std::string("nul\0inside", 10)));
  EXPECT_THROW(ExchangeEntry::encode(someHandle(), {1, "new\nline"}), std::invalid_argument);
}

void expectMalformed(std::vector<std::byte> raw, const char* why) {
  try {
    ExchangeEntry::decode(raw, 3, 5);
    FAIL() << why << ": decoded";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.rank(), 3) << why;
    EXPECT_EQ(e.peer(), 5) << why;
    EXPECT_EQ(e.op(), Op::kAllGather) << why;
  }
}

TEST(ExchangeEntryTest, MalformedEntriesAreGroupErrorsNamingThePeer) {
  const auto good = ExchangeEntry::encode(someHandle());
  auto shortEntry = good;
  shortEntry.pop_back();
  expectMalformed(shortEntry, "short");
  expectMalformed(std::vector<std::byte>(IpcHandle::kSize), "a bare handle");
  auto magic = good;
  magic[0] = std::byte{0};
  expectMalformed(magic, "bad magic");
  auto kind = good;
  kind[2] = std::byte{9};
  expectMalformed(kind, "unknown kind");
  auto handleWithCode = good;
  handleWithCode[5] = std::byte{1};
  expectMalformed(handleWithCode, "a handle entry with a code");
}

TEST(ExchangeEntryTest, AFailureRecordCarryingHandleBytesIsRefusedNotOpened) {
  auto forged = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  forged.back() = std::byte{0x42};
  expectMalformed(forged, "failure with handle bytes");
  auto badOp = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  badOp[3] = std::byte{200};
  expectMalformed(badOp, "unknown operation");
  auto sized = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  sized[ExchangeEntry::kHeaderSize + IpcHandle::kSize] = std::byte{1};
  expectMalformed(sized, "failure with a size");
  auto labelled = ExchangeEntry::encode(ExchangeFailure{Op::kAlloc, 2});
  labelled[ExchangeEntry::kSize - ExchangeEntry::kLabelSize] = std::byte{'w'};
  expectMalformed(labelled, "failure with a label");
}

TEST(ExchangeEntryTest, ALabelIsPrintableAndNulPaddedOrTheEntryIsMalformed) {
  const std::size_t labelAt = ExchangeEntry::kSize - ExchangeEntry::kLabelSize;
  auto control = ExchangeEntry::encode(someHandle(), {64, "weights"});
  control[labelAt + 1] = std::byte{0x07};
  expectMalformed(control, "a control character in the label");
  auto afterNul = ExchangeEntry::encode(someHandle(), {64, "weights"});
  afterNul[labelAt + 9] = std::byte{'x'};  // "weights\0\0x": two labels could compare unequal
  expectMalformed(afterNul, "bytes after the label's NUL");
}

}  // namespace
}  // namespace peerconf
