// Expectation derivation: each rank's timeline walked group call by group call, the way the
// production PeerBuffer and the thread launcher's groups behave (a rank that never arrives makes
// the others time out; a completed agreement makes every rank raise or return together).
#include "expectation/derive.h"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "model/buffers.h"
#include "model/rank_calls.h"
#include "scenario/rules.h"
#include "scenario/values.h"

namespace peerconf::harness::expectation {

using model::Expectation;
using model::Fault;
using model::FaultSite;
using model::hipErrorName;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Scenario;
using model::toString;

namespace {

using std::chrono::milliseconds;

// The trait table's classes (model/fault_sites.h).
bool failingSite(FaultSite site) { return model::failsHandshake(site); }

bool mappingSite(FaultSite site) { return model::traitsOf(site).effect == model::Effect::kMapping; }

// handle-corrupt, handle-stale: they damage a peer's handle as the rank receives the entries.
bool handleSite(FaultSite site) {
  return site == FaultSite::kHandleCorrupt || site == FaultSite::kHandleStale;
}

// The lateness a rank brings to a point: certain delays always, chance delays maybe.
struct Lateness {
  milliseconds least{0};
  milliseconds most{0};
};

Lateness latenessAt(const Scenario& scenario, int rank, Point point) {
  Lateness late;
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kDelay || fault.at != point || !fault.appliesTo(rank)) continue;
    late.most += fault.delay;
    if (fault.probability >= 1.0) late.least += fault.delay;
  }
  return late;
}

Lateness operator+(Lateness a, Lateness b) { return {a.least + b.least, a.most + b.most}; }

enum class Arrival { kOnTime, kPastDeadline, kUndecidable };

// Whether every rank waiting in one group call is released before its deadline, given how late
// each rank arrives (relative to the others). A wait under half a deadline is safely on time, a
// wait over 1.5 deadlines safely past it; anything between depends on the machine.
Arrival judgeArrival(const std::vector<Lateness>& arrivals, milliseconds deadline) {
  if (arrivals.empty()) return Arrival::kOnTime;
  milliseconds maxMost{0}, maxLeast{0};
  milliseconds minMost = milliseconds::max(), minLeast = milliseconds::max();
  for (const Lateness& late : arrivals) {
    maxMost = std::max(maxMost, late.most);
    maxLeast = std::max(maxLeast, late.least);
    minMost = std::min(minMost, late.most);
    minLeast = std::min(minLeast, late.least);
  }
  const milliseconds widest = maxMost - minLeast;     // the longest any rank may wait
  const milliseconds narrowest = maxLeast - minMost;  // the longest some rank surely waits
  if (2 * widest <= deadline) return Arrival::kOnTime;
  if (2 * narrowest >= 3 * deadline) return Arrival::kPastDeadline;
  return Arrival::kUndecidable;
}

// The scenario with each foreign-exception fault as the fault it acts as (model::actingFault).
Scenario withActingFaults(Scenario scenario) {
  for (Fault& fault : scenario.faults) fault = model::actingFault(fault);
  return scenario;
}

struct Walk {
  const Scenario& file;  // as written: its foreign-exception faults
  const Scenario acting;
  const Scenario& scenario;  // the faults as they act (withActingFaults)
  std::vector<RankFate> fates;
  std::vector<bool> stopped;
  std::string undecidable;  // set when the walk met something it cannot decide
  // For explain's timeline (deriveTimelines): the timeline position of the group call the walk is
  // deciding, and the position at which each rank raised.
  int position = 0;
  std::map<int, int> raisedAt;
  // The exchange's all-gather completed (every rank received every entry, and the handle faults
  // fired there), and the ranks whose entry was a failure record.
  bool exchangeCompleted = false;
  std::vector<int> failureRecords;

  explicit Walk(const Scenario& s)
      : file(s),
        acting(withActingFaults(s)),
        scenario(acting),
        fates(static_cast<std::size_t>(s.ranks)),
        stopped(static_cast<std::size_t>(s.ranks), false) {}

  const Fault* death(int rank) const {
    for (const Fault& fault : scenario.faults) {
      if (model::stopsRank(fault.site) && fault.appliesTo(rank)) {
        return &fault;
      }
    }
    return nullptr;
  }

