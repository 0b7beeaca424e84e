// Expectation derivation: each rank's timeline walked group call by group call, the way the
// production PeerBuffer and the thread launcher's groups behave (a rank that never arrives makes
// the others time out; a completed agreement makes every rank raise or return together).
#include "explore/expectation.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace peerconf::harness::explore {

namespace {

using std::chrono::milliseconds;

constexpr std::array<Point, 5> kPoints{Point::kBeforeConstruct, Point::kExchange, Point::kOpen,
                                       Point::kAgree, Point::kClose};

bool targets(const Fault& fault, int rank) {
  return std::find(fault.ranks.begin(), fault.ranks.end(), rank) != fault.ranks.end();
}

bool failingSite(FaultSite site) {
  switch (site) {
    case FaultSite::kAlloc:
    case FaultSite::kGetHandle:
    case FaultSite::kOpen:
    case FaultSite::kHandleCorrupt:
    case FaultSite::kHandleStale:
    case FaultSite::kAllocTable:
    case FaultSite::kCopyTable:
    case FaultSite::kGroupFail:
    case FaultSite::kNotReady:
      return true;
    default:
      return false;
  }
}

bool mappingSite(FaultSite site) {
  return site == FaultSite::kOpen || site == FaultSite::kHandleCorrupt ||
         site == FaultSite::kHandleStale;
}

// The device address table: built after the last open, before the agreement (or, with one rank,
// before the constructor returns).
bool tableSite(FaultSite site) {
  return site == FaultSite::kAllocTable || site == FaultSite::kCopyTable;
}

// Failures the ranks agree on: each fails its own rank only, after the exchange, and every rank
// still reaches the agreement.
bool agreedSite(FaultSite site) { return mappingSite(site) || tableSite(site); }

// The lateness a rank brings to a point: certain delays always, chance delays maybe.
struct Lateness {
  milliseconds least{0};
  milliseconds most{0};
};

Lateness latenessAt(const Scenario& scenario, int rank, Point point) {
  Lateness late;
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kDelay || fault.at != point || !targets(fault, rank)) continue;
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

struct Walk {
  const Scenario& scenario;
  std::vector<RankFate> fates;
  std::vector<bool> stopped;
  std::string undecidable;  // set when the walk met something it cannot decide

  explicit Walk(const Scenario& s)
      : scenario(s),
        fates(static_cast<std::size_t>(s.ranks)),
        stopped(static_cast<std::size_t>(s.ranks), false) {}

  const Fault* death(int rank) const {
    for (const Fault& fault : scenario.faults) {
      if ((fault.site == FaultSite::kDeath || fault.site == FaultSite::kHang) &&
          targets(fault, rank)) {
        return &fault;
      }
    }
    return nullptr;
  }

