// The fault-site trait table: one row a site.
#include "model/fault_sites.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace peerconf::harness::model {

namespace {

using K = Key;
using P = Point;

constexpr std::array<K, 13> kKeys{K::kPeer,  K::kError, K::kCount, K::kProbability, K::kAt,
                                  K::kDelay, K::kCode,  K::kStep,  K::kBuffer,      K::kSize,
                                  K::kLabel, K::kPart,  K::kCall};
constexpr std::array<std::string_view, 13> kKeyNames{
    "peer", "error",  "count", "probability", "at",   "delay", "code",
    "step", "buffer", "size",  "label",       "part", "call"};

constexpr std::array<std::string_view, 9> kPositionNames{
    "before-construct", "alloc", "get-handle", "exchange", "exchange-recv", "open", "agree",
    "dataplane",        "close"};

// The key lists of the rows (spans below point into these).
// `buffer` on a handshake fault: the one buffer of `buffers:` whose construction (and close) it is
// aimed at (FaultSpec::onBuffer; scenario/rules.cc, checkBuffers).
constexpr std::array<K, 4> kErrorKeys{K::kError, K::kCount, K::kProbability, K::kBuffer};
constexpr std::array<K, 5> kPeerErrorKeys{K::kPeer, K::kError, K::kCount, K::kProbability,
                                          K::kBuffer};
constexpr std::array<K, 4> kPeerKeys{K::kPeer, K::kCount, K::kProbability, K::kBuffer};
constexpr std::array<K, 4> kGroupFailKeys{K::kAt, K::kCount, K::kProbability, K::kBuffer};
constexpr std::array<K, 5> kDelayKeys{K::kAt, K::kDelay, K::kCount, K::kProbability, K::kBuffer};
constexpr std::array<K, 1> kAtKeys{K::kAt};
constexpr std::array<K, 2> kAtDelayKeys{K::kAt, K::kDelay};
// death, hang: `peer` only with `at: open` (inside the open of that peer), `step` only with
// `at: dataplane` (the parser checks both). `buffer` on a delay, death, hang or exit: the
// construction (and close) of `buffers:` whose point it stops or delays (checkBuffers).
constexpr std::array<K, 4> kStopKeys{K::kAt, K::kPeer, K::kStep, K::kBuffer};
constexpr std::array<K, 5> kExitKeys{K::kAt, K::kPeer, K::kCode, K::kStep, K::kBuffer};
// not-ready is asked once a run, before the constructor: a count would change nothing.
constexpr std::array<K, 1> kProbabilityKeys{K::kProbability};
// buffer-size, buffer-label: which buffer of `buffers:` (default the first) and what instead. They
// are certain (what a rank constructs is no draw): no count, no probability.
constexpr std::array<K, 2> kBufferSizeKeys{K::kBuffer, K::kSize};
constexpr std::array<K, 1> kSizeKey{K::kSize};
constexpr std::array<K, 2> kBufferLabelKeys{K::kBuffer, K::kLabel};
constexpr std::array<K, 1> kLabelKey{K::kLabel};
// buffer-count: `count` is the number of buffers the rank registers (FaultSpec::registers, not the
// firing limit of the other sites), and required.
constexpr std::array<K, 1> kCountKey{K::kCount};
// entry-corrupt: which peer's entry (default every peer) and which part. Certain: what the
// transport damages is no draw here (a chance would make the rank's message depend on the seed).
constexpr std::array<K, 2> kEntryKeys{K::kPeer, K::kPart};
constexpr std::array<K, 1> kPartKey{K::kPart};
// foreign-exception: which call throws (`peer` only with `call: open`). Certain, like the
// exceptions it models when they are thrown.
constexpr std::array<K, 2> kForeignKeys{K::kPeer, K::kCall};
constexpr std::array<K, 1> kCallKey{K::kCall};

constexpr std::array<P, 10> kEveryPoint{
    P::kBeforeConstruct, P::kAlloc, P::kGetHandle, P::kExchange,  P::kExchangeSend,
    P::kExchangeRecv,    P::kOpen,  P::kAgree,     P::kDataplane, P::kClose};
// A delay inside the exchange would be a delay at `exchange` (send) or at `open` (recv).
constexpr std::array<P, 5> kDelayPoints{P::kBeforeConstruct, P::kExchange, P::kOpen, P::kAgree,
                                        P::kClose};
constexpr std::string_view kDelayWhy =
    "alloc, get-handle, exchange-send and exchange-recv are points of death, hang and exit only "
    "(inside a call); a delay there is a delay at 'before-construct', 'exchange' or 'open'; a "
    "data-plane delay is 'dataplane.late'";
constexpr std::array<P, 2> kGroupCalls{P::kExchange, P::kAgree};

constexpr std::span<const K> kNone{};
constexpr std::span<const P> kNoPoint{};

// One row a site, in faults::allSites() order.
// clang-format off
constexpr std::array<Traits, 25> kTraits{{
    // site                 keys            required      points       why   position       effect             needsPeers
    {Site::kAlloc,         kErrorKeys,     kNone,        kNoPoint,    "",   kTimelineAlloc,     Effect::kExchange, false},
    {Site::kGetHandle,     kErrorKeys,     kNone,        kNoPoint,    "",   kTimelineGetHandle, Effect::kExchange, true},
    {Site::kOpen,          kPeerErrorKeys, kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kMapping,  true},
    {Site::kClose,         kPeerErrorKeys, kNone,        kNoPoint,    "",   kTimelineClose,     Effect::kRelease,  true},
    {Site::kFree,          kErrorKeys,     kNone,        kNoPoint,    "",   kTimelineClose,     Effect::kRelease,  false},
    // The table: after the last open, before the agreement (nothing between).
    {Site::kAllocTable,    kErrorKeys,     kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kTable,    false},
    {Site::kCopyTable,     kErrorKeys,     kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kTable,    false},
    {Site::kHandleCorrupt, kPeerKeys,      kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kMapping,  true},
    {Site::kHandleStale,   kPeerKeys,      kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kMapping,  true},
    {Site::kHandleAliased, kPeerKeys,      kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kAlias,    true},
    {Site::kGroupFail,     kGroupFailKeys, kAtKeys,      kGroupCalls, "the two group calls",
                                                                            kTimelineAtPoint,   Effect::kGroup,    true},
    {Site::kDelay,         kDelayKeys,     kAtDelayKeys, kDelayPoints, kDelayWhy,
                                                                            kTimelineAtPoint,   Effect::kLate,     false},
    {Site::kDeath,         kStopKeys,      kAtKeys,      kEveryPoint, "",   kTimelineAtPoint,   Effect::kStop,     false},
    {Site::kHang,          kStopKeys,      kAtKeys,      kEveryPoint, "",   kTimelineAtPoint,   Effect::kStop,     false},
    // After the point's delays, deaths and hangs, before the runner's agreement.
    {Site::kNotReady,      kProbabilityKeys, kNone,      kNoPoint,    "",   kTimelineBeforeConstruct, Effect::kNotReady, false},
    {Site::kExit,          kExitKeys,      kAtKeys,      kEveryPoint, "",   kTimelineAtPoint,   Effect::kStop,     false},
    // What the rank constructs; the mismatch is found at the end of that buffer's exchange.
    {Site::kBufferOrder,   kNone,          kNone,        kNoPoint,    "",   kTimelineExchange,  Effect::kMismatch, true},
    {Site::kBufferSize,    kBufferSizeKeys, kSizeKey,    kNoPoint,    "",   kTimelineExchange,  Effect::kMismatch, true},
    {Site::kBufferLabel,   kBufferLabelKeys, kLabelKey,  kNoPoint,    "",   kTimelineExchange,  Effect::kMismatch, true},
    // Told before the constructor: where the rank skips (or adds) a construction, before any call.
    {Site::kBufferCount,   kCountKey,      kCountKey,    kNoPoint,    "",   kTimelineBeforeConstruct, Effect::kCount, true},
    // In the exchange: what the all-gather delivered, damaged before exchange-recv (it fires
    // beside failure records too: every rank that posts its entry receives the others').
    {Site::kEntryCorrupt,  kEntryKeys,     kPartKey,     kNoPoint,    "",   kTimelineExchange,  Effect::kEntry,    true},
    // At the call it names (timelinePosition reads `call`; the row holds the default call's, open).
    {Site::kForeignException, kForeignKeys, kCallKey,     kNoPoint,    "",   kTimelineOpen,      Effect::kForeign,  true},
    // In the exchange, as entry-corrupt: the list the all-gather delivered, one entry longer.
    // Certain, no keys: what a transport returns is no draw here.
    {Site::kExchangeLong,  kNone,          kNone,        kNoPoint,    "",   kTimelineExchange,  Effect::kEntry,    true},
    // At the group call `at`: the rank calls the other collective first. Certain, no count: a
    // rank's order of calls is no draw. To the rules and the oracle a group-fail there
    // (actingFault) whose peers raise at once instead of at the deadline.
    {Site::kCollectiveOrder, kAtKeys,      kAtKeys,      kGroupCalls, "the two group calls",
                                                                            kTimelineAtPoint,   Effect::kGroup,    true},
    // handle-aliased's kind: the open of that peer maps what the rank maps already (C4 names it).
    {Site::kHandleMapped,  kPeerKeys,      kNone,        kNoPoint,    "",   kTimelineOpen,      Effect::kAlias,    true},
}};
// clang-format on

template <typename T>
bool contains(std::span<const T> list, T value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::span<const Key> allKeys() { return kKeys; }

std::string_view keyName(Key key) { return kKeyNames[static_cast<std::size_t>(key)]; }

std::string_view positionName(int position) {
  if (position < 0 || position >= static_cast<int>(kPositionNames.size())) return "never";
  return kPositionNames[static_cast<std::size_t>(position)];
}

int timelinePosition(Point point) {
  switch (point) {
    case Point::kBeforeConstruct:
      return kTimelineBeforeConstruct;
    case Point::kAlloc:
      return kTimelineAlloc;
    case Point::kGetHandle:
      return kTimelineGetHandle;
    case Point::kExchange:
    case Point::kExchangeSend:
      return kTimelineExchange;
    case Point::kExchangeRecv:
      return kTimelineExchangeRecv;
    case Point::kOpen:
      return kTimelineOpen;
    case Point::kAgree:
      return kTimelineAgree;
    case Point::kDataplane:
      return kTimelineDataplane;
    case Point::kClose:
      return kTimelineClose;
  }
  return kTimelineNever;
}

int timelinePosition(const faults::FaultSpec& fault) {
  if (fault.site == Site::kForeignException) return timelinePosition(actingFault(fault));
  const int position = traitsOf(fault.site).position;
  return position == kTimelineAtPoint ? timelinePosition(fault.at) : position;
}

const Traits& traitsOf(Site site) {
  for (const Traits& row : kTraits) {
    if (row.site == site) return row;
  }
  throw std::logic_error("fault site " + std::string(faults::siteName(site)) +
                         " has no row in harness/model/fault_sites.cc");
}

std::span<const Traits> allTraits() { return kTraits; }

bool takes(Site site, Key key) { return contains(traitsOf(site).keys, key); }
bool mustGive(Site site, Key key) { return contains(traitsOf(site).required, key); }
bool takesPoint(Site site, Point point) { return contains(traitsOf(site).points, point); }

int effectiveError(const faults::FaultSpec& fault) {
  if (!isErrorSite(fault.site)) return 0;
  return fault.error != 0 ? fault.error : faults::defaultError(fault.site);
}

bool isHandleFault(Site site) {
  return site == Site::kHandleStale || site == Site::kHandleCorrupt ||
         site == Site::kHandleAliased || site == Site::kHandleMapped;
}

bool failsHandshake(Site site) {
  switch (traitsOf(site).effect) {
    case Effect::kExchange:
    case Effect::kMapping:
    case Effect::kTable:
    case Effect::kGroup:
    case Effect::kNotReady:
    case Effect::kMismatch:
    case Effect::kCount:
    case Effect::kEntry:
    case Effect::kForeign:
      return true;
    case Effect::kRelease:
    case Effect::kLate:
    case Effect::kStop:
      return false;
  }
  return false;
}

bool agreedOn(Site site) {
  const Effect effect = traitsOf(site).effect;
  return effect == Effect::kMapping || effect == Effect::kTable || effect == Effect::kEntry;
}

bool stopsRank(Site site) { return traitsOf(site).effect == Effect::kStop; }

faults::FaultSpec actingFault(const faults::FaultSpec& fault) {
  if (fault.site == Site::kCollectiveOrder) {
    // The rank's call at `at` meets the peers' other call: the group fails it there, on every
    // rank of the call (a group error each), as a group-fail at that call would end it.
    faults::FaultSpec acting = fault;
    acting.site = Site::kGroupFail;
    acting.reordered = true;
    return acting;
  }
  if (fault.site != Site::kForeignException) return fault;
  faults::FaultSpec acting = fault;
  acting.error = 0;
  acting.foreign = true;
  switch (fault.call) {
    case faults::SeamCall::kAlloc:
      acting.site = Site::kAlloc;
      break;
    case faults::SeamCall::kGetHandle:
      acting.site = Site::kGetHandle;
      break;
    case faults::SeamCall::kOpen:
      acting.site = Site::kOpen;
      break;
    case faults::SeamCall::kAllocTable:
      acting.site = Site::kAllocTable;
      break;
    case faults::SeamCall::kCopyTable:
      acting.site = Site::kCopyTable;
      break;
    case faults::SeamCall::kExchange:
      acting.site = Site::kGroupFail;
      acting.at = Point::kExchange;
      break;
    case faults::SeamCall::kAgree:
      acting.site = Site::kGroupFail;
      acting.at = Point::kAgree;
      break;
  }
  if (acting.site != Site::kOpen) acting.peer.reset();
  return acting;
}

bool stopsInDataPlane(const faults::FaultSpec& fault) {
  return stopsRank(fault.site) && fault.at == Point::kDataplane;
}

}  // namespace peerconf::harness::model