  bool has(FaultSite site, int rank, std::optional<Point> at = std::nullopt) const {
    return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& f) {
      return f.site == site && f.appliesTo(rank) && (!at || f.at == *at);
    });
  }

  // A collective-order fault of `rank` at the group call `at` (a group-fail there, reordered).
  bool reordered(int rank, Point at) const {
    return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& f) {
      return f.site == FaultSite::kGroupFail && f.reordered && f.appliesTo(rank) && f.at == at;
    });
  }

  RankFate& fate(int rank) { return fates[static_cast<std::size_t>(rank)]; }
  bool isStopped(int rank) const { return stopped[static_cast<std::size_t>(rank)]; }

  void stopDead(int rank, const Fault& fault) {
    fate(rank).end = fault.site == FaultSite::kDeath  ? RankFate::End::kDead
                     : fault.site == FaultSite::kExit ? RankFate::End::kExited
                                                      : RankFate::End::kHung;
    fate(rank).stoppedAt = fault.at;
    fate(rank).stoppedPeer = fault.peer;
    fate(rank).stoppedStep = fault.step;
    stopped[static_cast<std::size_t>(rank)] = true;
  }

  void stopRaised(int rank, MessageExpectation message) {
    fate(rank).end = RankFate::End::kRaised;
    fate(rank).message = std::move(message);
    stopped[static_cast<std::size_t>(rank)] = true;
    raisedAt[rank] = position;
  }

  // Ranks still running that die or hang at `point` stop there.
  void applyDeaths(Point point) {
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (isStopped(rank)) continue;
      const Fault* fault = death(rank);
      if (fault != nullptr && fault->at == point) stopDead(rank, *fault);
    }
  }

  // A group call at `point` (exchange or agree): ranks with a group-fail there raise at once;
  // the others arrive, late by `lateness`. Returns whether the call completes on every rank;
  // when it does not, every rank that arrived raises a group error after waiting (waited).
  bool groupCall(Point point, const std::array<Point, 2>& latePoints) {
    return groupCall(toString(point), point, latePoints);
  }

  // The runner's agreement before the constructor: no planted group fault fires on it (the
  // runner calls the group without the fault decorators); the lateness is that of
  // before-construct.
  bool runnerAgreement() {
    return groupCall("runner's agreement", std::nullopt,
                     {Point::kBeforeConstruct, Point::kBeforeConstruct}, true);
  }

  bool groupCall(const std::string& name, std::optional<Point> point,
                 const std::array<Point, 2>& latePoints, bool once = false) {
    // Where a rank that raises in this call raised (explain's timelines): the runner's agreement
    // sits at before-construct.
    position = scenario::timelinePosition(point.value_or(Point::kBeforeConstruct));
    std::vector<Lateness> arrivals;
    std::vector<int> arrived;
    bool everyone = true;
    // A rank of the call makes the other collective (collective-order): the group ends the call
    // on every rank of it (the thread world and MpiGroup at once, any group by its deadline).
    bool mismatch = false;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (isStopped(rank)) {
        everyone = false;
        continue;
      }
      if (point && reordered(rank, *point)) mismatch = true;
      if (point && has(FaultSite::kGroupFail, rank, *point)) {
        // A foreign exception at the call is raised as it is; a group-fail is a group error.
        const std::string foreign = foreignText(rank, *point);
        stopRaised(rank, foreign.empty() ? MessageExpectation{MessageKind::kGroup, {}}
                                         : MessageExpectation{MessageKind::kText, foreign});
        everyone = false;
        continue;
      }
      arrived.push_back(rank);
      Lateness late = latenessAt(scenario, rank, latePoints[0]);
      if (!once) late = late + latenessAt(scenario, rank, latePoints[1]);
      arrivals.push_back(late);
    }
    bool completes = everyone;
    if (completes) {
      const Arrival arrival = judgeArrival(arrivals, scenario.deadline);
      if (arrival == Arrival::kUndecidable && undecidable.empty()) {
        undecidable = "the ranks reach the " + name +
                      " call so far apart (delays) that whether the first one gives up within "
                      "the deadline of " +
                      std::to_string(scenario.deadline.count()) + " ms depends on timing";
      }
      completes = arrival == Arrival::kOnTime;
    }
    if (!completes) {
      for (int rank : arrived) {
        stopRaised(rank, {MessageKind::kGroup, {}});
        fate(rank).waited = !mismatch;
      }
    }
    return completes;
  }

  // What a foreign-exception fault of `rank` at the group call `point` throws
  // (faults/fault_plan.cc), or empty when none does.
  std::string foreignText(int rank, Point point) const {
    for (const Fault& fault : file.faults) {
      if (fault.site != FaultSite::kForeignException || !fault.appliesTo(rank)) continue;
      const Fault acting = model::actingFault(fault);
      if (acting.site == FaultSite::kGroupFail && acting.at == point) {
        return std::string(model::kForeignExceptionText) +
               std::string(faults::seamCallName(fault.call)) + " on rank " + std::to_string(rank);
      }
    }
    return {};
  }

  // The handshake's steps in the timeline's order; each returns false once every rank's run ended.
  void run() {
    applyDeaths(Point::kBeforeConstruct);
    const bool agreeFirst = scenario.runner.agreeFirst && scenario.ranks > 1;
    if (!ready(agreeFirst)) return;
    // The ranks register different numbers of buffers (buffer-count): the walk is the first
    // construction some rank never makes (the ones before it succeed; rule 8c keeps every other
    // fault out). The ranks that never make it return; the others wait for them in its exchange.
    if (const auto count = model::countMismatch(scenario)) {
      for (int rank : count->returning) {
        fate(rank).skips = true;
        stopped[static_cast<std::size_t>(rank)] = true;
      }
    }
    // Inside the allocation and the handle export (a rank whose allocation failed exports
    // nothing: the rules refuse a stop there).
    applyDeaths(Point::kAlloc);
    applyDeaths(Point::kGetHandle);
    if (scenario.ranks == 1) {
      singleRank();
      return;
    }
    if (!exchange(agreeFirst) || !mapAndAgree()) return;
    if (scenario.dataPlane) dataPlane();
    applyDeaths(Point::kClose);
  }

  // After a handshake that succeeded on every rank: the ranks stopped at `dataplane` stop at the
  // start of their step; every other rank (but one that `dataplane.stop` stops as planned) waits
  // for their pair, times out or is aborted by a peer that did, and reports it.
  void dataPlane() {
    applyDeaths(Point::kDataplane);
    if (!model::stopsOnlyInDataPlane(scenario)) return;
    const model::Spec& spec = *scenario.dataPlane;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (isStopped(rank) || (spec.stop && spec.stop->rank == rank)) continue;
      fate(rank).reportsDataPlaneStop = true;
      fate(rank).message = model::dataPlaneReport(scenario);
    }
  }

  // Every rank raises together: "this" where `failed`, "another" elsewhere.
  void raiseThisOrAnother(const std::vector<bool>& failed) {
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      stopRaised(rank, {failed[static_cast<std::size_t>(rank)] ? MessageKind::kThis
                                                               : MessageKind::kAnother,
                        {}});
    }
  }

  bool ready(bool agreeFirst) {
    const int n = scenario.ranks;
    // The runner's "ready" phase: a rank whose setup failed (not-ready) never constructs. With
    // the runner's agreement every rank learns it there and raises the runner's error; without
    // it (or with one rank) the rank that is not ready raises alone, the others go on.
    const MessageExpectation notReadyThis{MessageKind::kText,
                                          std::string(kNotReadyThisRankMessage)};
    std::vector<bool> notReady(static_cast<std::size_t>(n), false);
    for (int rank = 0; rank < n; ++rank) {
      notReady[static_cast<std::size_t>(rank)] =
          !isStopped(rank) && has(FaultSite::kNotReady, rank);
    }
    const bool anyNotReady = std::find(notReady.begin(), notReady.end(), true) != notReady.end();
    if (agreeFirst) {
      if (!runnerAgreement()) return false;
      if (anyNotReady) {
        for (int rank = 0; rank < n; ++rank) {
          stopRaised(rank, notReady[static_cast<std::size_t>(rank)]
                               ? notReadyThis
                               : MessageExpectation{MessageKind::kText,
                                                    std::string(kNotReadyAnotherRankMessage)});
        }
        return false;
      }
    } else {
      for (int rank = 0; rank < n; ++rank) {
        if (notReady[static_cast<std::size_t>(rank)]) stopRaised(rank, notReadyThis);
      }
    }
    return true;
  }

  void singleRank() {
    // No group: nothing to exchange or agree on. An alloc failure is raised as it is; the
    // table is still built, and its failure is raised as it is too (no HandshakeError: there
    // is nobody to agree with). Then only close().
    if (!isStopped(0) && (has(FaultSite::kAlloc, 0) || has(FaultSite::kAllocTable, 0))) {
      stopRaised(0, {MessageKind::kText, "alloc failed on rank 0"});
    } else if (!isStopped(0) && has(FaultSite::kCopyTable, 0)) {
      stopRaised(0, {MessageKind::kText, "copy failed on rank 0"});
    }
    applyDeaths(Point::kClose);
  }

  // Whether `rank`'s entry-corrupt faults damage every failure record it receives (from the ranks
  // `exchangeFailed` marks): then it reads none of them.
  bool readsNoFailureRecord(int rank, const std::vector<bool>& exchangeFailed) const {
    // An exchange of the wrong length is refused before any entry is read (src/handshake.cc).
    if (has(FaultSite::kExchangeLong, rank)) return true;
    for (int peer = 0; peer < scenario.ranks; ++peer) {
      if (peer == rank || !exchangeFailed[static_cast<std::size_t>(peer)]) continue;
      const bool damaged =
          std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& f) {
            return f.site == FaultSite::kEntryCorrupt && f.appliesTo(rank) &&
                   (!f.peer || *f.peer == peer);
          });
      if (!damaged) return false;
    }
    return true;
  }

  bool exchange(bool agreeFirst) {
    const int n = scenario.ranks;
    // An alloc or get-handle failure does not stop the rank: it joins the exchange with a failure
    // record, and the completed exchange makes every rank raise together.
    std::vector<bool> exchangeFailed(static_cast<std::size_t>(n), false);
    for (int rank = 0; rank < n; ++rank) {
      exchangeFailed[static_cast<std::size_t>(rank)] =
          !isStopped(rank) && (has(FaultSite::kAlloc, rank) || has(FaultSite::kGetHandle, rank));
    }
    applyDeaths(Point::kExchange);
    applyDeaths(Point::kExchangeSend);
    // After the runner's agreement the ranks start the constructor together: only the lateness
    // at the exchange itself is left.
    if (!groupCall(toString(Point::kExchange), Point::kExchange,
                   {Point::kExchange, Point::kBeforeConstruct}, agreeFirst)) {
      return false;
    }
    exchangeCompleted = true;
    for (int rank = 0; rank < n; ++rank) {
      if (exchangeFailed[static_cast<std::size_t>(rank)]) failureRecords.push_back(rank);
    }
    if (std::find(exchangeFailed.begin(), exchangeFailed.end(), true) != exchangeFailed.end()) {
      // A rank whose entry-corrupt faults damaged every failure record it received cannot read
      // one (src/handshake.cc, decode): it keeps the malformed entry as its own failure and goes
      // on to the agreement, which the others, raising here, never reach.
      std::vector<int> blind;
      for (int rank = 0; rank < n; ++rank) {
        if (!exchangeFailed[static_cast<std::size_t>(rank)] &&
            readsNoFailureRecord(rank, exchangeFailed)) {
          blind.push_back(rank);
        }
      }
      for (int rank = 0; rank < n; ++rank) {
        if (std::find(blind.begin(), blind.end(), rank) != blind.end()) continue;
        stopRaised(rank, {exchangeFailed[static_cast<std::size_t>(rank)] ? MessageKind::kThis
                                                                         : MessageKind::kAnother,
                          {}});
      }
      position = scenario::timelinePosition(Point::kAgree);
      for (int rank : blind) {
        stopRaised(rank, {MessageKind::kGroup, {}});
        fate(rank).waited = true;
      }
      return false;
    }
    // A rank that registered another buffer than rank 0 (buffer-order, -size, -label): every rank
    // compares the same entries and raises the same BufferMismatchError, before any open. The
    // rules keep every other fault out of such a scenario, so the constructions before that one
    // succeed as this one would have.
    if (const auto mismatch = model::bufferMismatch(scenario)) {
      for (int rank = 0; rank < n; ++rank) {
        if (!isStopped(rank)) stopRaised(rank, {MessageKind::kText, mismatch->message});
      }
      return false;
    }
    // Every rank received every entry; a rank that stops now leaves the others to open its
    // handle and wait for it at the agreement.
    applyDeaths(Point::kExchangeRecv);
    return true;
  }

  bool mapAndAgree() {
    const int n = scenario.ranks;
    applyDeaths(Point::kOpen);
    std::vector<bool> mappingFailed(static_cast<std::size_t>(n), false);
    for (int rank = 0; rank < n; ++rank) {
      if (isStopped(rank)) continue;
      for (const Fault& fault : scenario.faults) {
        // A table fault fires only when every open succeeded; either way the rank says "this".
        if (model::agreedOn(fault.site) && fault.appliesTo(rank)) {
          mappingFailed[static_cast<std::size_t>(rank)] = true;
        }
      }
    }
    applyDeaths(Point::kAgree);
    if (!groupCall(Point::kAgree, {Point::kOpen, Point::kAgree})) return false;

    const bool anyFailed =
        std::find(mappingFailed.begin(), mappingFailed.end(), true) != mappingFailed.end();
    if (anyFailed) {
      raiseThisOrAnother(mappingFailed);
      return false;
    }
    return true;
  }
};

}  // namespace

