// One fault a call: the rank's calls walked as the core makes them, each drawing from the faults
// aimed at it as the fault plan draws.
#include "model/rank_calls.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "model/fault_sites.h"

namespace peerconf::harness::model {

namespace {

bool matchesPeer(const Fault& fault, int peer) { return !fault.peer || *fault.peer == peer; }

bool openCall(const Fault& fault) {
  return fault.site == FaultSite::kOpen ||
         (fault.site == FaultSite::kForeignException && fault.call == faults::SeamCall::kOpen);
}

// The calls made once a construction (alloc, get-handle, free, alloc-table, copy-table, not-ready,
// each group call, each other call a foreign exception names): a key per call, or none.
std::optional<std::tuple<int, int, int>> singleCall(const Fault& fault) {
  switch (fault.site) {
    case FaultSite::kAlloc:
    case FaultSite::kGetHandle:
    case FaultSite::kFree:
    case FaultSite::kAllocTable:
    case FaultSite::kCopyTable:
    case FaultSite::kNotReady:
      return std::tuple(static_cast<int>(fault.site), 0, 0);
    case FaultSite::kGroupFail:
      return std::tuple(static_cast<int>(fault.site), static_cast<int>(fault.at), 0);
    case FaultSite::kForeignException:
      if (openCall(fault)) return std::nullopt;
      return std::tuple(static_cast<int>(fault.site), 0, static_cast<int>(fault.call));
    default:
      return std::nullopt;
  }
}

// One walk of the rank's calls.
struct Walker {
  const Scenario& scenario;
  const int rank;
  const CallsReached& reached;
  RankCalls out;
  std::map<std::size_t, int> firings;  // certain firings so far, by fault
  std::map<std::size_t, bool> listed;  // faults already listed silent

  bool aimed(std::size_t i) const { return scenario.faults[i].appliesTo(rank); }

  bool certain(const Fault& fault) const {
    return fault.probability >= 1.0 || (reached.chanceFailuresFire && failsHandshake(fault.site));
  }

  bool countLeft(std::size_t i) const {
    const int count = scenario.faults[i].count;
    auto it = firings.find(i);
    return count <= 0 || it == firings.end() || it->second < count;
  }

  // One call: `eligible` faults in the file's order; the first certain one with firings left
  // takes it (a chance one before it may take it instead). Returns the fault that takes it.
  template <typename Eligible>
  std::optional<std::size_t> call(Eligible eligible, std::optional<std::size_t>* chance = nullptr) {
    std::optional<std::size_t> maybe;
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      if (!aimed(i) || !eligible(scenario.faults[i]) || !countLeft(i)) continue;
      if (!certain(scenario.faults[i])) {
        if (!maybe) maybe = i;
        continue;
      }
      ++firings[i];
      if (chance != nullptr) *chance = maybe;
      return i;
    }
    if (chance != nullptr) *chance = maybe;
    return std::nullopt;
  }

  void silence(Silence s) {
    if (listed[s.fault] || firings.count(s.fault) != 0) return;
    listed[s.fault] = true;
    out.silent.push_back(s);
  }

  // The calls made once: the first certain fault of each takes it.
  void singleCalls() {
    std::map<std::tuple<int, int, int>, std::pair<std::optional<std::size_t>,
                                                  std::optional<std::size_t>>>
        calls;  // key -> (taker, a chance fault drawn before it)
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const auto key = singleCall(scenario.faults[i]);
      if (!aimed(i) || !key) continue;
      auto& [taker, chance] = calls[*key];
      if (taker) {
        silence({i, Silence::Why::kTaken, *taker, std::nullopt, false});
      } else if (certain(scenario.faults[i])) {
        taker = i;
        if (chance) silence({i, Silence::Why::kTaken, *chance, std::nullopt, true});
      } else if (!chance) {
        chance = i;
      }
    }
  }

