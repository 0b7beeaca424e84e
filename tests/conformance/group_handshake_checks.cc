// The handshake checks shared by the thread and MPI handshake tests.
#include "group_handshake_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "errors.h"
#include "hip/hip_variants.h"
#include "peer_buffer.h"

namespace peerconf::testing {
namespace {

// The word writer `writer` puts at word `i` of its region in `target`'s buffer.
std::uint32_t signedWord(int writer, int target, std::size_t i) {
  return 0xA5000000u | (static_cast<std::uint32_t>(writer) << 16) |
         (static_cast<std::uint32_t>(target) << 8) | static_cast<std::uint32_t>(i & 0xff);
}

constexpr std::size_t kWords = kRegionBytes / sizeof(std::uint32_t);

void writeRegion(std::int64_t peerBase, int writer, int target) {
  auto* words = reinterpret_cast<std::uint32_t*>(static_cast<std::uintptr_t>(peerBase) +
                                                 static_cast<std::size_t>(writer) * kRegionBytes);
  for (std::size_t i = 0; i < kWords; ++i) words[i] = signedWord(writer, target, i);
}

// Every write of every rank is visible once every rank has passed this point.
void barrier(Group& group) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ASSERT_EQ(group.allReduceMin(1), 1);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

std::size_t count(const std::vector<mock_hip::LedgerEntry>& entries, mock_hip::LedgerOp op) {
  return static_cast<std::size_t>(std::count_if(
      entries.begin(), entries.end(), [&](const auto& e) { return e.op == op && e.error == 0; }));
}

}  // namespace

mock_hip::FaultHook failOpenOf(int failingPeer, int code) {
  return [failingPeer, code](mock_hip::Call call, int, int peerDevice) {
    return call == mock_hip::Call::kOpen && peerDevice == failingPeer ? code : 0;
  };
}

std::string liveOnDevice(int device) {
  std::ostringstream out;
  for (const auto& e : mock_hip::liveAllocations(device)) {
    out << "live allocation 0x" << std::hex << e.ptr << std::dec << " (" << e.size << " bytes); ";
  }
  for (const auto& e : mock_hip::liveMappings(device)) {
    out << "live mapping 0x" << std::hex << e.ptr << std::dec << " of device " << e.ownerDevice
        << "; ";
  }
  return out.str();
}

std::vector<std::string> leftoverSegments(std::uint64_t job, const std::vector<int>& pids) {
  char jobHex[17] = {};
  std::snprintf(jobHex, sizeof jobHex, "%016llx", static_cast<unsigned long long>(job));
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("peerconf.", 0) != 0) continue;
    // peerconf.<job hex>.<pid>.<generation>
    std::istringstream fields(name.substr(std::strlen("peerconf.")));
    std::string jobField;
    std::string pidField;
    std::getline(fields, jobField, '.');
    std::getline(fields, pidField, '.');
    const bool ours = jobField == jobHex || std::any_of(pids.begin(), pids.end(), [&](int pid) {
                        return pidField == std::to_string(pid);
                      });
    if (ours) found.push_back(name);
  }
  return found;
}