namespace {

std::optional<std::string> undecidable(const Scenario& scenario, bool chanceMappingFaults) {
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& fault = scenario.faults[i];
    if (chanceMappingFaults && model::agreedOn(fault.site)) continue;
    if (failingSite(fault.site) && fault.probability < 1.0) {
      return "fault " + std::to_string(i) + " (" + toString(fault.site) +
             ") fires with probability " + std::to_string(fault.probability) +
             ": whether the handshake fails depends on the draw";
    }
    // A chance delay is harmless only when even its full length is short; judgeArrival checks the
    // sums, so one long chance delay shows up there as undecidable.
  }
  Walk walk(scenario);
  walk.run();
  if (!walk.undecidable.empty()) return walk.undecidable;
  return std::nullopt;
}

Expectation derive(const Scenario& scenario, bool chanceMappingFaults) {
  if (auto why = undecidable(scenario, chanceMappingFaults)) {
    throw std::invalid_argument("cannot derive the outcome of " + scenario.name + ": " + *why);
  }
  const std::vector<RankFate> fates = deriveFates(scenario);
  Expectation expect;
  bool anyRaised = false;
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    const RankFate& fate = fates[static_cast<std::size_t>(rank)];
    switch (fate.end) {
      case RankFate::End::kDead:
      case RankFate::End::kHung:
      case RankFate::End::kExited:
        expect.reported.push_back(rank);
        break;
      case RankFate::End::kRaised:
        anyRaised = true;
        expect.messages[rank] = fate.message;
        break;
      case RankFate::End::kOk:
        if (fate.reportsDataPlaneStop) expect.messages[rank] = fate.message;
        break;
    }
  }
  if (!expect.reported.empty()) {
    expect.outcome = Outcome::kReported;
  } else if (anyRaised) {
    expect.outcome = Outcome::kRaise;
    // A rank that returned while others raise (a buffer-count fault's): `ok`.
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (fates[static_cast<std::size_t>(rank)].skips)
        expect.messages[rank] = {MessageKind::kOk, {}};
    }
  } else {
    expect.outcome = Outcome::kSuccess;
  }
  return expect;
}

}  // namespace

// Each entry point derives from the scenario with device_memory's out-of-memory allocations as the
// faults they act as (model::withDeviceMemoryFaults), and, where its faults are aimed at one
// buffer of `buffers:`, from that construction alone (model::aimedConstruction).
std::optional<std::string> undecidableReason(const Scenario& scenario) {
  return undecidable(model::aimedConstruction(model::withDeviceMemoryFaults(scenario)), false);
}

std::vector<RankFate> deriveFates(const Scenario& file) {
  const Scenario scenario = model::aimedConstruction(model::withDeviceMemoryFaults(file));
  Walk walk(scenario);
  walk.run();
  return walk.fates;
}

Expectation deriveExpectation(const Scenario& scenario) {
  return derive(model::aimedConstruction(model::withDeviceMemoryFaults(scenario)), false);
}

Expectation deriveExpectationIfChanceFaultsFire(const Scenario& scenario) {
  return derive(model::aimedConstruction(model::withDeviceMemoryFaults(scenario)), true);
}

// --- The walk narrated (peerconf explain) ---