  // The handles it receives, a peer at a time: a handle-stale and a handle-corrupt fault each.
  // Returns, a peer, the fault that damaged its handle.
  std::vector<std::optional<std::size_t>> receiveHandles() {
    std::vector<std::optional<std::size_t>> damaged(static_cast<std::size_t>(scenario.ranks));
    std::map<std::size_t, std::pair<std::size_t, int>> takenBy;  // fault -> (taker, peer)
    const std::vector<int>& records = reached.failureRecords;
    for (int peer = 0; peer < scenario.ranks; ++peer) {
      if (peer == rank || std::find(records.begin(), records.end(), peer) != records.end()) {
        continue;
      }
      for (FaultSite site : {FaultSite::kHandleStale, FaultSite::kHandleCorrupt}) {
        auto eligible = [&](const Fault& f) { return f.site == site && matchesPeer(f, peer); };
        const auto taker = call(eligible);
        if (!taker) continue;
        damaged[static_cast<std::size_t>(peer)] = *taker;
        for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
          // Drawn after the taker: taken (one before it is a chance that did not fire).
          if (i > *taker && aimed(i) && eligible(scenario.faults[i]) && !takenBy.count(i)) {
            takenBy[i] = {*taker, peer};
          }
        }
      }
    }
    for (const auto& [fault, taken] : takenBy) {
      silence({fault, Silence::Why::kTaken, taken.first, taken.second, false});
    }
    // One whose every peer sent a failure record: there is no handle to damage, by any draw.
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const Fault& f = scenario.faults[i];
      const bool handle = f.site == FaultSite::kHandleCorrupt || f.site == FaultSite::kHandleStale;
      if (!aimed(i) || !handle || firings.count(i) != 0) continue;
      bool anyHandle = false;
      for (int peer = 0; peer < scenario.ranks; ++peer) {
        const bool record = std::find(records.begin(), records.end(), peer) != records.end();
        if (peer != rank && matchesPeer(f, peer) && !record) anyHandle = true;
      }
      if (!anyHandle) silence({i, Silence::Why::kNoHandle, i, f.peer, false});
    }
    return damaged;
  }

  // Its opens in rank order, up to the first that fails (or the one it stops inside).
  void opens(const std::vector<std::optional<std::size_t>>& damaged) {
    for (int peer = 0; peer < scenario.ranks; ++peer) {
      if (peer == rank) continue;
      // The seam throws a foreign exception before it consults the open faults; a damaged handle
      // is refused by the runtime after both.
      std::optional<std::size_t> taker = call([&](const Fault& f) {
        return f.site == FaultSite::kForeignException && openCall(f) && matchesPeer(f, peer);
      });
      if (!taker) {
        taker = call(
            [&](const Fault& f) { return f.site == FaultSite::kOpen && matchesPeer(f, peer); });
      }
      const auto& handle = damaged[static_cast<std::size_t>(peer)];
      const bool fails = taker || handle;
      if (taker) {
        // The faults aimed at this open drawn after the taker: taken (the open faults are drawn
        // after every foreign exception).
        const bool foreignTook = scenario.faults[*taker].site == FaultSite::kForeignException;
        for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
          const Fault& f = scenario.faults[i];
          const bool after = i > *taker || (foreignTook && f.site == FaultSite::kOpen);
          if (after && aimed(i) && openCall(f) && matchesPeer(f, peer)) {
            silence({i, Silence::Why::kTaken, *taker, peer, false});
          }
        }
      }
      if (fails) {
        out.failedOpen = peer;
        out.failedBy = taker ? taker : handle;
        return;
      }
      out.mapped.push_back(peer);
      if (reached.stopsInOpenOf && *reached.stopsInOpenOf == peer) return;
    }
  }

  // The open faults it never reaches: those of the peers after the failed open.
  void afterFailedOpen() {
    if (!out.failedOpen || !out.failedBy) return;
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const Fault& f = scenario.faults[i];
      // One without a peer, or of an earlier peer, that did not fire is a chance that may.
      if (!aimed(i) || !openCall(f) || firings.count(i) != 0) continue;
      if (!f.peer || *f.peer <= *out.failedOpen) continue;
      silence({i, Silence::Why::kAfterFailed, *out.failedBy, out.failedOpen,
               !certain(scenario.faults[*out.failedBy])});
    }
  }

  // Whether `close` names no peer the rank mapped.
  bool unmapped(const Fault& close) const {
    if (!close.peer) return out.mapped.empty();
    return std::find(out.mapped.begin(), out.mapped.end(), *close.peer) == out.mapped.end();
  }

  // Its closes, a mapped peer at a time.
  void closes() {
    std::map<std::size_t, std::pair<std::size_t, int>> takenBy;
    // A fault that fired only at closes where a chance fault was drawn before it: its firing is
    // the seed's (the chance fault may take each of them).
    std::map<std::size_t, std::pair<std::size_t, int>> maybeTakenBy;
    std::map<std::size_t, bool> sure;
    for (int peer : out.mapped) {
      auto eligible = [&](const Fault& f) {
        return f.site == FaultSite::kClose && matchesPeer(f, peer);
      };
      std::optional<std::size_t> chance;
      const auto taker = call(eligible, &chance);
      for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
        if (!aimed(i) || !eligible(scenario.faults[i]) || !taker || i <= *taker) continue;
        if (!takenBy.count(i)) takenBy[i] = {*taker, peer};
      }
      if (taker && !chance) sure[*taker] = true;
      if (taker && chance && !maybeTakenBy.count(*taker)) maybeTakenBy[*taker] = {*chance, peer};
    }
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const Fault& f = scenario.faults[i];
      if (!aimed(i) || f.site != FaultSite::kClose || firings.count(i) != 0) continue;
      if (auto it = takenBy.find(i); it != takenBy.end()) {
        silence({i, Silence::Why::kTaken, it->second.first, it->second.second, false});
      } else if (out.failedBy && unmapped(f)) {
        silence({i, Silence::Why::kUnmapped, *out.failedBy, out.failedOpen,
                 !certain(scenario.faults[*out.failedBy])});
      }
    }
    // A close fault that fires only where a chance fault drawn first at its close did not.
    for (const auto& [fault, taken] : maybeTakenBy) {
      if (sure[fault]) continue;  // it fires at a close no chance fault comes before
      firings.erase(fault);
      silence({fault, Silence::Why::kTaken, taken.first, taken.second, true});
    }
  }

  void run() {
    singleCalls();
    if (!reached.receives || scenario.ranks < 2) return;
    const auto damaged = receiveHandles();
    if (!reached.opens) return;
    opens(damaged);
    afterFailedOpen();
    if (reached.releases) closes();
  }
};

}  // namespace

const Silence* RankCalls::silence(std::size_t fault) const {
  for (const Silence& s : silent) {
    if (s.fault == fault) return &s;
  }
  return nullptr;
}

RankCalls rankCalls(const Scenario& scenario, int rank, const CallsReached& reached) {
  Walker walker{scenario, rank, reached, {}, {}, {}};
  walker.run();
  return std::move(walker.out);
}

}  // namespace peerconf::harness::model