void checkHandshakeSucceeds(Group& group) {
  const int rank = group.rank();
  const int size = group.size();
  SCOPED_TRACE("rank " + std::to_string(rank));
  const std::unique_ptr<IpcBackend> backendOwner = hip_mock::makeHipBackend(rank, rank);
  IpcBackend& backend = *backendOwner;
  PeerBuffer buffer(static_cast<std::size_t>(size) * kRegionBytes, backend, &group);

  ASSERT_EQ(buffer.rank(), rank);
  ASSERT_EQ(buffer.size(), size);
  ASSERT_EQ(buffer.bytes().size, static_cast<std::size_t>(size) * kRegionBytes);
  const std::vector<std::int64_t> addresses = buffer.addresses();
  ASSERT_EQ(addresses.size(), static_cast<std::size_t>(size));
  EXPECT_EQ(addresses[static_cast<std::size_t>(rank)],
            static_cast<std::int64_t>(buffer.bytes().data));
  for (int peer = 0; peer < size; ++peer) {
    EXPECT_NE(addresses[static_cast<std::size_t>(peer)], 0) << "address of peer " << peer;
  }
  // The device copy of the table holds the same addresses.
  std::vector<std::int64_t> table(addresses.size());
  backend.copyToHost(table.data(), buffer.addressesDevice(), table.size() * sizeof(std::int64_t));
  EXPECT_EQ(table, addresses);

  for (int target = 0; target < size; ++target) {
    writeRegion(addresses[static_cast<std::size_t>(target)], rank, target);
  }
  barrier(group);
  const auto* own =
      reinterpret_cast<const std::uint32_t*>(static_cast<std::uintptr_t>(buffer.bytes().data));
  for (int writer = 0; writer < size; ++writer) {
    const std::uint32_t* region = own + static_cast<std::size_t>(writer) * kWords;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kWords; ++i) wrong += region[i] != signedWord(writer, rank, i);
    EXPECT_EQ(wrong, 0u) << "words of writer " << writer << "'s region that are not its pattern";
  }
  // Nobody closes while a peer may still read or write its buffer.
  barrier(group);

  buffer.close();
  EXPECT_NO_THROW(buffer.close());  // idempotent
  EXPECT_EQ(buffer.bytes().size, 0u);
  EXPECT_TRUE(buffer.addresses().empty());
  EXPECT_EQ(liveOnDevice(rank), "");
  const auto entries = mock_hip::ledger(rank);
  const auto peers = static_cast<std::size_t>(size - 1);
  EXPECT_EQ(count(entries, mock_hip::LedgerOp::kOpen), peers);
  EXPECT_EQ(count(entries, mock_hip::LedgerOp::kClose), peers);
  EXPECT_EQ(count(entries, mock_hip::LedgerOp::kFree), count(entries, mock_hip::LedgerOp::kAlloc));
}

void checkHandshakeFailsEverywhere(Group& group, int failingRank, int failingPeer, int code) {
  const int rank = group.rank();
  SCOPED_TRACE("rank " + std::to_string(rank));
  const std::unique_ptr<IpcBackend> backend = hip_mock::makeHipBackend(rank, rank);
  try {
    PeerBuffer buffer(static_cast<std::size_t>(group.size()) * kRegionBytes, *backend, &group);
    ADD_FAILURE() << "the handshake succeeded although rank " << failingRank
                  << " could not open peer " << failingPeer;
  } catch (const HandshakeError& e) {
    EXPECT_EQ(e.rank(), rank);
    EXPECT_EQ(e.thisRank(), rank == failingRank);
    EXPECT_TRUE(e.cleanupErrors().empty()) << e.cleanupErrors().front();
    if (rank == failingRank) {
      EXPECT_STREQ(e.what(), "peer memory handshake failed on this TP rank");
      ASSERT_TRUE(e.cause());
      try {
        std::rethrow_exception(e.cause());
      } catch (const BackendError& cause) {
        EXPECT_EQ(cause.op(), Op::kOpenHandle);
        EXPECT_EQ(cause.rank(), failingRank);
        EXPECT_EQ(cause.peer(), failingPeer);
        EXPECT_EQ(cause.code(), code) << cause.what();
      } catch (const std::exception& other) {
        ADD_FAILURE() << "cause is not a BackendError: " << other.what();
      }
    } else {
      EXPECT_STREQ(e.what(), "peer memory handshake failed on another TP rank");
      EXPECT_FALSE(e.cause());
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected HandshakeError, got: " << e.what();
  }
  EXPECT_EQ(liveOnDevice(rank), "");
  if (rank == failingRank) {
    const auto entries = mock_hip::ledger(rank);
    EXPECT_TRUE(std::any_of(entries.begin(), entries.end(), [&](const auto& entry) {
      return entry.op == mock_hip::LedgerOp::kOpen && entry.error == code;
    })) << "the injected open failure is not in the ledger";
  }
}

}  // namespace peerconf::testing