namespace {

// Timeline positions (model/fault_sites.h, README "Timeline").
constexpr int kAtAlloc = model::kTimelineAlloc;
constexpr int kAtGetHandle = model::kTimelineGetHandle;
constexpr int kAtExchange = model::kTimelineExchange;
constexpr int kAtExchangeRecv = model::kTimelineExchangeRecv;
constexpr int kAtOpen = model::kTimelineOpen;
constexpr int kAtAgree = model::kTimelineAgree;
constexpr int kAtDataplane = model::kTimelineDataplane;
constexpr int kAtClose = model::kTimelineClose;

std::string positionName(const Scenario& scenario, int position) {
  if (scenario.ranks == 1 && position == kAtOpen) return "table";  // no peers: only the table
  return std::string(model::positionName(position));
}

std::vector<int> positionsOf(const Scenario& scenario) {
  if (scenario.ranks == 1) return {0, kAtAlloc, kAtOpen, kAtClose};
  // exchange-recv is told only where a fault sits there: otherwise nothing happens between the
  // exchange and the opens.
  const bool recv =
      std::any_of(scenario.faults.begin(), scenario.faults.end(),
                  [](const Fault& fault) { return fault.at == Point::kExchangeRecv; });
  std::vector<int> out{0, kAtAlloc, kAtGetHandle, kAtExchange};
  if (recv) out.push_back(kAtExchangeRecv);
  out.insert(out.end(), {kAtOpen, kAtAgree});
  // The data plane is told where the file has one (the ranks run it after the handshake).
  if (scenario.dataPlane) out.push_back(kAtDataplane);
  out.push_back(kAtClose);
  return out;
}

std::string probabilityText(double probability) {
  std::string text = std::to_string(probability);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

// "fault #1 (open of peer 0, hipErrorMapFailed, line 14)"
std::string faultName(const Scenario& scenario, std::size_t index) {
  const Fault& fault = scenario.faults[index];
  if (fault.mark.line == 0 && !scenario.deviceMemory.empty()) {  // model::withDeviceMemoryFaults
    return "device_memory (" + toString(fault.site) + " does not fit: hipErrorOutOfMemory)";
  }
  std::string out = "fault #" + std::to_string(index) + " (" + toString(fault.site);
  if (fault.peer && model::stopsRank(fault.site)) {
    out += " inside the open of peer " + std::to_string(*fault.peer);
  } else if (fault.peer) {
    out += " of peer " + std::to_string(*fault.peer);
  }
  if (fault.site == FaultSite::kExit) out += ", code " + std::to_string(fault.code);
  if (fault.site == FaultSite::kEntryCorrupt) {
    out += ", " + std::string(faults::entryPartName(fault.part));
  }
  if (fault.site == FaultSite::kForeignException) {
    out += " at " + std::string(faults::seamCallName(fault.call));
  }
  if (fault.site == FaultSite::kDelay) {
    out += " " + scenario::formatDuration(fault.delay);
  }
  if (model::isErrorSite(fault.site)) out += ", " + hipErrorName(fault.error);
  if (fault.site == FaultSite::kBufferSize) {
    out +=
        " of buffer " + std::to_string(fault.buffer) + ", " + std::to_string(fault.size) + " bytes";
  }
  if (fault.site == FaultSite::kBufferLabel) {
    out += " of buffer " + std::to_string(fault.buffer) + ", " +
           (fault.label.empty() ? std::string("no label") : "'" + fault.label + "'");
  }
  if (fault.site == FaultSite::kBufferCount) {
    out += ", " + std::to_string(fault.registers) + " of " +
           std::to_string(model::listedBuffers(scenario).size()) + " buffers";
  }
  if (fault.count > 0) out += ", count " + std::to_string(fault.count);
  if (fault.probability < 1.0) out += ", probability " + probabilityText(fault.probability);
  out += model::aimText(fault);
  if (fault.mark.line > 0) out += ", line " + std::to_string(fault.mark.line);
  return out + ")";
}

std::string rankNames(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string callName(int position) {
  return position == kAtExchange ? "the exchange (all-gather)" : "the agreement (all-reduce)";
}

// "dies", "hangs", "exits" (past: "died", "hung", "exited").
std::string stopVerb(const RankFate& f, bool past) {
  switch (f.end) {
    case RankFate::End::kDead:
      return past ? "died" : "dies";
    case RankFate::End::kExited:
      return past ? "exited" : "exits";
    default:
      return past ? "hung" : "hangs";
  }
}

// "'exchange-recv'", "its open of peer 2".
std::string stopPlace(const RankFate& f) {
  if (f.stoppedPeer) return "its open of peer " + std::to_string(*f.stoppedPeer);
  if (f.stoppedAt == Point::kDataplane) return "data-plane step " + std::to_string(f.stoppedStep);
  return "'" + toString(f.stoppedAt) + "'";
}

std::string insideOpen(const Fault& fault) {
  if (fault.at == Point::kDataplane) {
    return ", at the start of data-plane step " + std::to_string(fault.step) +
           " (it writes and reads nothing more)";
  }
  if (fault.at == Point::kAlloc) return ", inside its allocation once the runtime answered";
  if (fault.at == Point::kGetHandle) return ", inside its handle export once the runtime answered";
  if (!fault.peer) return {};
  return ", inside its open of peer " + std::to_string(*fault.peer) + " once the runtime answered";
}

// A mapping fault that fires before a rank stops inside its open of a peer: in that very open,
// or (rule 11 keeps out the rest) in an earlier one.
bool opensBeforeStop(const RankFate& f, const Fault& fault) {
  // A foreign exception thrown at an open is that open's failure (model::actingFault).
  const Fault acting = model::actingFault(fault);
  // Inside its allocation or its handle export: that call's own fault fires first.
  if (f.stoppedAt == Point::kAlloc) return acting.site == FaultSite::kAlloc;
  if (f.stoppedAt == Point::kGetHandle) return acting.site == FaultSite::kGetHandle;
  return f.stoppedPeer && mappingSite(acting.site) &&
         (!acting.peer || *acting.peer <= *f.stoppedPeer);
}

// What the walk decided, read back for the narration.
struct Narrator {
  const Scenario& scenario;
  const Walk& walk;
  std::vector<int> last;  // the last position each rank reaches
  // Each rank's calls and which of its faults they draw (model/rank_calls.h): one fault a call,
  // and no open after the first that fails.
  std::vector<model::RankCalls> calls;

  Narrator(const Scenario& s, const Walk& w) : scenario(s), walk(w) {
    for (int rank = 0; rank < s.ranks; ++rank) last.push_back(lastPosition(rank));
    for (int rank = 0; rank < s.ranks; ++rank) {
      calls.push_back(model::rankCalls(s, rank, callsReached(rank)));
    }
  }

  // How far the walk took the rank, as model::rankCalls reads it.
  model::CallsReached callsReached(int rank) const {
    const RankFate& f = fate(rank);
    model::CallsReached reached;
    reached.chanceFailuresFire = true;  // a draw: the chance failures it holds fire
    reached.releases = f.end == RankFate::End::kOk || f.end == RankFate::End::kRaised;
    if (scenario.ranks < 2) return reached;
    reached.receives = walk.exchangeCompleted;
    reached.failureRecords = walk.failureRecords;
    if (f.stopped()) {
      reached.opens = f.stoppedAt == Point::kOpen
                          ? f.stoppedPeer.has_value()
                          : scenario::timelinePosition(f.stoppedAt) > kAtOpen;
      if (f.stoppedAt == Point::kOpen) reached.stopsInOpenOf = f.stoppedPeer;
    } else if (f.end == RankFate::End::kRaised) {
      // It raised at the agreement (or later), having opened; one that could not decode a peer's
      // entry opened nothing.
      reached.opens =
          last[static_cast<std::size_t>(rank)] >= kAtAgree && firstDamagedPeer(rank) < 0;
    } else {
      reached.opens = true;
    }
    return reached;
  }

  // Where the timeline tells of `fault`: its position, but a handle fault of a rank that received
  // the entries and stops before its opens is told at the exchange, where it fired.
  int notePosition(int rank, const Fault& fault) const {
    const int position = scenario::timelinePosition(fault);
    if (handleSite(fault.site) && last[static_cast<std::size_t>(rank)] < position &&
        callsReached(rank).receives) {
      return kAtExchange;
    }
    return position;
  }

  const model::Silence* silence(int rank, std::size_t index) const {
    return calls[static_cast<std::size_t>(rank)].silence(index);
  }

  // Why the calls never draw fault `s.fault` on `rank` (model::Silence), worded.
  std::string silenceText(int rank, const model::Silence& s) const {
    const Fault& fault = scenario.faults[s.fault];
    const std::string by = faultName(scenario, s.by);
    switch (s.why) {
      case model::Silence::Why::kAfterFailed:
        return "rank " + std::to_string(rank) + "'s open of peer " + std::to_string(*s.peer) +
               " fails first (" + by + "), and the core stops opening at its first failed open" +
               (s.maybe ? " (when that chance fault fires)" : "");
      case model::Silence::Why::kUnmapped:
        return "it never maps " +
               (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("a peer")) +
               ", so it never closes one: rank " + std::to_string(rank) + "'s open of peer " +
               std::to_string(*s.peer) + " fails first (" + by +
               "), and the core stops opening there";
      case model::Silence::Why::kNoHandle:
        return (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("every peer")) +
               " sends a failure record in the exchange: there is no handle to damage";
      case model::Silence::Why::kTaken:
        break;
    }
    std::string what = toString(fault.site) + " call";
    if (fault.site == FaultSite::kOpen || fault.site == FaultSite::kForeignException) {
      what = s.peer ? "open of peer " + std::to_string(*s.peer) : what;
    } else if (fault.site == FaultSite::kHandleCorrupt || fault.site == FaultSite::kHandleStale) {
      what = "handle of peer " + std::to_string(s.peer.value_or(0)) + " as it receives it";
    } else if (fault.site == FaultSite::kClose) {
      what = "close of peer " + std::to_string(s.peer.value_or(0));
    } else if (fault.site == FaultSite::kGroupFail) {
      what = std::string(fault.at == Point::kExchange ? "all-gather" : "all-reduce");
    }
    return (s.maybe ? "the seed decides: it fires only where " + by + ", drawn first at its " +
                          what + " by chance, does not"
                    : by + " takes its " + what + " first") +
           " (the fault plan fires one fault a call, the first of the file's order)";
  }

  const RankFate& fate(int rank) const { return walk.fates[static_cast<std::size_t>(rank)]; }

  int lastPosition(int rank) const {
    const RankFate& f = fate(rank);
    switch (f.end) {
      case RankFate::End::kOk:
        return f.skips ? 0 : kAtClose;  // it never makes the construction the timeline tells
      case RankFate::End::kDead:
      case RankFate::End::kHung:
      case RankFate::End::kExited:
        return scenario::timelinePosition(f.stoppedAt);
      case RankFate::End::kRaised:
        break;
    }
    auto it = walk.raisedAt.find(rank);
    const int at = it == walk.raisedAt.end() ? 0 : it->second;
    // A single rank has no group call: it raises where its own fault fails.
    if (scenario.ranks == 1 && at == 0) {
      if (walk.has(FaultSite::kAlloc, rank)) return kAtAlloc;
      if (walk.has(FaultSite::kAllocTable, rank) || walk.has(FaultSite::kCopyTable, rank)) {
        return kAtOpen;
      }
    }
    return at;
  }

  bool raisedAt(int rank, int position) const {
    return fate(rank).end == RankFate::End::kRaised &&
           last[static_cast<std::size_t>(rank)] == position;
  }

  // A collective-order fault of `rank` at the group call at `position`.
  bool reordered(int rank, int position) const {
    return walk.reordered(rank, position == kAtExchange ? Point::kExchange : Point::kAgree);
  }
  // Some rank that raised at the group call at `position` made the other collective there.
  bool mismatched(int position) const {
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (raisedAt(rank, position) && reordered(rank, position)) return true;
    }
    return false;
  }

  bool ownGroupFail(int rank, int position) const {
    const Point point = position == kAtExchange ? Point::kExchange : Point::kAgree;
    // A foreign exception at the call acts as a group-fail there, raised as it is (a {text}).
    const MessageExpectation& message = fate(rank).message;
    const bool raised = message.kind == MessageKind::kGroup ||
                        (message.kind == MessageKind::kText &&
                         message.text.starts_with(model::kForeignExceptionText));
    return raisedAt(rank, position) && raised && walk.has(FaultSite::kGroupFail, rank, point);
  }

  // An open of the rank fails (its own open, foreign-exception or handle-* fault): the table,
  // built after the last open, is never built.
  bool mappingFailed(int rank) const {
    return calls[static_cast<std::size_t>(rank)].failedOpen.has_value();
  }

  // The ranks that do not arrive at the group call at `position`, each with why.
  std::vector<std::pair<int, std::string>> missing(int position) const {
    std::vector<std::pair<int, std::string>> out;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      const RankFate& f = fate(rank);
      const int reached = last[static_cast<std::size_t>(rank)];
      if (f.stopped() && reached <= position) {
        out.emplace_back(rank, "it " + stopVerb(f, true) + " at " + stopPlace(f));
      } else if (f.skips) {
        out.emplace_back(rank, "it registers " +
                                   std::to_string(model::registeredBy(scenario, rank)) +
                                   " buffer(s) and never makes this construction (buffer-count)");
      } else if (ownGroupFail(rank, position)) {
        out.emplace_back(rank, reordered(rank, position)
                                   ? std::string("it makes the other collective (collective-order)")
                               : f.message.kind == MessageKind::kGroup
                                   ? "its own call failed (group-fail)"
                                   : "its own call threw a foreign exception");
      } else if (f.end == RankFate::End::kRaised && reached < position) {
        out.emplace_back(rank, "it raised at '" + std::string(model::positionName(reached)) + "'");
      }
    }
    return out;
  }

  // The ranks that raised `kind` at `position`.
  std::vector<int> raising(int position, MessageKind kind) const {
    std::vector<int> out;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (raisedAt(rank, position) && fate(rank).message.kind == kind) out.push_back(rank);
    }
    return out;
  }

