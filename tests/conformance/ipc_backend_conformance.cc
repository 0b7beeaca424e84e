// The IpcBackend conformance cases, written once; each *_conformance_test.cc instantiates them for
// one implementation. Ranks use device = rank (device 0 when the implementation shares one); every
// rank's failures are reported, by rank.
#include "ipc_backend_conformance.h"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace peerconf::conformance {
namespace {

constexpr std::size_t kBytes = std::size_t{1} << 16;

// A pattern that names its writer, so a write landing in the wrong buffer is visible.
std::vector<std::uint32_t> signedPattern(int writer, std::size_t words) {
  std::vector<std::uint32_t> out(words);
  for (std::size_t i = 0; i < words; ++i) {
    out[i] =
        (static_cast<std::uint32_t>(writer) << 24) ^ static_cast<std::uint32_t>(i * 2654435761u);
  }
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_P(IpcBackendConformance, AllocCopyFree) {
  CONFORMANCE_REQUIRE_DEVICES(1);
  run(1, [](Rank& r) {
    IpcBackend& b = r.backend();
    RANK_CHECK(r, b.rank() == 0);
    const DevicePtr buffer = b.allocUncached(kBytes);
    const DevicePtr table = b.allocDevice(256);
    RANK_CHECK(r, buffer != 0);
    RANK_CHECK(r, table != 0);
    RANK_CHECK(r, buffer != table);
    RANK_CHECK(r, r.liveAllocations().value_or(2) == 2);
    for (const DevicePtr p : {buffer, table}) {
      const auto in = signedPattern(5, 64);
      std::vector<std::uint32_t> out(64, 0);
      b.copyToDevice(p, in.data(), 256);
      b.copyToHost(out.data(), p, 256);
      RANK_CHECK(r, out == in);
    }
    b.freeDeviceMem(table);
    b.freeDeviceMem(buffer);
    RANK_CHECK(r, r.liveAllocations().value_or(0) == 0);
  });
}

TEST_P(IpcBackendConformance, PeerOpensHandleAndItsWritesLandInTheOwner) {
  CONFORMANCE_REQUIRE_DEVICES(2);
  run(2, [](Rank& r) {
    IpcBackend& b = r.backend();
    const std::size_t words = kBytes / sizeof(std::uint32_t);
    if (r.rank() == 0) {
      const DevicePtr buffer = b.allocUncached(kBytes);
      const std::vector<std::uint32_t> zeros(words, 0);
      b.copyToDevice(buffer, zeros.data(), kBytes);
      r.sendHandle(1, b.getMemHandle(buffer));
      r.wait(1);
      std::vector<std::uint32_t> seen(words, 0);
      b.copyToHost(seen.data(), buffer, kBytes);
      RANK_CHECK(r, seen == signedPattern(1, words));
      b.freeDeviceMem(buffer);
    } else {
      const DevicePtr mapped = b.openMemHandle(r.recvHandle(0), 0);
      RANK_CHECK(r, mapped != 0);
      RANK_CHECK(r, r.liveMappings().value_or(1) == 1);
      const auto pattern = signedPattern(1, words);
      b.copyToDevice(mapped, pattern.data(), kBytes);
      b.closeMemHandle(mapped, 0);
      RANK_CHECK(r, r.liveMappings().value_or(0) == 0);
      r.signal(0);
    }
  });
}

TEST_P(IpcBackendConformance, EveryRankMapsEveryPeer) {
  CONFORMANCE_REQUIRE_DEVICES(2);
  const int n = std::min(4, probeDevices(GetParam()).count);
  run(n, [n](Rank& r) {
    IpcBackend& b = r.backend();
    const std::size_t slot = kBytes / static_cast<std::size_t>(n);
    const DevicePtr buffer = b.allocUncached(kBytes);
    const IpcHandle own = b.getMemHandle(buffer);
    for (int peer = 0; peer < n; ++peer) {
      if (peer != r.rank()) r.sendHandle(peer, own);
    }
    std::vector<DevicePtr> peers(static_cast<std::size_t>(n), 0);
    for (int peer = 0; peer < n; ++peer) {
      if (peer != r.rank())
        peers[static_cast<std::size_t>(peer)] = b.openMemHandle(r.recvHandle(peer), peer);
    }
    // Write this rank's signed pattern into its slot of every peer's buffer.
    const auto pattern = signedPattern(r.rank(), slot / sizeof(std::uint32_t));
    for (int peer = 0; peer < n; ++peer) {
      if (peer == r.rank()) continue;
      b.copyToDevice(
          peers[static_cast<std::size_t>(peer)] + static_cast<std::size_t>(r.rank()) * slot,
          pattern.data(), slot);
    }
    r.barrier();
    for (int writer = 0; writer < n; ++writer) {
      if (writer == r.rank()) continue;
      std::vector<std::uint32_t> seen(slot / sizeof(std::uint32_t));
      b.copyToHost(seen.data(), buffer + static_cast<std::size_t>(writer) * slot, slot);
      RANK_CHECK(r, seen == signedPattern(writer, seen.size()));
    }
    r.barrier();  // nobody closes while a peer may still write
    for (int peer = 0; peer < n; ++peer) {
      if (peer != r.rank()) b.closeMemHandle(peers[static_cast<std::size_t>(peer)], peer);
    }
    b.freeDeviceMem(buffer);
  });
}

TEST_P(IpcBackendConformance, OpeningOwnHandleIsRefusedWithInvalidContext) {
  CONFORMANCE_REQUIRE_DEVICES(1);
  run(1, [](Rank& r) {
    IpcBackend& b = r.backend();
    const DevicePtr buffer = b.allocUncached(kBytes);
    const IpcHandle own = b.getMemHandle(buffer);
    const auto error = backendErrorOf([&] { b.openMemHandle(own, 0); });
    RANK_CHECK(r, error.has_value());
    if (error) {
      RANK_CHECK(r, error->op() == Op::kOpenHandle);
      RANK_CHECK(r, error->code() == 201);
    }
    RANK_CHECK(r, r.liveMappings().value_or(0) == 0);
    b.freeDeviceMem(buffer);
  });
}

TEST_P(IpcBackendConformance, GarbageHandleIsRefusedAndNeverMapped) {
  CONFORMANCE_REQUIRE_DEVICES(1);
  run(1, [](Rank& r) {
    IpcBackend& b = r.backend();
    IpcHandle garbage;
    for (std::size_t i = 0; i < IpcHandle::kSize; ++i) {
      garbage.bytes[i] = static_cast<std::byte>(i * 37 + 11);
    }
    const auto error = backendErrorOf([&] { b.openMemHandle(garbage, 3); });
    RANK_CHECK(r, error.has_value());
    if (error) {
      RANK_CHECK(r, error->op() == Op::kOpenHandle);
      RANK_CHECK(r, error->code() == 1);
      RANK_CHECK(r, error->peer() == 3);
    }
    RANK_CHECK(r, r.liveMappings().value_or(0) == 0);
  });
}

// A block of its own (4 MiB): a freed small block's handle opens while another block keeps its
// chunk alive, on CUDA and on the mock (runtime_table.yaml stale-small-chunk-live).
TEST_P(IpcBackendConformance, StaleHandleIsRefused) {
  CONFORMANCE_REQUIRE_DEVICES(2);
  run(2, [](Rank& r) {
    IpcBackend& b = r.backend();
    if (r.rank() == 0) {
      const DevicePtr buffer = b.allocUncached(std::size_t{4} << 20);
      const IpcHandle handle = b.getMemHandle(buffer);
      b.freeDeviceMem(buffer);
      r.sendHandle(1, handle);
      r.wait(1);  // stay alive: the handle is stale because of the free, not a dead owner
    } else {
      const IpcHandle stale = r.recvHandle(0);
      const auto error = backendErrorOf([&] { b.openMemHandle(stale, 0); });
      RANK_CHECK(r, error.has_value());
      if (error) {
        RANK_CHECK(r, error->op() == Op::kOpenHandle);
        RANK_CHECK(r, error->peer() == 0);
      }
      RANK_CHECK(r, r.liveMappings().value_or(0) == 0);
      r.signal(0);
    }
  });
}

TEST_P(IpcBackendConformance, ClosingTwiceFails) {
  CONFORMANCE_REQUIRE_DEVICES(2);
  run(2, [](Rank& r) {
    IpcBackend& b = r.backend();
    if (r.rank() == 0) {
      const DevicePtr buffer = b.allocUncached(kBytes);
      r.sendHandle(1, b.getMemHandle(buffer));
      r.wait(1);
      b.freeDeviceMem(buffer);
    } else {
      const DevicePtr mapped = b.openMemHandle(r.recvHandle(0), 0);
      b.closeMemHandle(mapped, 0);
      const auto error = backendErrorOf([&] { b.closeMemHandle(mapped, 0); });
      RANK_CHECK(r, error.has_value());
      if (error) {
        RANK_CHECK(r, error->op() == Op::kCloseHandle);
        RANK_CHECK(r, error->peer() == 0);
        RANK_CHECK(r, error->code() != 0);
      }
      r.signal(0);
    }
  });
}

TEST_P(IpcBackendConformance, FreeingTwiceFails) {
  CONFORMANCE_REQUIRE_DEVICES(1);
  run(1, [](Rank& r) {
    IpcBackend& b = r.backend();
    const DevicePtr buffer = b.allocUncached(kBytes);
    b.freeDeviceMem(buffer);
    const auto error = backendErrorOf([&] { b.freeDeviceMem(buffer); });
    RANK_CHECK(r, error.has_value());
    if (error) {
      RANK_CHECK(r, error->op() == Op::kFree);
      RANK_CHECK(r, error->peer() == kNoPeer);
      RANK_CHECK(r, error->code() != 0);
    }
  });
}

TEST_P(IpcBackendConformance, ErrorsCarryRankPeerOpCodeTextCallAndPlace) {
  CONFORMANCE_REQUIRE_DEVICES(2);
  run(2, [](Rank& r) {
    if (r.rank() != 1) return;  // rank 1, so a rank field stuck at 0 is caught
    IpcBackend& b = r.backend();
    const DevicePtr buffer = b.allocUncached(kBytes);
    const auto error = backendErrorOf([&] { b.openMemHandle(b.getMemHandle(buffer), 7); });
    RANK_CHECK(r, error.has_value());
    if (error) {
      RANK_CHECK(r, error->rank() == 1);
      RANK_CHECK(r, error->peer() == 7);
      RANK_CHECK(r, error->op() == Op::kOpenHandle);
      RANK_CHECK(r, error->code() == 201);
      RANK_CHECK(r, !error->codeText().empty());
      RANK_CHECK(r, contains(error->call(), "hipIpcOpenMemHandle"));
      RANK_CHECK(r, error->where().starts_with("hip_backend.cc:"));
      RANK_CHECK(r, contains(error->what(), "rank 1"));
      RANK_CHECK(r, contains(error->what(), "peer 7"));
      RANK_CHECK(r, contains(error->what(), error->codeText()));
    }
    b.freeDeviceMem(buffer);
  });
}

}  // namespace
// ---- Fixture ---------------------------------------------------------------------------------

std::string IpcBackendConformance::missingDevices(int n) const {
  // Processes sharing one device need only that one.
  if (GetParam().sharedDevice) n = 1;
  const hip::DeviceCount count = probeDevices(GetParam());
  if (count.count == 0) {
    return "no GPU device: hipGetDeviceCount returned " + std::to_string(count.code) + " (" +
           count.text + ")";
  }
  if (count.count < n) {
    return "needs " + std::to_string(n) + " devices; hipGetDeviceCount reported " +
           std::to_string(count.count);
  }
  return {};
}

void IpcBackendConformance::run(int nranks, const RankBody& body) {
  const auto reports = runRanks(GetParam(), nranks, body);
  ASSERT_EQ(reports.size(), static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    for (const auto& f : reports[static_cast<std::size_t>(r)].failures) ADD_FAILURE() << f;
  }
}

std::string implementationName(const ::testing::TestParamInfo<Implementation>& info) {
  return info.param.name;
}

}  // namespace peerconf::conformance
