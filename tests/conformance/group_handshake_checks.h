// PeerBuffer handshake checks over a real group and the mocked HIP runtime, run inside every rank
// (device = rank). Shared by thread_handshake_test.cc (ranks as threads) and
// mpi_handshake_test.cc (ranks as MPI processes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "group.h"
#include "mock_hip/control.h"

namespace peerconf::testing {

// Bytes each writer owns in every rank's buffer.
inline constexpr std::size_t kRegionBytes = 512;

// Success (C4, C3): every rank writes a rank-signed pattern into every peer's buffer through
// addresses(), meets the others (allReduceMin), finds each writer's pattern at the writer's region
// of its own bytes(); addresses()[rank] == bytes().data; close() (twice) leaves nothing live in
// this rank's ledger, every open closed once and every allocation freed once.
void checkHandshakeSucceeds(Group& group);

// Failure (C1, C2, C3), with a fault hook already failing `failingRank`'s open of `failingPeer`'s
// handle with `code`: every rank throws HandshakeError, "this" with the BackendError as cause on
// the failing rank, "another" elsewhere, and nothing stays live in this rank's ledger.
void checkHandshakeFailsEverywhere(Group& group, int failingRank, int failingPeer, int code);

// A hook for setFaultHook(failingRank, ...) failing opens of `failingPeer`'s handles with `code`.
mock_hip::FaultHook failOpenOf(int failingPeer, int code);

// This rank's leftovers: live allocations and mappings of `device`, as text (empty when none).
std::string liveOnDevice(int device);

// /dev/shm entries named peerconf.* that belong to `job` or to one of `pids` (empty when none).
std::vector<std::string> leftoverSegments(std::uint64_t job, const std::vector<int>& pids);

}  // namespace peerconf::testing