  // Why a group call at `position` failed although every rank arrived: lateness.
  bool failedByLateness(int position) const {
    if (!missing(position).empty()) return false;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (raisedAt(rank, position) && fate(rank).message.kind == MessageKind::kGroup) return true;
    }
    return false;
  }

  std::string latenessText(int position) const {
    const std::array<Point, 2> points =
        position == kAtExchange ? std::array<Point, 2>{Point::kBeforeConstruct, Point::kExchange}
                                : std::array<Point, 2>{Point::kOpen, Point::kAgree};
    milliseconds least = milliseconds::max(), most{0};
    int latest = 0;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      const Lateness late =
          latenessAt(scenario, rank, points[0]) + latenessAt(scenario, rank, points[1]);
      least = std::min(least, late.least);
      if (late.least > most) {
        most = late.least;
        latest = rank;
      }
    }
    return "rank " + std::to_string(latest) + " arrives " + scenario::formatDuration(most - least) +
           " after the first, not within the " + "deadline (" +
           scenario::formatDuration(scenario.deadline) +
           "): the first rank gives up, and the thread launcher's world breaks for every rank";
  }

  std::string callNote(int rank, int position) const {
    const auto away = missing(position);
    if (!away.empty()) {
      std::string who;
      for (const auto& [other, why] : away) {
        if (other == rank) continue;
        who += (who.empty() ? "" : "; ") + ("rank " + std::to_string(other) + ": " + why);
      }
      if (mismatched(position)) {
        return callName(position) + " meets another collective (" + who +
               "): the group ends it on every rank of it, at once or at the deadline (" +
               scenario::formatDuration(scenario.deadline) + ") at the latest";
      }
      return callName(position) + " waits for a rank that never comes (" + who +
             ") and gives up at the deadline (" + scenario::formatDuration(scenario.deadline) + ")";
    }
    if (failedByLateness(position)) return callName(position) + " fails: " + latenessText(position);
    if (position == kAtExchange) {
      const std::vector<int> failed = raising(kAtExchange, MessageKind::kThis);
      if (!failed.empty()) {
        return callName(position) + " completes, carrying the failure record of " +
               rankNames(failed);
      }
      if (const auto mismatch = model::bufferMismatch(scenario)) {
        return callName(position) + " of construction " + std::to_string(mismatch->at) +
               " completes: every rank sent its handle, " + rankNames(mismatch->ranks) +
               " with another size or label than rank 0";
      }
      return callName(position) + " completes: every rank sent its handle";
    }
    const std::vector<int> failed = raising(kAtAgree, MessageKind::kThis);
    if (!failed.empty()) {
      return callName(position) + " completes: false (" + rankNames(failed) + " failed)";
    }
    return callName(position) + " completes: true, every rank mapped every peer";
  }

  // Why fault `index`, at a position `rank` reaches, never fires there, or empty when it fires:
  // an earlier failure of the rank's own skips the call the fault sits on, a rank that stops
  // never makes the calls after its own point, and a release fault fires only where the rank
  // releases what it holds.
  std::string silentWhy(int rank, std::size_t index) const {
    const Fault& fault = scenario.faults[index];
    const RankFate& f = fate(rank);
    const int reached = last[static_cast<std::size_t>(rank)];
    const int position = scenario::timelinePosition(fault);
    const bool stopped = f.stopped();
    const bool release = fault.site == FaultSite::kClose || fault.site == FaultSite::kFree;
    if (stopped && release) {
      return "it " + stopVerb(f, false) + " at " + stopPlace(f) + " and never releases anything";
    }
    if (release && neverConstructs(rank))
      return "it never constructs, so it holds nothing to release";
    // At the point where a rank dies, hangs or exits only the delays there fire before it stops
    // (faults/fault_plan.cc, atPoint); inside the open of a peer, the mapping faults of the opens
    // up to that peer's too (atOpenOf: after the runtime answered).
    if (stopped && position == reached && !model::stopsRank(fault.site) &&
        fault.site != FaultSite::kDelay && !opensBeforeStop(f, fault)) {
      return "it " + stopVerb(f, false) + " at " + stopPlace(f) + " first";
    }
    switch (fault.site) {
      case FaultSite::kGetHandle:
        if (walk.has(FaultSite::kAlloc, rank)) return "its allocation failed first";
        break;
      case FaultSite::kAllocTable:
      case FaultSite::kCopyTable:
        if (scenario.ranks > 1 && mappingFailed(rank)) {
          return "an open failed first (the table is built after the last open)";
        }
        if (fault.site == FaultSite::kCopyTable && walk.has(FaultSite::kAllocTable, rank)) {
          return "the table's allocation failed first";
        }
        if (scenario.ranks == 1 && walk.has(FaultSite::kAlloc, rank)) {
          return "its buffer's allocation failed first";
        }
        break;
      case FaultSite::kGroupFail:
        if (!ownGroupFail(rank, position)) return "the rank never makes that group call";
        break;
      case FaultSite::kClose:
        if (f.end == RankFate::End::kRaised && reached < kAtAgree) return "the rank mapped no peer";
        break;
      case FaultSite::kFree:
        if (f.end == RankFate::End::kRaised && walk.has(FaultSite::kAlloc, rank)) {
          return "its allocation failed";
        }
        break;
      default:
        break;
    }
    return {};
  }

  // faultNote's alloc-table and copy-table case.
  std::string tableNote(int rank, const Fault& fault, const std::string& name) const {
    if (scenario.ranks > 1 && mappingFailed(rank)) {
      return name +
             ": never fires, an open failed first (the table is built after the last "
             "open)";
    }
    if (fault.site == FaultSite::kCopyTable && walk.has(FaultSite::kAllocTable, rank)) {
      return name + ": never fires, the table's allocation failed first";
    }
    if (scenario.ranks == 1 && walk.has(FaultSite::kAlloc, rank)) {
      return name + ": never fires, its buffer's allocation failed first";
    }
    const std::string what = fault.site == FaultSite::kAllocTable
                                 ? "the allocation of its device address table fails"
                                 : "the copy of the addresses into its device table fails";
    return name + ": " + what +
           (scenario.ranks > 1 ? "; it keeps the failure for the agreement" : "");
  }

  // What a rank whose alloc or get-handle failed does next: it joins the exchange with a failure
  // record, unless it stops before it posts its entry (a death, hang or exit at or before
  // exchange-send: vLLM's CUDACHECK exit after a failed export), when nobody receives the record.
  std::string exchangeJoin(int rank, const std::string& what) const {
    const RankFate& f = fate(rank);
    if (f.stopped() && scenario::timelinePosition(f.stoppedAt) <= kAtExchange) {
      return "; then it " + stopVerb(f, false) + " at " + stopPlace(f) +
             " before posting its entry: nobody receives " + what;
    }
    return "; it joins the exchange with " + what;
  }

  // faultNote's foreign-exception case: the fault acts as the failure of the call it names.
  std::string foreignNote(int rank, const Fault& fault, const std::string& name) const {
    const Fault acting = model::actingFault(fault);
    std::string then;
    if (acting.site == FaultSite::kGroupFail) {
      then = "; it leaves the group call before sending and raises it as it is";
    } else if (acting.site == FaultSite::kAlloc || acting.site == FaultSite::kGetHandle) {
      then = exchangeJoin(rank, "a failure record (code 0)") +
             (fate(rank).stopped() ? "" : " and chains it");
    } else {
      then = "; it keeps it for the agreement, as its own failure, and chains it";
    }
    return name + ": its " + std::string(faults::seamCallName(fault.call)) +
           (fault.peer ? " of peer " + std::to_string(*fault.peer) : std::string()) +
           " throws a foreign exception (not a peerconf::Error)" + then;
  }

  // faultNote's entry-corrupt case.
  std::string entryCorruptNote(int rank, const Fault& fault, const std::string& name) const {
    return name + ": it receives " +
           (fault.peer ? "peer " + std::to_string(*fault.peer) + "'s exchange entry"
                       : std::string("every peer's exchange entry")) +
           " damaged (" + entryPartText(fault.part) +
           "); its decoder refuses it as malformed and keeps a GroupError naming the first "
           "such peer (" +
           std::to_string(firstDamagedPeer(rank)) + ") as its own failure";
  }

  std::string faultNote(int rank, std::size_t index) const {
    const Fault& fault = scenario.faults[index];
    std::string name = faultName(scenario, index);
    switch (fault.site) {
      case FaultSite::kDelay:
        return name + ": late by " + scenario::formatDuration(fault.delay);
      case FaultSite::kAlloc:
        return name + ": its buffer's allocation fails" +
               (scenario.ranks > 1 ? exchangeJoin(rank, "a failure record") : "");
      case FaultSite::kGetHandle:
        if (walk.has(FaultSite::kAlloc, rank)) {
          return name + ": never fires, its allocation failed first";
        }
        return name + ": its handle export fails" + exchangeJoin(rank, "a failure record");
      case FaultSite::kOpen:
        return name + ": it cannot map " +
               (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("its peers")) +
               (fate(rank).stopped()
                    ? "; then it " + stopVerb(fate(rank), false) + " at " + stopPlace(fate(rank))
                    : std::string("; it keeps the failure for the agreement"));
      case FaultSite::kHandleCorrupt:
      case FaultSite::kHandleStale:
        return name + ": it receives a " +
               (fault.site == FaultSite::kHandleCorrupt ? "corrupted" : "stale") + " handle of " +
               (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("its peers")) +
               "; the runtime refuses to open it, and it keeps the failure for the agreement";
      case FaultSite::kAllocTable:
      case FaultSite::kCopyTable:
        return tableNote(rank, fault, name);
      case FaultSite::kGroupFail:
        return name + ": its " + (fault.at == Point::kExchange ? "all-gather" : "all-reduce") +
               " fails locally before it sends anything";
      case FaultSite::kDeath:
        return name + ": it dies here" + insideOpen(fault);
      case FaultSite::kHang:
        return name + ": it hangs here" + insideOpen(fault);
      case FaultSite::kExit:
        return name + ": its process exits here with code " + std::to_string(fault.code) +
               insideOpen(fault) + " (reported exited)";
      case FaultSite::kClose:
        return name + ": close() cannot unmap " +
               (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("a peer")) +
               "; it raises a CloseError naming it after every other release (C3)";
      case FaultSite::kFree:
        return name +
               ": close() cannot free its buffer; it raises a CloseError naming it after "
               "every other release (C3)";
      case FaultSite::kNotReady:
        if (scenario.ranks > 1 && scenario.runner.agreeFirst) {
          return name +
                 ": its setup fails before the constructor; it says so in the runner's "
                 "agreement and no rank constructs";
        }
        return name + ": its setup fails before the constructor; it never constructs" +
               (scenario.ranks > 1 ? " and never joins the exchange" : "");
      case FaultSite::kBufferOrder:
      case FaultSite::kBufferSize:
      case FaultSite::kBufferLabel:
        return name + ": " + constructionNote(rank, index);
      case FaultSite::kBufferCount:
        return name + ": " + model::countFaultText(scenario, rank) +
               (fate(rank).skips ? std::string()
                                 : "; it posts its entry in that construction's exchange and "
                                   "waits alone");
      case FaultSite::kForeignException:
        return foreignNote(rank, fault, name);
      case FaultSite::kEntryCorrupt:
        return entryCorruptNote(rank, fault, name);
      case FaultSite::kExchangeLong:
        return name + ": the exchange it receives holds " + std::to_string(scenario.ranks + 1) +
               " entries for its " + std::to_string(scenario.ranks) +
               " ranks; its decoder refuses the list before reading any entry and keeps a "
               "GroupError (no peer) as its own failure";
    }
    return name;
  }

  // The first peer whose entry `rank`'s entry-corrupt faults damage (the decoder reads the entries
  // in rank order and keeps the first failure), or -1.
  int firstDamagedPeer(int rank) const {
    for (int peer = 0; peer < scenario.ranks; ++peer) {
      if (peer == rank) continue;
      for (const Fault& f : scenario.faults) {
        if (f.site == FaultSite::kEntryCorrupt && f.appliesTo(rank) &&
            (!f.peer || *f.peer == peer)) {
          return peer;
        }
      }
    }
    return -1;
  }

  static std::string entryPartText(faults::EntryPart part) {
    switch (part) {
      case faults::EntryPart::kMagic:
        return "the magic's second byte";
      case faults::EntryPart::kKind:
        return "an unknown kind";
      case faults::EntryPart::kTail:
        return "a byte its kind leaves zero: a handle entry's label padding, a failure record's "
               "handle";
    }
    return "?";
  }

  // Where a buffer-* fault makes `rank` construct another buffer than the list says.
  std::string constructionNote(int rank, std::size_t index) const {
    const auto constructions = model::constructionsOf(scenario, rank);
    const auto listed = model::listedBuffers(scenario);
    for (std::size_t at = 0; at < constructions.size(); ++at) {
      const auto& fired = constructions[at].faults;
      if (std::find(fired.begin(), fired.end(), index) == fired.end()) continue;
      return "its construction " + std::to_string(at) + " registers " +
             model::describeBuffer(constructions[at].bytes, constructions[at].label) +
             " where the list has " + model::describeBuffer(listed[at].bytes, listed[at].label);
    }
    return "it constructs the listed buffers as they are";
  }

  // A close or free fault of a rank that raised: it fires, or not, in the cleanup.
  // It raised before the constructor (its setup, or the runner's agreement, failed).
  bool neverConstructs(int rank) const {
    return fate(rank).end == RankFate::End::kRaised &&
           last[static_cast<std::size_t>(rank)] == model::kTimelineBeforeConstruct;
  }

  std::string cleanupNote(int rank, std::size_t index) const {
    const Fault& fault = scenario.faults[index];
    const std::string name = faultName(scenario, index);
    const int reached = last[static_cast<std::size_t>(rank)];
    if (neverConstructs(rank)) return name + ": never fires, it never constructs";
    if (const model::Silence* s = silence(rank, index)) {
      return name + (s->maybe ? ": may not fire: " : ": never fires: ") + silenceText(rank, *s);
    }
    if (fault.site == FaultSite::kClose) {
      if (reached < kAtAgree) return name + ": never fires, the rank mapped no peer";
      return name +
             ": fires in the cleanup where the rank had mapped that peer; it is kept with "
             "the error (cleanupErrors), the message is unchanged";
    }
    if (walk.has(FaultSite::kAlloc, rank)) return name + ": never fires, its allocation failed";
    return name +
           ": fires in the cleanup (freeing its buffer); it is kept with the error "
           "(cleanupErrors), the message is unchanged";
  }

  // How a rank that returns ends: every buffer it constructed (a buffer-count rank that skips a
  // construction), or a usable PeerBuffer and what its close() does.
  std::string okText(int rank, const RankFate& f) const {
    if (f.skips) {
      const auto count = model::countMismatch(scenario);
      return "returns every buffer it constructed (" +
             std::to_string(model::registeredBy(scenario, rank)) +
             ") and closes them: it never makes construction " +
             std::to_string(count ? count->at : 0) + ", where " +
             rankNames(count ? count->waiting : std::vector<int>{}) +
             " wait for it; it raises nothing (ok)";
    }
    const bool closeFails =
        std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& fault) {
          return (fault.site == FaultSite::kClose || fault.site == FaultSite::kFree) &&
                 fault.appliesTo(rank);
        });
    const std::string report = f.reportsDataPlaneStop
                                   ? "its data plane times out waiting for the stopped rank (or "
                                     "is aborted by a peer that did) and reports " +
                                         toString(f.message) + "; "
                                   : std::string();
    return std::string("returns a usable PeerBuffer; ") + report +
           (closeFails ? "close() raises a CloseError naming each failed release"
                       : "close() releases everything");
  }

  std::string endText(int rank) const {
    const RankFate& f = fate(rank);
    const int reached = last[static_cast<std::size_t>(rank)];
    switch (f.end) {
      case RankFate::End::kDead:
        return "dies at " + stopPlace(f) + ": reported dead";
      case RankFate::End::kHung:
        return "hangs at " + stopPlace(f) + ": reported hung";
      case RankFate::End::kExited:
        return "exits at " + stopPlace(f) + ": reported exited";
      case RankFate::End::kOk:
        return okText(rank, f);
      case RankFate::End::kRaised:
        break;
    }
    const std::string raises = "raises " + toString(f.message) + ": ";
    if (scenario.ranks == 1) {
      return raises + "its backend error as it is (a single rank has nobody to agree with)";
    }
    if (f.message.kind == MessageKind::kGroup) {
      if (ownGroupFail(rank, reached) && reordered(rank, reached)) {
        return raises + "its call met the others' other collective (collective-order)";
      }
      if (ownGroupFail(rank, reached)) return raises + "its own group call failed";
      if (mismatched(reached)) return raises + callName(reached) + " met another collective";
      if (failedByLateness(reached)) return raises + callName(reached) + " failed (lateness)";
      return raises + callName(reached) + " timed out waiting for a rank";
    }
    if (f.message.kind == MessageKind::kText &&
        f.message.text.starts_with(model::kForeignExceptionText)) {
      return raises + "its own group call threw a foreign exception, raised as it is";
    }
    if (f.message.kind == MessageKind::kText && f.message.text == kNotReadyThisRankMessage) {
      return raises + "its setup failed before the constructor" +
             (scenario.runner.agreeFirst ? "; it said so in the runner's agreement" : "");
    }
    if (f.message.kind == MessageKind::kText && f.message.text == kNotReadyAnotherRankMessage) {
      return raises +
             "the runner's agreement is false: a rank was not ready, so no rank constructs";
    }
    if (const auto mismatch = model::bufferMismatch(scenario);
        mismatch && f.message.kind == MessageKind::kText) {
      return raises + rankNames(mismatch->ranks) + " registered another buffer than rank 0 at " +
             "construction " + std::to_string(mismatch->at) +
             ": every rank compares the same entries and raises BufferMismatchError, before any "
             "open" +
             (mismatch->at > 0 ? " (its constructions before it succeeded; it closes them)" : "");
    }
    if (reached == kAtExchange) {
      if (f.message.kind == MessageKind::kThis) {
        return raises + "its own allocation or handle export failed (the backend error chained)";
      }
      return raises + rankNames(raising(kAtExchange, MessageKind::kThis)) +
             " sent a failure record";
    }
    if (f.message.kind == MessageKind::kThis && firstDamagedPeer(rank) >= 0) {
      return raises + "it could not decode peer " + std::to_string(firstDamagedPeer(rank)) +
             "'s exchange entry (the first malformed one: its GroupError chained); the "
             "agreement is false on every rank";
    }
    if (f.message.kind == MessageKind::kThis) {
      return raises +
             "its mapping of a peer or its address table failed (the backend error "
             "chained); the agreement is false on every rank";
    }
    return raises + "the agreement is false (" + rankNames(raising(kAtAgree, MessageKind::kThis)) +
           " failed)";
  }

  // The ranks a waiting rank's GroupTimeout names (src/errors.h: "(rank 3 did not arrive)"), where
  // the derivation can tell them: ranks as threads only (`launchers: [threads]`: an MPI
  // collective names none), and only ranks that stopped before the call (no delay, group-fail or
  // not-ready, which also leave a rank out of a call). Empty otherwise.
  std::string missingText(int rank, int call) const {
    if (scenario.launchers != std::vector<std::string>{"threads"}) return {};
    for (const Fault& fault : scenario.faults) {
      if (fault.site == FaultSite::kDelay || fault.site == FaultSite::kGroupFail ||
          fault.site == FaultSite::kNotReady) {
        return {};
      }
    }
    std::vector<int> missing;
    for (int other = 0; other < scenario.ranks; ++other) {
      if (other == rank) continue;
      if ((fate(other).stopped() && last[static_cast<std::size_t>(other)] <= call) ||
          fate(other).skips) {
        missing.push_back(other);
      }
    }
    if (missing.empty()) return {};
    std::string text = missing.size() == 1 ? "(rank " : "(ranks ";
    for (std::size_t i = 0; i < missing.size(); ++i) {
      text += (i > 0 ? ", " : "") + std::to_string(missing[i]);
    }
    return text + " did not arrive)";
  }

  std::string messageText(int rank) const {
    const RankFate& f = fate(rank);
    if (f.reportsDataPlaneStop) return f.message.text;
    if (f.end != RankFate::End::kRaised) return {};
    switch (f.message.kind) {
      case MessageKind::kThis:
        return std::string(model::kThisRankMessage);
      case MessageKind::kAnother:
        return std::string(model::kAnotherRankMessage);
      case MessageKind::kText:
        return f.message.text;
      case MessageKind::kGroup:
        break;
    }
    const int reached = last[static_cast<std::size_t>(rank)];
    if (f.waited) return missingText(rank, reached);
    // A mismatched call's group error is the group's own (the thread world's or MpiGroup's).
    if (!ownGroupFail(rank, reached) || reordered(rank, reached)) return {};
    // faults/faulty_group.cc: the group error of a planted group-fail.
    return std::string(reached == kAtExchange ? "all-gather" : "all-reduce") + " failed on rank " +
           std::to_string(rank);
  }

  // Over 80 lines: one rank's timeline, point by point; to be split by point.
  // NOLINTNEXTLINE(readability-function-size): to be split
  RankTimeline timeline(int rank) const {
    RankTimeline out;
    out.fate = fate(rank);
    const int reached = last[static_cast<std::size_t>(rank)];
    for (int position : positionsOf(scenario)) {
      if (position > reached) break;
      TimelineStep step;
      step.at = positionName(scenario, position);
      for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
        const Fault& fault = scenario.faults[i];
        if (!fault.appliesTo(rank) || notePosition(rank, fault) != position) continue;
        const bool release = fault.site == FaultSite::kClose || fault.site == FaultSite::kFree;
        if (release && out.fate.end != RankFate::End::kOk) continue;  // see the cleanup below
        if (fault.site == FaultSite::kGroupFail && !ownGroupFail(rank, position)) continue;
        const model::Silence* s = silence(rank, i);
        if (s != nullptr) {
          step.notes.push_back(faultName(scenario, i) +
                               (s->maybe ? ": may not fire: " : ": never fires: ") +
                               silenceText(rank, *s));
        } else if (position != scenario::timelinePosition(fault)) {
          step.notes.push_back(faultName(scenario, i) + ": it receives " +
                               (fault.peer ? "peer " + std::to_string(*fault.peer) + "'s handle"
                                           : std::string("its peers' handles")) +
                               " damaged, but the exchange ends its handshake before it opens one");
        } else {
          step.notes.push_back(faultNote(rank, i));
        }
      }
      const bool groupPosition =
          scenario.ranks > 1 && (position == kAtExchange || position == kAtAgree);
      const bool stopsHere = out.fate.stopped() || ownGroupFail(rank, position);
      if (groupPosition && !(position == reached && stopsHere)) {
        step.notes.push_back(callNote(rank, position));
        if (failedByLateness(position)) out.lateness = true;
      }
      if (position == kAtDataplane && out.fate.reportsDataPlaneStop) {
        step.notes.push_back("its data plane waits for the pair of " +
                             rankNames(model::dataPlaneStopRanks(scenario)) +
                             ", which stopped, until the timeout: it reports " +
                             toString(out.fate.message));
      }
      if (position == reached && out.fate.end == RankFate::End::kRaised) {
        for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
          const Fault& fault = scenario.faults[i];
          if ((fault.site == FaultSite::kClose || fault.site == FaultSite::kFree) &&
              fault.appliesTo(rank)) {
            step.notes.push_back(cleanupNote(rank, i));
          }
        }
      }
      out.steps.push_back(std::move(step));
    }
    out.end = endText(rank);
    out.messageText = messageText(rank);
    const std::vector<int> positions = positionsOf(scenario);
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const Fault& fault = scenario.faults[i];
      if (!fault.appliesTo(rank)) continue;
      const int position = scenario::timelinePosition(fault);
      const bool release = fault.site == FaultSite::kClose || fault.site == FaultSite::kFree;
      // A raising rank releases in its cleanup, where it raised (cleanupNote).
      const bool onTheWay =
          std::find(positions.begin(), positions.end(), position) != positions.end() &&
          position <= reached;
      std::string why = silentWhy(rank, i);
      if (why.empty() && !onTheWay && !(release && out.fate.end == RankFate::End::kRaised)) {
        why = "the rank never reaches '" + positionName(scenario, position) + "': it " + out.end;
      }
      if (handleSite(fault.site) && callsReached(rank).receives) {
        why.clear();  // it fires as the rank receives the entries, whatever comes after
      } else if (handleSite(fault.site) && why.empty()) {
        why = "the rank never receives its peers' entries: it " + out.end;
      }
      if (const model::Silence* s = silence(rank, i); why.empty() && s != nullptr) {
        why = silenceText(rank, *s);
      }
      if (why.empty()) {
        out.fired.push_back(i);
      } else {
        out.neverFired.emplace_back(i, std::move(why));
      }
    }
    return out;
  }
};

