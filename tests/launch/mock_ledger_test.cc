// The mocked runtime's ledger as the harness keeps it (mock_ledger.h): every field of an entry
// copied, failed calls included, per device, and its length.
#include "launch/mock_ledger.h"

#include <gtest/gtest.h>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"

namespace peerconf::harness {

using launch::copyMockLedger;
using launch::mockLedgerLength;
using model::LedgerRecord;
namespace {

class MockLedger : public ::testing::Test {
 protected:
  void SetUp() override { mock_hip::resetAll(); }
  void TearDown() override {
    (void)mock_hip::hipSetDevice(0);
    mock_hip::resetAll();
  }
};

TEST_F(MockLedger, EveryEntryOfTheDeviceIsCopiedFailedCallsIncluded) {
  ASSERT_EQ(mock_hip::hipSetDevice(1), mock_hip::hipSuccess);
  void* ptr = nullptr;
  ASSERT_EQ(mock_hip::hipMalloc(&ptr, 4096), mock_hip::hipSuccess);
  ASSERT_EQ(mock_hip::hipFree(ptr), mock_hip::hipSuccess);
  EXPECT_NE(mock_hip::hipFree(ptr), mock_hip::hipSuccess);  // freed twice: a failed call

  const std::vector<LedgerRecord> copied = copyMockLedger(1);
  const auto raw = mock_hip::ledger(1);
  ASSERT_EQ(copied.size(), 3u);
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_EQ(copied[0].op, "alloc");
  EXPECT_EQ(copied[1].op, "free");
  EXPECT_EQ(copied[2].op, "free");
  EXPECT_EQ(copied[0].ptr, reinterpret_cast<std::uint64_t>(ptr));
  EXPECT_EQ(copied[0].size, 4096u);
  EXPECT_EQ(copied[0].error, 0);
  EXPECT_NE(copied[2].error, 0);
  for (std::size_t i = 0; i < copied.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(copied[i].ptr, raw[i].ptr);
    EXPECT_EQ(copied[i].size, raw[i].size);
    EXPECT_EQ(copied[i].ownerDevice, raw[i].ownerDevice);
    EXPECT_EQ(copied[i].generation, raw[i].generation);
    EXPECT_EQ(copied[i].error, raw[i].error);
  }
  EXPECT_EQ(mockLedgerLength(1), 3u);
  // Another device's ledger, and one out of range, hold nothing.
  EXPECT_TRUE(copyMockLedger(0).empty());
  EXPECT_EQ(mockLedgerLength(0), 0u);
  EXPECT_TRUE(copyMockLedger(100000).empty());
}

TEST_F(MockLedger, TheLengthFollowsTheLedgerAndItsClearing) {
  ASSERT_EQ(mock_hip::hipSetDevice(2), mock_hip::hipSuccess);
  void* ptr = nullptr;
  ASSERT_EQ(mock_hip::hipMalloc(&ptr, 64), mock_hip::hipSuccess);
  EXPECT_EQ(mockLedgerLength(2), 1u);
  ASSERT_EQ(mock_hip::hipFree(ptr), mock_hip::hipSuccess);
  EXPECT_EQ(mockLedgerLength(2), 2u);
  mock_hip::clearLedgers();
  EXPECT_EQ(mockLedgerLength(2), 0u);
  EXPECT_TRUE(copyMockLedger(2).empty());
}

}  // namespace
}  // namespace peerconf::harness
