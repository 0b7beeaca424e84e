// The fault-site trait table: for each faults::Site, the keys a scenario file may give it, where it
// sits on a rank's timeline, what it does to the ranks when it fires, and whether it needs peers.
// The one home of these traits: the parser (which keys a site accepts), the rules (whom it
// stops), the writer (what it writes), the generators (what they draw) and the expectation oracle
// read them here. Adding a site: its enum and name in faults/fault_spec.{h,cc}, one row in
// fault_sites.cc, the decorator that fires it, and its semantics in the oracle.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "faults/fault_spec.h"

namespace peerconf::harness::model {

using faults::Point;
using faults::Site;

// The keys of a fault besides `site` and `rank`/`ranks` (which every site takes), in the order
// an error message lists the keys a fault knows.
enum class Key {
  kPeer,
  kError,
  kCount,
  kProbability,
  kAt,
  kDelay,
  kCode,
  kStep,
  kBuffer,
  kSize,
  kLabel,
  kPart,
  kCall
};

// Every key, in declaration order; its name in a scenario file ("peer", ..., "step", "buffer",
// "size", "label", "part", "call").
std::span<const Key> allKeys();
std::string_view keyName(Key key);

// A rank's timeline (scenarios/README.md "Timeline"): the positions at which it meets the sites
// and points, in order. kNever: past the last (a rank that is never stopped).
inline constexpr int kTimelineBeforeConstruct = 0;
inline constexpr int kTimelineAlloc = 1;
inline constexpr int kTimelineGetHandle = 2;
inline constexpr int kTimelineExchange = 3;  // and exchange-send: before this rank posts its entry
// exchange-recv: the exchange completed (every rank received this rank's entry), before the opens.
inline constexpr int kTimelineExchangeRecv = 4;
inline constexpr int kTimelineOpen = 5;
inline constexpr int kTimelineAgree = 6;
// The data plane, after a handshake that succeeded on every rank (the `dataplane:` section).
inline constexpr int kTimelineDataplane = 7;
inline constexpr int kTimelineClose = 8;
inline constexpr int kTimelineNever = 9;
// A row's position when the site sits at its fault's `at`.
inline constexpr int kTimelineAtPoint = -1;

// "before-construct", "alloc", "get-handle", "exchange", "exchange-recv", "open", "agree",
// "dataplane", "close" (kBeforeConstruct .. kClose); "never" for kNever.
std::string_view positionName(int position);
// The position of a point.
int timelinePosition(Point point);
// The position of a fault: its site's, or its `at` for the sites that take one.
int timelinePosition(const faults::FaultSpec& fault);

// What a site does to the ranks when it fires; whom it stops is decided by this (the rules'
// stopFor) and what each rank says by the oracle.
enum class Effect {
  kRelease,   // close, free: a call of the release path fails; close() raises, nobody stops
  kExchange,  // alloc, get-handle: the rank joins the exchange with a failure record and says
              // "this", every other rank "another" (one rank: it raises its backend error there)
  kMapping,   // open, handle-*: the mapping of a peer fails on the rank; agreed on at the
              // agreement, where the rank says "this"
  kTable,     // alloc-table, copy-table: the device address table fails, after the last open;
              // agreed on like a mapping failure (one rank: it raises its backend error itself)
  kGroup,     // group-fail: a group call fails on the rank (a group error), the others wait;
              // collective-order: the rank's call meets its peers' other call, every rank of it
              // raises a group error (actingFault: a group-fail there)
  kLate,      // delay: the rank is late at `at`; past the deadline the peers give up
  kStop,      // death, hang, exit: the rank stops at `at` (at `open` with a `peer`: inside the
              // open of that peer); the others wait at the next group call
  kNotReady,  // not-ready: the rank's setup fails before the constructor (the runner's error)
  kEntry,     // entry-corrupt: the rank cannot decode a peer's entry (a GroupError naming the first
              // such peer), kept and agreed on at the agreement, where it says "this"; an intact
              // failure record makes it raise "another" at the exchange instead, and a damaged
              // one (its only) leaves it alone in the agreement the others never reach.
              // exchange-long: likewise, the exchange's length refused before any entry is read
              // (a GroupError naming no peer): a failure record leaves it alone in the agreement
  kForeign,  // foreign-exception: a seam call throws what is no peerconf::Error; the core treats it
             // as it treats that call's own failure (actingFault below), but a group call's is
             // raised as it is (not a group error)
  kAlias,  // handle-aliased, handle-mapped: the rank's open of a peer maps another live allocation
           // of that peer; the core cannot tell, the handshake goes on (C4 names the mapping)
  kMismatch,  // buffer-order, buffer-size, buffer-label: the rank constructs another buffer than
              // its peers in the same place; every rank raises BufferMismatchError together at the
              // end of that buffer's exchange (model/buffers.h)
  kCount,     // buffer-count: the rank registers another number of buffers than the list; at the
           // first construction some rank never makes, the ranks that make it wait in its exchange
           // and raise a group error at the deadline, the others return (model/buffers.h)
};

struct Traits {
  Site site;
  std::span<const Key> keys;      // the keys it takes, in the order its error message lists them
  std::span<const Key> required;  // the keys a file must give (a subset of keys)
  std::span<const Point> points;  // the values `at` may take (empty: it takes no `at`)
  std::string_view pointsWhy;     // why only those points, when not every point ("" otherwise)
  int position;                   // kTimeline..., or kTimelineAtPoint: at its fault's `at`
  Effect effect;
  bool needsPeers;  // it never fires with one rank (no exchange, no peer, no group)
};

// The row of `site`; every site has one (tests/model_fault_sites_test.cc).
const Traits& traitsOf(Site site);
// Every row, in faults::allSites() order.
std::span<const Traits> allTraits();

bool takes(Site site, Key key);
bool mustGive(Site site, Key key);
bool takesPoint(Site site, Point point);

// An error site: it takes `error`, which defaults to faults::defaultError(site) (never 0 here).
inline bool isErrorSite(Site site) { return takes(site, Key::kError); }
// The error a fault fails with: its own, else its site's default; 0 for a site without `error`.
int effectiveError(const faults::FaultSpec& fault);

// It fails the handshake when it fires (a delay only past the deadline: the rules decide that).
bool failsHandshake(Site site);
// The ranks agree on its failure at the agreement (kMapping, kTable or kEntry).
bool agreedOn(Site site);
// It stops its rank for good at `at` (death, hang, exit).
bool stopsRank(Site site);
// It changes the handle a rank receives for a peer (handle-stale, -corrupt, -aliased, -mapped):
// the runtime's open of that handle is the fault's effect (the judge's "fault without effect").
bool isHandleFault(Site site);
// A death, hang or exit at `at: dataplane`: the rank stops at the start of data-plane step
// `fault.step`, after a handshake that succeeded on every rank.
bool stopsInDataPlane(const faults::FaultSpec& fault);

// The fault a foreign-exception fault acts as, to the rules and the oracle: the failure of the
// call it names (alloc, get-handle, open of its peer, alloc-table, copy-table; a group-fail at
// exchange or agree), with no runtime code; a collective-order fault as a group-fail at its `at`
// (`reordered`: its peers raise at once, not at the deadline); any other fault as it is. What
// differs is what the rank raises at a group call (the foreign exception itself,
// kForeignExceptionText) and that no cause is read from it (C2 makes no claim).
faults::FaultSpec actingFault(const faults::FaultSpec& fault);
// What a foreign-exception fault's exception says, in every message of the rank that raises it.
inline constexpr std::string_view kForeignExceptionText = "foreign exception from ";

}  // namespace peerconf::harness::model
