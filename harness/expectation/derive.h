// Expectation derivation: what the production core must do under a scenario's faults, computed
// from the faults alone (the seed's semantics, DESIGN.md §1 and §5), so that generated scenarios
// carry an `expect` the checkers can hold the core to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::expectation {

// Why the outcome of `scenario` cannot be derived from its faults, or nullopt when it can:
// - a fault that fails the handshake (alloc, get-handle, open, handle-corrupt, handle-stale,
//   alloc-table, copy-table, group-fail, not-ready) with probability below 1: whether it fires
//   depends on the seed's draw;
// - a delay with probability below 1 whose lateness could matter (not short, see below);
// - lateness at a group call between half a deadline and 1.5 deadlines: whether the peers give up
//   depends on the machine's timing. Shorter is "on time", longer is "past the deadline".
std::optional<std::string> undecidableReason(const model::Scenario& scenario);

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
// - entry-corrupt: the receiving rank cannot decode the entry, keeps it as its failure and is
//   agreed on like a mapping failure ("this"); beside a failure record it raises "another" at the
//   exchange like every rank, unless every failure record it received was damaged: then it waits
//   alone in the agreement (group, waited);
// - foreign-exception: as the failure of the call it names (model::actingFault); at the exchange
//   or the agreement the rank raises the exception itself ({text: "foreign exception from ..."})
//   and the others wait (group);
// - close / free faults and short delays: the handshake succeeds (close() reports them, C3);
// - death/hang/exit at `dataplane`: the handshake succeeds on every rank, then the rank stops at
//   the start of its data-plane step and is reported; the others' data plane times out waiting
//   for it and reports it (model::dataPlaneReport, listed as their message).
// Messages are listed for every rank that must raise; `reported` for every dead or hung rank.
// Throws std::invalid_argument when undecidableReason(scenario) says why it cannot.
model::Expectation deriveExpectation(const model::Scenario& scenario);

// As deriveExpectation, for scenarios whose agreed faults (open, handle-corrupt, handle-stale,
// alloc-table, copy-table) fire only by chance: it assumes every such fault fires. Whether one does
// depends on the seed's draw, so only the properties that do not depend on the expectation can be
// judged on the run (uniformity of C1, C3, C4, C5, C8). Throws when something else is undecidable.
model::Expectation deriveExpectationIfChanceFaultsFire(const model::Scenario& scenario);

// What a rank reaches in the derivation (for tests and for shaping generated scenarios).
struct RankFate {
  enum class End { kOk, kRaised, kDead, kHung, kExited } end = End::kOk;
  model::MessageExpectation message;                        // kRaised
  model::Point stoppedAt = model::Point::kBeforeConstruct;  // kDead/kHung/kExited: where
  std::optional<int> stoppedPeer;  // ... inside the open of this peer (at kOpen)
  std::uint64_t stoppedStep = 0;   // ... at the start of this data-plane step (at kDataplane)
  // kOk: its handshake returned, and its data plane reports a rank that stopped in it (the
  // message its data plane's end must contain is `message`).
  bool reportsDataPlaneStop = false;
  // kOk under a buffer-count fault (model::countMismatch): it registers fewer buffers than a
  // peer and never makes the construction the others raise in; it returns every buffer it
  // constructed (the expectation's `ok`).
  bool skips = false;

  // Stopped by a planted death, hang or exit: reported.
  bool stopped() const { return end == End::kDead || end == End::kHung || end == End::kExited; }
  // kRaised with a group error after waiting out the deadline in a group call a peer never
  // completed (not a group-fail of its own): the cases the exploration spends its time on.
  bool waited = false;
};

// Each rank's fate under `scenario`'s faults, indexed by rank (the basis of deriveExpectation).
// Deaths and hangs that the rank never reaches (it stopped earlier) are ignored, not applied.
std::vector<RankFate> deriveFates(const model::Scenario& scenario);

// --- What `peerconf explain` prints: the walk above, narrated. ---

// One position of a rank's timeline (README "Timeline") and what happens to the rank there.
struct TimelineStep {
  std::string at;                  // "before-construct", "alloc", "get-handle", "exchange", ...
  std::vector<std::string> notes;  // each fault that fires there, each group call's result
};

// A rank's way through the handshake in the derivation: every position it reaches, and its end.
struct RankTimeline {
  RankFate fate;
  std::vector<TimelineStep> steps;
  std::string end;  // "raises another: the agreement is false (rank 1 failed)", "hung at agree"
  // kRaised: text every run's message of this rank contains (the core's HandshakeError message,
  // the backend error of a single rank, the group error of its own group-fail); empty when the
  // wording is a timeout's, which the derivation does not know.
  std::string messageText;
  // The rank gives up in a group call because a rank arrived past the deadline (the thread
  // launcher's semantics: the first timeout breaks the whole world; under MPI a late rank can
  // still complete the agreement, see the guide's "Launchers").
  bool lateness = false;
  // The faults naming this rank that fire in the derivation (indices in scenario.faults), and
  // those that never do, each with why ("the rank ends at 'exchange' first: ...", "rank 0's open
  // of peer 2 fails first ...", "fault #0 ... takes its alloc call first": the rank's calls as
  // model::rankCalls draws them, one fault a call and no open after the first that fails): a
  // run's coverage check fails a certain fault that never fires on a rank it names
  // (judgement.h), so explain holds the file's certain faults to `fired`.
  std::vector<std::size_t> fired;
  std::vector<std::pair<std::size_t, std::string>> neverFired;
};

// Each rank's timeline under `scenario`'s faults (the walk of deriveFates, narrated): the basis of
// `peerconf explain`. Faults are named "fault #I (SITE, line L)", as in validate's warnings.
std::vector<RankTimeline> deriveTimelines(const model::Scenario& scenario);

// Whether `written`, the message a file expects of a rank, holds in every run the derivation
// describes, the way the C2 checker reads it: the same kind (for {text}: a fragment of the derived
// text), or a {text} that the rank's derived message certainly contains (`timeline.messageText`:
// "peer memory handshake failed on" for this and another, "all-gather failed on rank 1" for a
// rank whose own group-fail fired).
bool messageAgrees(const model::MessageExpectation& written,
                   const model::MessageExpectation& derived, const RankTimeline& timeline);

// One way the chance faults that fail the handshake can fall: each (fault index, rank) pair with
// probability below 1 on alloc, get-handle, open, handle-*, *-table or group-fail fires or not.
struct Draw {
  std::vector<std::pair<std::size_t, int>> fired;   // (fault index, rank)
  std::vector<std::pair<std::size_t, int>> silent;  // (fault index, rank)
  model::Scenario scenario;  // `scenario` with the draw made certain: fired pairs at probability 1,
                             // silent ones removed from their fault's ranks (fault indices kept)
  model::Expectation expect;
  std::vector<RankTimeline> timelines;
};

// The most (fault, rank) chance pairs deriveDraws enumerates (2^N derivations).
inline constexpr std::size_t kMaxChancePairs = 10;

// Every draw of `scenario`'s chance faults (one draw, with nothing fired or silent, when it has
// none), each with its expectation: the outcome is the one the seed decides between. The first
// draw is the one where every chance fault fires. Throws std::invalid_argument when a draw is
// undecidable for another reason (timing), or when there are more than kMaxChancePairs pairs.
std::vector<Draw> deriveDraws(const model::Scenario& scenario);

}  // namespace peerconf::harness::expectation