bool chanceFailing(const Fault& fault) {
  return failingSite(fault.site) && fault.probability < 1.0;
}

}  // namespace

namespace {

// The faults of `file` aimed at a buffer after a construction that fails for certain never fire:
// the rank runner constructs nothing after it (model::failingConstructionBefore). The aimed
// construction names them for no rank, so the narrator does not list them; they are listed here.
void addUnconstructed(const Scenario& file, std::vector<RankTimeline>& timelines) {
  for (std::size_t i = 0; i < file.faults.size(); ++i) {
    const Fault& fault = file.faults[i];
    if (!fault.onBuffer) continue;
    const auto first =
        model::failingConstructionBefore(file, static_cast<std::size_t>(*fault.onBuffer));
    if (!first) continue;
    for (int rank : fault.ranks) {
      if (rank < 0 || rank >= static_cast<int>(timelines.size())) continue;
      timelines[static_cast<std::size_t>(rank)].neverFired.emplace_back(
          i, "construction " + std::to_string(*first) + " (buffer " + std::to_string(*first) +
                 ") fails first, and no later buffer is constructed");
    }
  }
}

}  // namespace

std::vector<RankTimeline> deriveTimelines(const Scenario& file) {
  const Scenario scenario = model::aimedConstruction(model::withDeviceMemoryFaults(file));
  Walk walk(scenario);
  walk.run();
  const Narrator narrator(scenario, walk);
  std::vector<RankTimeline> out;
  for (int rank = 0; rank < scenario.ranks; ++rank) out.push_back(narrator.timeline(rank));
  addUnconstructed(file, out);
  return out;
}

