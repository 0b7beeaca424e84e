// RankSettle: what the harness does on a rank once the core's run is over, the same under every
// launcher and runtime, so that no scenario can see another's leftovers:
//  1. release for real what injected close/free failures left held (FaultyBackend::leftovers()),
//     through the plain backend, after the rank's ledger was taken: the core saw the failure, C3
//     judges it from the ledger/seam record exactly as before, and never sees this release;
//  2. check that the rank's device holds nothing the run created: its free memory (hipMemGetInfo)
//     against before the run, where any drop is a leftover, and under the mock also the runtime's
//     own live allocations and mappings against those before the run (naming each one, mappings
//     included: they cost a device no memory). C3 reports each (RankResult::deviceLeftovers).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backend_factory.h"
#include "faults/faulty_backend.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

class RankSettle {
 public:
  // Right after the rank's real backend (`plain`) exists, before the core runs: what `device`
  // holds now. On GPUs, the first call of a process first allocates, exports and frees a buffer
  // of each kind through `plain`, so that what the runtime keeps after its first use (pools,
  // export bookkeeping) is not counted as the first scenario's drop.
  RankSettle(Runtime runtime, int device, IpcBackend& plain, std::string scenario = {});

  // Once the core's run is over (its buffer destroyed) and result.ledger was taken: releases
  // `leftovers` through `plain`, each noted in result.harnessReleases with `why` it was held
  // (default: an injected close or free failure).
  void release(IpcBackend& plain, const std::vector<faults::FaultyBackend::Leftover>& leftovers,
               model::RankResult& result, const std::string& why = {}) const;

  // Once every rank of the scenario has released (on GPUs a peer's unclosed mapping keeps this
  // rank's freed buffer alive): appends to result.deviceLeftovers what the device holds that it
  // did not hold before. Every rank that gets here is checked, a planted death or hang included
  // (its process lives on to the next scenario); C3 judges the ranks it judges.
  // `judgeMemory` false skips the free-memory comparison (a peer killed for real frees its
  // mappings on the driver's time) and says so in result.harnessReleases.
  void check(model::RankResult& result, bool judgeMemory = true) const;
  // check() without the free-memory comparison: under the mock, what the rank's own device holds
  // that it did not hold before, by name. For ranks whose shared GPU the launcher judges as a
  // whole (SharedGpuMemory).
  void checkHeld(model::RankResult& result) const;

  // PEERCONF_GPU_MEMINFO set: every check prints the rank's free memory before and after.
  static bool printMemory();

 private:
  using Live = std::tuple<int, std::uint64_t, std::uint64_t>;  // kind (0 alloc, 1 map), ptr, gen

  Runtime runtime_;
  int device_;
  std::string scenario_;                      // for PEERCONF_GPU_MEMINFO's lines
  std::set<Live> before_;                     // mock
  std::optional<DeviceMemory> memoryBefore_;  // GPU
};

}  // namespace peerconf::harness::launch
