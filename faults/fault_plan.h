// FaultPlan and RankFaults: the faults of a scenario, resolved per rank and drawn deterministically
// from (scenario, rank, seed). The decorators ask RankFaults whether a fault fires now.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "event_log.h"
#include "faults/rank_control.h"
#include "ipc_backend.h"
#include "scenario.h"

namespace peerconf::faults {

// The names scenario files use: "get-handle", "handle-stale", ...; "before-construct", "agree", ...
std::string_view siteName(harness::FaultSite site);
std::string_view pointName(harness::Point point);
// The hipError_t an error site fails with when its Fault has `error` 0 (a Fault built in code; the
// parser fills the same defaults): alloc and alloc-table 2 (hipErrorOutOfMemory), get-handle,
// open, close, free and copy-table 1 (hipErrorInvalidValue); 0 for the other sites.
int defaultError(harness::FaultSite site);
// "hipErrorMapFailed" for 205; "hipError(1234)" for a code this table does not know (the same
// spelling as harness::hipErrorName, without linking the scenario parser).
std::string hipErrorName(int code);

// The faults of one rank. Every fault naming this rank has its own draw stream, seeded from
// (seed, rank, the fault's index in the scenario) with splitmix64, and its own count. Each
// eligible call (site, rank, peer and point all match) draws once from each eligible fault in
// scenario order until one fires: it fires when its count is not used up and the draw is below
// its probability. So the n-th eligible call's decision depends only on the scenario, the seed
// and the rank, never on timing or on other ranks. A firing fault records a kFault event
// (what = site name, peer, readable detail) in the rank's log before anything else happens.
//
// Used by one rank: its decorators and the runtime hooks they install (called on the rank's own
// thread). A mutex still guards the state, so a hook called from elsewhere cannot corrupt it.
class RankFaults {
 public:
  // `log` must outlive this object.
  RankFaults(std::shared_ptr<const harness::Scenario> scenario, int rank, std::uint64_t seed,
             harness::EventLog& log);
  RankFaults(const RankFaults&) = delete;
  RankFaults& operator=(const RankFaults&) = delete;

  int rank() const noexcept { return rank_; }
  std::uint64_t seed() const noexcept { return seed_; }
  const harness::Scenario& scenario() const noexcept { return *scenario_; }

  // Error sites: the hipError_t to fail this call with when a fault fires, nullopt otherwise.
  std::optional<int> failAlloc();
  std::optional<int> failGetHandle();
  std::optional<int> failOpen(int peer);
  std::optional<int> failClose(int peer);
  std::optional<int> failFree();
  // The device address table: its allocation (allocDevice) and the copy into it (copyToDevice).
  std::optional<int> failAllocTable();
  std::optional<int> failCopyTable();

  // not-ready: whether this rank's setup failed before the constructor (asked once a run, by
  // the rank runner; recorded as a kFault event when it fires).
  bool notReady();
  // group-fail: whether the group call at `at` (kExchange or kAgree) fails on this rank now.
  bool failGroup(harness::Point at);
  // handle-corrupt / handle-stale: whether this rank, receiving `peer`'s handle now, gets it
  // corrupted / gets the peer's stale handle instead. Never for its own slot.
  bool corruptHandle(int peer);
  bool staleHandle(int peer);

  // Applies the point's faults in order: every delay that fires (sleeps for it: the lateness is
  // the fault), then the first death that fires (control.die), then the first hang
  // (control.hang). Each is recorded before it acts.
  void atPoint(harness::Point at, RankControl& control);

  // True when some fault names `site` for this rank, whatever its count or probability.
  bool names(harness::FaultSite site) const;
  // True when the scenario has a handle-stale fault for any rank: then every rank exports a stale
  // handle next to its real one (see FaultyBackend and FaultyGroup).
  bool staleExchange() const noexcept { return staleExchange_; }
  // The stale handle this rank's backend made for the next exchange, handed to its group.
  void putStaleHandle(const IpcHandle& handle);
  std::optional<IpcHandle> takeStaleHandle();

  // The sites that fired at least once on this rank.
  std::set<harness::FaultSite> fired() const;

 private:
  struct Slot {
    const harness::Fault* fault;
    std::size_t index;     // in scenario.faults
    std::uint64_t stream;  // splitmix64 state
    int fired = 0;
  };
  // Draws once from `slot`; true (and counted) when it fires.
  bool fires(Slot& slot);
  // The first fault of `site` that is eligible and fires, in scenario order.
  template <typename Eligible>
  const Slot* draw(harness::FaultSite site, Eligible eligible);
  void record(const Slot& slot, int peer, std::string detail);
  std::optional<int> failWith(harness::FaultSite site, int peer, std::string_view action);

  std::shared_ptr<const harness::Scenario> scenario_;
  int rank_;
  std::uint64_t seed_;
  harness::EventLog& log_;
  bool staleExchange_ = false;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;  // the faults naming this rank, in scenario order
  std::set<harness::FaultSite> fired_;
  std::optional<IpcHandle> stale_;
};

// A scenario's faults for every rank. The seed defaults to the scenario's.
class FaultPlan {
 public:
  explicit FaultPlan(harness::Scenario scenario);
  FaultPlan(harness::Scenario scenario, std::uint64_t seed);

  const harness::Scenario& scenario() const noexcept { return *scenario_; }
  std::uint64_t seed() const noexcept { return seed_; }
  // The faults of `rank`, recording into `log` (which must outlive them). Each call starts fresh
  // counts and streams: the same (scenario, seed, rank) always yields the same decisions.
  std::unique_ptr<RankFaults> forRank(int rank, harness::EventLog& log) const;

 private:
  std::shared_ptr<const harness::Scenario> scenario_;
  std::uint64_t seed_;
};

}  // namespace peerconf::faults