bool messageAgrees(const MessageExpectation& written, const MessageExpectation& derived,
                   const RankTimeline& timeline) {
  if (written.kind == derived.kind) {
    return written.kind != MessageKind::kText ||
           derived.text.find(written.text) != std::string::npos;
  }
  return written.kind == MessageKind::kText && !timeline.messageText.empty() &&
         timeline.messageText.find(written.text) != std::string::npos;
}

std::vector<Draw> deriveDraws(const Scenario& file) {
  const Scenario scenario = model::aimedConstruction(model::withDeviceMemoryFaults(file));
  std::vector<std::pair<std::size_t, int>> pairs;
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    if (!chanceFailing(scenario.faults[i])) continue;
    for (int rank : scenario.faults[i].ranks) pairs.emplace_back(i, rank);
  }
  if (pairs.size() > kMaxChancePairs) {
    throw std::invalid_argument("cannot derive the outcome of " + scenario.name + ": " +
                                std::to_string(pairs.size()) +
                                " (fault, rank) pairs fail the handshake by chance; explain "
                                "enumerates the draws of at most " +
                                std::to_string(kMaxChancePairs));
  }
  std::vector<Draw> draws;
  const std::size_t combinations = std::size_t{1} << pairs.size();
  for (std::size_t n = 0; n < combinations; ++n) {
    const std::size_t fires = combinations - 1 - n;  // the first draw: every chance fault fires
    Draw draw;
    draw.scenario = scenario;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const auto [index, rank] = pairs[k];
      Fault& fault = draw.scenario.faults[index];
      if ((fires >> k) & 1U) {
        draw.fired.push_back(pairs[k]);
      } else {
        draw.silent.push_back(pairs[k]);
        fault.ranks.erase(std::find(fault.ranks.begin(), fault.ranks.end(), rank));
      }
    }
    for (Fault& fault : draw.scenario.faults) {
      if (chanceFailing(fault)) fault.probability = 1.0;
    }
    draw.expect = deriveExpectation(draw.scenario);
    // The narration names the faults as the file writes them (with their probability); the walk
    // reads no probability of a failing site, so the fates are the same.
    Scenario named = draw.scenario;
    for (std::size_t i = 0; i < named.faults.size(); ++i) {
      named.faults[i].probability = scenario.faults[i].probability;
    }
    draw.timelines = deriveTimelines(named);
    addUnconstructed(file, draw.timelines);
    draws.push_back(std::move(draw));
  }
  return draws;
}

}  // namespace peerconf::harness::expectation