  bool has(FaultSite site, int rank, std::optional<Point> at = std::nullopt) const {
    return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& f) {
      return f.site == site && targets(f, rank) && (!at || f.at == *at);
    });
  }

  RankFate& fate(int rank) { return fates[static_cast<std::size_t>(rank)]; }
  bool isStopped(int rank) const { return stopped[static_cast<std::size_t>(rank)]; }

  void stopDead(int rank, const Fault& fault) {
    fate(rank).end = fault.site == FaultSite::kDeath ? RankFate::End::kDead : RankFate::End::kHung;
    fate(rank).stoppedAt = fault.at;
    stopped[static_cast<std::size_t>(rank)] = true;
  }

  void stopRaised(int rank, MessageExpectation message) {
    fate(rank).end = RankFate::End::kRaised;
    fate(rank).message = std::move(message);
    stopped[static_cast<std::size_t>(rank)] = true;
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
    std::vector<Lateness> arrivals;
    std::vector<int> arrived;
    bool everyone = true;
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      if (isStopped(rank)) {
        everyone = false;
        continue;
      }
      if (point && has(FaultSite::kGroupFail, rank, *point)) {
        stopRaised(rank, {MessageKind::kGroup, {}});
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
        fate(rank).waited = true;
      }
    }
    return completes;
  }

  void run() {
    const int n = scenario.ranks;
    applyDeaths(Point::kBeforeConstruct);
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
    const bool agreeFirst = scenario.runner.agreeFirst && n > 1;
    if (agreeFirst) {
      if (!runnerAgreement()) return;
      if (anyNotReady) {
        for (int rank = 0; rank < n; ++rank) {
          stopRaised(rank, notReady[static_cast<std::size_t>(rank)]
                               ? notReadyThis
                               : MessageExpectation{MessageKind::kText,
                                                    std::string(kNotReadyAnotherRankMessage)});
        }
        return;
      }
    } else {
      for (int rank = 0; rank < n; ++rank) {
        if (notReady[static_cast<std::size_t>(rank)]) stopRaised(rank, notReadyThis);
      }
    }
    if (n == 1) {
      // No group: nothing to exchange or agree on. An alloc failure is raised as it is; the
      // table is still built, and its failure is raised as it is too (no HandshakeError: there
      // is nobody to agree with). Then only close().
      if (!isStopped(0) && (has(FaultSite::kAlloc, 0) || has(FaultSite::kAllocTable, 0))) {
        stopRaised(0, {MessageKind::kText, "alloc failed on rank 0"});
      } else if (!isStopped(0) && has(FaultSite::kCopyTable, 0)) {
        stopRaised(0, {MessageKind::kText, "copy failed on rank 0"});
      }
      applyDeaths(Point::kClose);
      return;
    }
    // An alloc or get-handle failure does not stop the rank: it joins the exchange with a failure
    // record, and the completed exchange makes every rank raise together.
    std::vector<bool> exchangeFailed(static_cast<std::size_t>(n), false);
    for (int rank = 0; rank < n; ++rank) {
      exchangeFailed[static_cast<std::size_t>(rank)] =
          !isStopped(rank) && (has(FaultSite::kAlloc, rank) || has(FaultSite::kGetHandle, rank));
    }
    applyDeaths(Point::kExchange);
    // After the runner's agreement the ranks start the constructor together: only the lateness
    // at the exchange itself is left.
    if (!groupCall(toString(Point::kExchange), Point::kExchange,
                   {Point::kExchange, Point::kBeforeConstruct}, agreeFirst)) {
      return;
    }
    if (std::find(exchangeFailed.begin(), exchangeFailed.end(), true) != exchangeFailed.end()) {
      for (int rank = 0; rank < n; ++rank) {
        stopRaised(rank, {exchangeFailed[static_cast<std::size_t>(rank)] ? MessageKind::kThis
                                                                         : MessageKind::kAnother,
                          {}});
      }
      return;
    }

    applyDeaths(Point::kOpen);
    std::vector<bool> mappingFailed(static_cast<std::size_t>(n), false);
    for (int rank = 0; rank < n; ++rank) {
      if (isStopped(rank)) continue;
      for (const Fault& fault : scenario.faults) {
        // A table fault fires only when every open succeeded; either way the rank says "this".
        if (agreedSite(fault.site) && targets(fault, rank)) {
          mappingFailed[static_cast<std::size_t>(rank)] = true;
        }
      }
    }
    applyDeaths(Point::kAgree);
    if (!groupCall(Point::kAgree, {Point::kOpen, Point::kAgree})) return;

    const bool anyFailed =
        std::find(mappingFailed.begin(), mappingFailed.end(), true) != mappingFailed.end();
    if (anyFailed) {
      for (int rank = 0; rank < n; ++rank) {
        stopRaised(rank, {mappingFailed[static_cast<std::size_t>(rank)] ? MessageKind::kThis
                                                                        : MessageKind::kAnother,
                          {}});
      }
      return;
    }
    applyDeaths(Point::kClose);
  }
};

}  // namespace

namespace {

std::optional<std::string> undecidable(const Scenario& scenario, bool chanceMappingFaults) {
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& fault = scenario.faults[i];
    if (chanceMappingFaults && agreedSite(fault.site)) continue;
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
        expect.reported.push_back(rank);
        break;
      case RankFate::End::kRaised:
        anyRaised = true;
        expect.messages[rank] = fate.message;
        break;
      case RankFate::End::kOk:
        break;
    }
  }
  if (!expect.reported.empty()) {
    expect.outcome = Outcome::kReported;
  } else if (anyRaised) {
    expect.outcome = Outcome::kRaise;
  } else {
    expect.outcome = Outcome::kSuccess;
  }
  return expect;
}

}  // namespace

std::optional<std::string> undecidableReason(const Scenario& scenario) {
  return undecidable(scenario, false);
}

std::vector<RankFate> deriveFates(const Scenario& scenario) {
  Walk walk(scenario);
  walk.run();
  return walk.fates;
}

Expectation deriveExpectation(const Scenario& scenario) { return derive(scenario, false); }

Expectation deriveExpectationIfChanceFaultsFire(const Scenario& scenario) {
  return derive(scenario, true);
}

}  // namespace peerconf::harness::explore
