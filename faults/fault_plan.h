// FaultPlan and RankFaults: the faults of a scenario, resolved per rank and drawn deterministically
// from (scenario, rank, seed). The decorators ask RankFaults whether a fault fires now.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "errors.h"
#include "faults/fault_spec.h"
#include "faults/rank_control.h"
#include "ipc_backend.h"

namespace peerconf::faults {

// What a foreign-exception fault throws: a backend's own exception type, deliberately not a
// peerconf::Error (no operation, peer or code for the core to read).
class ForeignException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a rank's fired faults are recorded (the harness's event log implements it).
class FaultLog {
 public:
  FaultLog() = default;
  FaultLog(const FaultLog&) = delete;
  FaultLog& operator=(const FaultLog&) = delete;
  virtual ~FaultLog() = default;
  // Fault number `index` (in the plan's list) fired at `site` (peer -1: none): `detail` says what;
  // `construction` is the buffer of `buffers:` whose calls the rank was making (0 for one buffer:
  // RankFaults::setConstruction), so a fault aimed at one buffer can be held to it.
  virtual void fired(std::string_view site, int peer, std::string detail, int index,
                     int construction) = 0;
};

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
  RankFaults(std::shared_ptr<const std::vector<FaultSpec>> faults, int rank, std::uint64_t seed,
             FaultLog& log);
  RankFaults(const RankFaults&) = delete;
  RankFaults& operator=(const RankFaults&) = delete;

  int rank() const noexcept { return rank_; }
  std::uint64_t seed() const noexcept { return seed_; }

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
  bool failGroup(Point at);
  // collective-order: whether this rank makes its group call at `at` (kExchange or kAgree) after
  // the other collective, as its peers would not (FaultyGroup).
  bool reorderCollectives(Point at);
  // handle-corrupt / handle-stale: whether this rank, receiving `peer`'s handle now, gets it
  // corrupted / gets the peer's stale handle instead. Never for its own slot.
  bool corruptHandle(int peer);
  bool staleHandle(int peer);
  // entry-corrupt: the part of `peer`'s exchange entry this rank damages as it receives it, or
  // nullopt. Never for its own slot. `failureRecord`: the entry is a failure record (the detail
  // says which byte the part names there).
  std::optional<EntryPart> corruptEntry(int peer, bool failureRecord);
  // exchange-long: whether the exchange this rank receives now (of `entries` entries, one a rank)
  // gets one entry more.
  bool lengthenExchange(std::size_t entries);
  // foreign-exception: throws ForeignException when a fault names `call` (and, at open, `peer`)
  // for this rank, after recording it; returns otherwise.
  void throwForeign(SeamCall call, int peer = peerconf::kNoPeer);

  // Applies the point's faults in order: every delay that fires (sleeps for it: the lateness is
  // the fault), then the first death that fires (control.die), then the first exit
  // (control.exit), then the first hang (control.hang). Each is recorded before it acts. Deaths,
  // hangs and exits that name a `peer` are not the point's: atOpenOf applies them.
  void atPoint(Point at, RankControl& control);
  // Inside this rank's open of `peer`, once the runtime answered (the mapping made, or its failure
  // met): the death, exit or hang at `open` that names that peer (an open that fails and then
  // exits, as vLLM's CUDACHECK does when cudaIpcOpenMemHandle fails).
  void atOpenOf(int peer, RankControl& control);

  // True when some fault names `site` for this rank, whatever its count or probability.
  bool names(Site site) const;
  // True when the scenario has a handle-stale fault for any rank: then every rank exports a stale
  // handle next to its real one (see FaultyBackend and FaultyGroup).
  bool staleExchange() const noexcept { return staleExchange_; }
  // The same for handle-aliased: every rank exports an aliased handle next to its real one.
  bool aliasExchange() const noexcept { return aliasExchange_; }
  // handle-aliased: whether this rank, receiving `peer`'s handle now, gets the aliased one.
  bool aliasedHandle(int peer);
  void putAliasedHandle(const IpcHandle& handle);
  std::optional<IpcHandle> takeAliasedHandle();
  // The same for handle-mapped: every rank exports, next to its real handle, the one it exported
  // for its previous buffer while that buffer is alive (else none: an all-zero handle).
  bool mappedExchange() const noexcept { return mappedExchange_; }
  // handle-mapped: whether this rank, receiving `peer`'s handle now, gets the one it still maps.
  bool mappedHandle(int peer);
  void putMappedHandle(const IpcHandle& handle);
  std::optional<IpcHandle> takeMappedHandle();
  // The stale handle this rank's backend made for the next exchange, handed to its group.
  void putStaleHandle(const IpcHandle& handle);
  std::optional<IpcHandle> takeStaleHandle();

  // What `peer` exported in the exchange this rank received last (FaultyGroup records it before
  // any handle fault replaced or damaged it) and the size it registered (0: unknown): what this
  // rank's open of that peer must reach (FaultyBackend's mapping check).
  struct Exported {
    IpcHandle handle;
    std::uint64_t bytes = 0;
  };
  void putExported(int peer, const Exported& exported);
  std::optional<Exported> exported(int peer) const;

  // The construction the rank's calls belong to from now on (the rank runner says so before it
  // constructs, closes or destroys buffer `number` of `buffers:`): a fault aimed at one buffer
  // (FaultSpec::onBuffer) is eligible only while its buffer's calls are made. Starts at 0.
  void setConstruction(std::size_t number);

  // The sites that fired at least once on this rank.
  std::set<Site> fired() const;

 private:
  struct Slot {
    const FaultSpec* fault;
    std::size_t index;     // in scenario.faults
    std::uint64_t stream;  // splitmix64 state
    int fired = 0;
  };
  // Draws once from `slot`; true (and counted) when it fires.
  bool fires(Slot& slot);
  // The first fault of `site` that is eligible and fires, in scenario order.
  template <typename Eligible>
  const Slot* draw(Site site, Eligible eligible);
  void record(const Slot& slot, int peer, std::string detail);
  // handle-stale, -aliased, -mapped: whether this rank, receiving `peer`'s handle now, gets the
  // other handle `site` stands for (recorded: "rank R receives for peer P " + what).
  bool receivesInstead(Site site, int peer, const std::string& what);
  std::optional<int> failWith(Site site, int peer, std::string_view action);
  // The first death, exit or hang at `at` that fires (eligible), recorded, then carried out.
  template <typename Eligible>
  void stopIf(Point at, const std::string& where, Eligible eligible, RankControl& control);

  std::shared_ptr<const std::vector<FaultSpec>> faults_;
  int rank_;
  std::uint64_t seed_;
  FaultLog& log_;
  bool staleExchange_ = false;
  bool aliasExchange_ = false;
  bool mappedExchange_ = false;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;  // the faults naming this rank, in scenario order
  std::set<Site> fired_;
  std::optional<IpcHandle> stale_;
  std::optional<IpcHandle> aliased_;
  std::optional<IpcHandle> mapped_;
  std::map<int, Exported> exported_;
  std::size_t construction_ = 0;
};

// A run's faults for every rank, drawn from `seed`.
class FaultPlan {
 public:
  FaultPlan(std::vector<FaultSpec> faults, std::uint64_t seed);

  const std::vector<FaultSpec>& faults() const noexcept { return *faults_; }
  std::uint64_t seed() const noexcept { return seed_; }
  // The faults of `rank`, recording into `log` (which must outlive them). Each call starts fresh
  // counts and streams: the same (scenario, seed, rank) always yields the same decisions.
  std::unique_ptr<RankFaults> forRank(int rank, FaultLog& log) const;

 private:
  std::shared_ptr<const std::vector<FaultSpec>> faults_;
  std::uint64_t seed_;
};

}  // namespace peerconf::faults
