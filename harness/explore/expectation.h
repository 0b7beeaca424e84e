// Expectation derivation: what the production core must do under a scenario's faults, computed
// from the faults alone (the seed's semantics, DESIGN.md §1 and §5), so that generated scenarios
// carry an `expect` the checkers can hold the core to.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenario.h"

namespace peerconf::harness::explore {

// Why the outcome of `scenario` cannot be derived from its faults, or nullopt when it can:
// - a fault that fails the handshake (alloc, get-handle, open, handle-corrupt, handle-stale,
//   alloc-table, copy-table, group-fail, not-ready) with probability below 1: whether it fires
//   depends on the seed's draw;
// - a delay with probability below 1 whose lateness could matter (not short, see below);
// - lateness at a group call between half a deadline and 1.5 deadlines: whether the peers give up
//   depends on the machine's timing. Shorter is "on time", longer is "past the deadline".
std::optional<std::string> undecidableReason(const Scenario& scenario);

// The expectation the production core must meet under `scenario`'s faults. Ignores
// `scenario.expect`. Walks each rank's timeline (README "Timeline"):
// - the runner's "ready" phase (scenario.runner): with more than one rank and agree_first, a
//   group call before the constructor (the lateness of before-construct is spent there); a
//   not-ready rank makes every rank raise the runner's error, {text: kNotReadyThisRankMessage}
//   on it and {text: kNotReadyAnotherRankMessage} elsewhere, with no deadline waited. Without
//   agree_first (or with one rank) the not-ready rank raises alone and the others go on;
// - death/hang at a point: the rank is reported; the survivors wait at the next group call and
//   raise a group error (a death at close() after a successful handshake leaves them ok);
// - alloc / get-handle fault: the rank joins the exchange with a failure record and every rank
//   raises from it, "this" on the failing rank, "another" elsewhere; a single rank raises its
//   backend error ("alloc failed on rank 0");
// - group-fail: that rank raises a group error, the others time out (group);
// - a rank later than the deadline at a group call: every rank that reached it raises group;
// - open / handle-corrupt / handle-stale / alloc-table / copy-table (after a complete exchange
//   and agreement): every rank raises, "this" where a mapping or the table failed, "another"
//   elsewhere; with one rank, a table fault raises its backend error ("alloc failed on rank 0",
//   "copy failed on rank 0");
// - close / free faults and short delays: the handshake succeeds (close() reports them, C3).
// Messages are listed for every rank that must raise; `reported` for every dead or hung rank.
// Throws std::invalid_argument when undecidableReason(scenario) says why it cannot.
Expectation deriveExpectation(const Scenario& scenario);

// As deriveExpectation, for scenarios whose agreed faults (open, handle-corrupt, handle-stale,
// alloc-table, copy-table) fire only by chance: it assumes every such fault fires. Whether one does
// depends on the seed's draw, so only the properties that do not depend on the expectation can be
// judged on the run (uniformity of C1, C3, C4, C5, C8). Throws when something else is undecidable.
Expectation deriveExpectationIfChanceFaultsFire(const Scenario& scenario);

// What a rank reaches in the derivation (for tests and for shaping generated scenarios).
struct RankFate {
  enum class End { kOk, kRaised, kDead, kHung } end = End::kOk;
  MessageExpectation message;                 // kRaised
  Point stoppedAt = Point::kBeforeConstruct;  // kDead/kHung: where
  // kRaised with a group error after waiting out the deadline in a group call a peer never
  // completed (not a group-fail of its own): the cases the exploration spends its time on.
  bool waited = false;
};

// Each rank's fate under `scenario`'s faults, indexed by rank (the basis of deriveExpectation).
// Deaths and hangs that the rank never reaches (it stopped earlier) are ignored, not applied.
std::vector<RankFate> deriveFates(const Scenario& scenario);

}  // namespace peerconf::harness::explore
