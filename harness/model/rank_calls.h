// Which of a rank's faults the core's calls draw, one fault a call: the rule the validator's
// warnings (scenario/rules.cc) and the expectation oracle (expectation/derive.cc) share. The fault
// plan (faults/fault_plan.cc) fires, at each call, the first fault of the file's order that is
// aimed at it and has firings left (its `count`); the core opens its peers in rank order and stops
// at its first failed open (src/handshake.cc, openPeers), then releases, in that order, only the
// peers it mapped (src/peer_buffer.cc). So a second fault aimed at a call another fault takes
// never fires, nor an open fault of a peer after the first one whose open fails, nor a close
// fault of a peer the rank never mapped.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::model {

// How far the rank gets, as the caller knows it (the rules from the certain stops, the oracle
// from its walk).
struct CallsReached {
  // Its all-gather returns the peers' entries (the handle faults damage them there, before any
  // open, whether or not it goes on to open them).
  bool receives = false;
  std::vector<int> failureRecords;   // the peers whose entry is a failure record: no handle
  bool opens = false;                // it opens its peers (it received them; no stop first)
  std::optional<int> stopsInOpenOf;  // it dies, hangs or exits inside its open of this peer
  bool releases = false;             // it releases what it mapped (it returns or raises)
  // A fault of a site that fails the handshake with a probability below 1 counts as firing where
  // it is aimed (the oracle enumerates such draws and made this one's fire); otherwise only a
  // fault of probability 1 certainly fires, and one of a chance may or may not.
  bool chanceFailuresFire = false;
};

// Why a fault aimed at one of the rank's calls never fires there.
struct Silence {
  enum class Why {
    kTaken,        // another fault takes the same call first (`by`; the call's `peer` if any)
    kAfterFailed,  // an open fault of a peer after `peer`, whose open fails first (by `by`)
    kUnmapped,     // a close fault: the rank never maps a peer it names; its open of `peer`
                   // fails first (by `by`)
    kNoHandle,     // a handle fault: every peer it names sends a failure record (`peer`, one)
  };
  std::size_t fault = 0;
  Why why = Why::kTaken;
  std::size_t by = 0;  // the fault that takes the call, or that fails the first failed open
  std::optional<int> peer;
  // `by` fires only by chance: the fault fires where `by` does not (it may, it need not).
  bool maybe = false;
};

struct RankCalls {
  std::optional<int> failedOpen;        // the peer whose open fails first: the core stops there
  std::optional<std::size_t> failedBy;  // the fault that fails it (its open, or its handle)
  std::vector<int> mapped;              // the peers the rank maps, in order
  std::vector<Silence> silent;          // every fault of the rank's calls that never fires there
  const Silence* silence(std::size_t fault) const;
};

// The calls of `rank` that `reached` says it makes: alloc, get-handle, free, alloc-table,
// copy-table, not-ready and each group call (one call each), the handles it receives (one a peer
// that sent one), its opens and closes, and the silences among their faults. Whether the rank
// reaches a call at all (its own earlier failure, a stop) is the caller's: a fault of a call the
// rank never makes is not listed. `scenario`: foreign-exception faults as they are (not as they
// act).
RankCalls rankCalls(const Scenario& scenario, int rank, const CallsReached& reached);

}  // namespace peerconf::harness::model
