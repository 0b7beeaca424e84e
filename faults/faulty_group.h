// FaultyGroup: the Group decorator that plants group failures, the exchange and agree points, and
// corrupted or stale handles in transit.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "faults/fault_plan.h"
#include "faults/rank_control.h"
#include "group.h"

namespace peerconf::faults {

// The handle exchange is an allGather of exactly one ExchangeEntry (or, from the planted copies of
// the core that speak the seed's format, one bare IpcHandle), the agreement is allReduceMin; any
// other allGather passes through untouched. Give this decorator to the core only: a launcher's own
// collectives on it would count as exchanges and agreements.
//
// At the exchange (with exchange-send) and the agreement, in order: RankFaults::atPoint (delay,
// death, exit, hang), then
// group-fail, which throws GroupError on this rank WITHOUT calling the inner collective: a local
// failure before sending, so the other ranks see this rank missing (their group call times out or
// is aborted by the launcher), as with an MPI call that fails on one rank only. A
// foreign-exception at `exchange` or `agree` throws ForeignException there, before sending, too.
// Then collective-order: at the exchange the rank first calls the inner allReduceMin(1) (it enters
// the agreement while its peers are in the exchange), at the agreement the inner allGather of a
// zero exchange-sized entry (another exchange while its peers agree); a correct group fails that
// call on every rank of it, and only a group that paired the two calls goes on to the rank's own.
//
// After the inner all-gather: first what each peer exported is recorded (RankFaults::putExported,
// for FaultyBackend's check of what each mapping reaches); then exchange-long (one more entry, a
// copy of this rank's own, appended to the list this rank receives); then handle-stale or
// handle-aliased, then handle-corrupt, peer by peer in rank order, as RankFaults decides for this
// (receiving) rank; a peer's failure record has no handle and is never touched. Corrupt inverts
// every byte of that peer's handle, so it can never be mistaken for a valid one. Then
// entry-corrupt, peer by peer: the whole entry (ExchangeEntry-sized only), damaged in the part the
// fault names, a failure record too; then the exchange-recv point (this rank posted its entry and
// every rank received it). Stale and aliased: when the scenario has any handle-stale
// (handle-aliased) fault, every rank sends its entry followed by the stale (aliased) handle its
// FaultyBackend made, and the core receives only the real ones, except the stale or aliased one
// where a fault says so. Both decorators of a rank must share its RankFaults.
class FaultyGroup : public Group {
 public:
  // `inner`, `faults` and `control` must outlive the decorator.
  FaultyGroup(Group& inner, RankFaults& faults, RankControl& control);

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int allReduceMin(int value) override;
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override;

 private:
  // What a peer sent beside its entry (handle-stale's and handle-aliased's handles).
  struct SideHandles {
    std::optional<IpcHandle> stale;
    std::optional<IpcHandle> aliased;
    std::optional<IpcHandle> mapped;
  };
  // The all-gather of this rank's entry and its side handles: every rank's entry, and in `side`
  // what each sent beside it.
  std::vector<std::vector<std::byte>> gatherWithSideHandles(std::span<const std::byte> bytes,
                                                            std::vector<SideHandles>& side);

  Group& inner_;
  RankFaults& faults_;
  RankControl& control_;
};

}  // namespace peerconf::faults
