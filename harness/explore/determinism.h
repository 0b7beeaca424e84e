// Determinism of the harness (FoundationDB's "unseed" idea): the same scenario and seed must make
// every rank do the same things in the same order. A run is reduced to each rank's event sequence
// without timestamps and without the values that legitimately change between runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/run_record.h"

namespace peerconf::harness::explore {

// One rank's events as "kind what peer detail" lines, in order, timestamps dropped. In the detail,
// device pointers (0x...) become "0x?", and allocation numbers and generations ("allocation 12",
// "gen 12") and pids become "?": the mocked runtime hands out fresh ones every run. Which rank's
// deadline passed first when several ranks wait in a group call that times out ("since rank N timed
// out") is the machine's choice, not the harness's, and is masked too.
std::vector<std::string> normalizedEvents(const model::RankResult& rank);

// Every rank's normalized events, indexed by rank, plus one line per rank for its outcome.
std::vector<std::vector<std::string>> normalizedRun(const model::RunRecord& record);

// The first difference between two runs of the same scenario and seed, or nullopt when they did
// the same thing: "rank 2, event 14: 'call openMemHandle 1' vs 'throw openMemHandle 1 ...'".
std::optional<std::string> firstDifference(const model::RunRecord& a, const model::RunRecord& b);

// Each rank's result in the terms the checkers judge — status, error type, this/another, the
// normalized message — and the faults that fired on it (site and peer), in order.
std::vector<std::vector<std::string>> normalizedResults(const model::RunRecord& record);

// How two runs of the same scenario and seed differ.
struct Divergence {
  enum class Level {
    // The results or the faults that fired differ: the harness is not deterministic (the fault
    // plan is drawn from the seed alone, and the expectation does not depend on timing).
    kResult,
    // Only the events in between differ: ranks interleaved differently, as real ranks do (e.g. a
    // rank whose agreement fails locally frees its buffer while a peer may still be mapping it,
    // so that peer's open succeeds in one run and meets a stale handle in the other).
    kInterleaving,
  } level = Level::kResult;
  std::string difference;  // the first difference, at that level
};
// With `exact` (simulated time, where the seed draws the interleaving, device pointers, allocation
// numbers and tag generations), any difference left after those two is the harness's too: every
// rank's events byte for byte, times and details unmasked, and its outcome (all but the ledger,
// whose entries carry the machine's time) — Level::kResult, "not byte-identical: ...".
std::optional<Divergence> compareRuns(const model::RunRecord& a, const model::RunRecord& b,
                                      bool exact = false);

// The first difference between two runs' ranks byte for byte (as just above), or nullopt.
std::optional<std::string> firstExactDifference(const model::RunRecord& a,
                                                const model::RunRecord& b);

}  // namespace peerconf::harness::explore
