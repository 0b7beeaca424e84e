// Scenario rules: faults checked against each other and against the expected outcome, and the
// defaults of `expect`. Every rule is listed, with its reason, in scenarios/README.md.
#include "scenario/rules.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "model/buffers.h"
#include "model/rank_calls.h"
#include "scenario/values.h"

namespace peerconf::harness::scenario {

using model::Effect;
using model::Expectation;
using model::Fault;
using model::FaultSite;
using model::kBoundSlack;
using model::kDefaultMaxRun;
using model::kGroupCallsPerRun;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::Mark;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::plannedBound;
using model::Point;
using model::positionName;
using model::Scenario;
using model::ScenarioError;
using model::timelinePosition;
using model::toString;

namespace {

using model::Effect;
using model::positionName;

[[noreturn]] void fail(const Scenario& scenario, Mark mark, const std::string& message) {
  throw ScenarioError(scenario.file, mark, message);
}

std::string inSingleQuotes(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string line(const Fault& fault) { return "line " + std::to_string(fault.mark.line); }

bool isDeath(const Fault& fault) { return model::stopsRank(fault.site); }

// The site a fault was written with: a collective-order fault is judged as the group-fail it acts
// as (model::actingFault) but named as written.
std::string writtenSite(const Fault& fault) {
  return fault.reordered ? std::string(faults::siteName(FaultSite::kCollectiveOrder))
                         : toString(fault.site);
}

bool certain(const Fault& fault) { return isDeath(fault) || fault.probability >= 1.0; }

// Faults that fail the handshake when they fire.
bool failingSite(FaultSite site) { return model::failsHandshake(site); }

// Faults whose failing rank says "this": the mapping of a peer fails on that rank.
bool mappingSite(FaultSite site) { return model::traitsOf(site).effect == Effect::kMapping; }

// The device address table, built after every open and before the agreement: its failure is
// agreed on like a mapping failure (with more than one rank; one rank raises the error itself).
bool tableSite(FaultSite site) { return model::traitsOf(site).effect == Effect::kTable; }

// Faults before the exchange: with more than one rank the failing rank sends a failure record in
// the exchange and says "this", every other rank reads it there and says "another".
bool exchangeSite(FaultSite site) { return model::traitsOf(site).effect == Effect::kExchange; }

// entry-corrupt, exchange-long: the rank cannot decode a peer's entry (or the exchange's length),
// keeps that failure and says "this" at the agreement (unless an intact failure record ends the
// handshake at the exchange first).
bool entrySite(FaultSite site) { return model::traitsOf(site).effect == Effect::kEntry; }

// Whether the rank runner agrees (tpAgree) before the constructor: with more than one rank and
// `runner: {agree_first: true}` (the default). Its agreement is the first group call, at the end
// of 'before-construct' (after that point's delays, deaths and hangs, and after not-ready).
bool runnerAgrees(const Scenario& scenario) {
  return scenario.runner.agreeFirst && scenario.ranks > 1;
}

// A not-ready fault on `rank` that always fires.
bool certainlyNotReady(const Scenario& scenario, int rank) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& fault) {
    return fault.site == FaultSite::kNotReady && fault.probability >= 1.0 && fault.appliesTo(rank);
  });
}

bool anyNotReady(const Scenario& scenario) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(),
                     [](const Fault& fault) { return fault.site == FaultSite::kNotReady; });
}

bool notReadyOn(const Scenario& scenario, int rank) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& fault) {
    return fault.site == FaultSite::kNotReady && fault.appliesTo(rank);
  });
}

// A delay that makes the peers give up: it is not shorter than the deadline and lands before a
// group call.
bool pastDeadline(const Scenario& scenario, const Fault& fault) {
  return fault.site == FaultSite::kDelay && scenario.ranks > 1 &&
         fault.delay >= scenario.deadline && timelinePosition(fault.at) < model::kTimelineClose;
}

bool canFail(const Scenario& scenario, const Fault& fault) {
  return failingSite(fault.site) || pastDeadline(scenario, fault);
}

// The next group call a rank reaches from `position`: where it waits for a peer that stopped.
int nextGroupCall(const Scenario& scenario, int position) {
  if (position <= model::kTimelineBeforeConstruct && runnerAgrees(scenario))
    return model::kTimelineBeforeConstruct;
  if (position <= model::kTimelineExchange) return model::kTimelineExchange;
  if (position <= model::kTimelineAgree) return model::kTimelineAgree;
  return model::kTimelineNever;
}

}  // namespace

// How far `rank` gets when `fault` fires (model::kTimelineNever when it does not stop the rank).
int stopFor(const Scenario& scenario, const Fault& fault, int rank) {
  if (!certain(fault)) return model::kTimelineNever;
  switch (model::traitsOf(fault.site).effect) {
    case Effect::kExchange:
      // With a group every rank reaches the exchange, where every rank raises; a single rank
      // raises at its allocation.
      if (scenario.ranks == 1) return timelinePosition(fault);
      return model::kTimelineExchange;
    case Effect::kGroup:
    case Effect::kStop: {
      const int own = timelinePosition(fault);
      return fault.appliesTo(rank) ? own : nextGroupCall(scenario, own);
    }
    case Effect::kNotReady:
      // The rank that is not ready never constructs. With the runner's agreement nobody does;
      // without it the others go on to the exchange and wait there for it.
      if (fault.appliesTo(rank) || runnerAgrees(scenario)) return model::kTimelineBeforeConstruct;
      return nextGroupCall(scenario, model::kTimelineAlloc);
    case Effect::kMapping:
    case Effect::kTable:
    case Effect::kEntry:
      return model::kTimelineAgree;  // every rank reaches the agreement, which fails (one rank:
                                     // raises there)
    case Effect::kForeign:
      return stopFor(scenario, model::actingFault(fault), rank);
    case Effect::kLate:
      return pastDeadline(scenario, fault) ? nextGroupCall(scenario, timelinePosition(fault))
                                           : model::kTimelineNever;
    case Effect::kRelease:
      return model::kTimelineNever;
    case Effect::kMismatch:
    case Effect::kCount:
      // A mismatch: every rank raises at the end of the exchange of the buffer where the ranks
      // differ. A count: the ranks that make the construction a peer skips wait in its exchange
      // (rule 8c keeps every other fault out of such a scenario).
      return model::kTimelineExchange;
  }
  return model::kTimelineNever;
}

namespace {

std::string verb(const Fault& fault) {
  if (fault.site == FaultSite::kExit) return "exits";
  return fault.site == FaultSite::kDeath ? "dies" : "hangs";
}

// Where a death, hang or exit happens: its point, or the open of its peer.
std::string stopPlace(const Fault& stop) {
  if (stop.peer) return "its open of peer " + std::to_string(*stop.peer);
  if (stop.at == Point::kAlloc) return "'alloc' (inside its allocation)";
  if (stop.at == Point::kGetHandle) return "'get-handle' (inside its handle export)";
  if (stop.at == Point::kDataplane) return "data-plane step " + std::to_string(stop.step);
  return inSingleQuotes(toString(stop.at));
}

// Inside the open phase of a rank that stops inside its open of peer P, the faults that still
// fire: the open point's delays (before the first open), and the mapping faults of the opens up to
// and including P's (an open that fails, then exits). Which of those stop the opens before P is
// rule 11's (earlierOpenFailure).
bool firesBeforeStopInOpen(const Fault& stop, const Fault& fault) {
  // Inside the allocation or the handle export: that call's own fault, in that very call.
  if (stop.at == Point::kAlloc) return fault.site == FaultSite::kAlloc;
  if (stop.at == Point::kGetHandle) return fault.site == FaultSite::kGetHandle;
  if (!stop.peer || stop.at != Point::kOpen) return false;
  if (fault.site == FaultSite::kDelay) return fault.at == Point::kOpen;
  return mappingSite(fault.site) && (!fault.peer || *fault.peer <= *stop.peer);
}

// A mapping fault of `rank` (certain or not) that fails an open before the open of the stop's
// peer: the core stops opening at its first failure, so the rank never reaches that open. The
// peer whose open fails goes to `failedPeer`. The rule model::rankCalls keeps for every fault of
// the opens (the warnings below, the oracle).
const Fault* earlierOpenFailure(const Scenario& scenario, const Fault& stop, int rank,
                                int* failedPeer = nullptr) {
  if (!stop.peer || stop.at != Point::kOpen) return nullptr;
  model::CallsReached reached;
  reached.receives = true;
  reached.opens = true;
  reached.stopsInOpenOf = stop.peer;
  reached.chanceFailuresFire = true;
  const model::RankCalls calls = model::rankCalls(scenario, rank, reached);
  if (!calls.failedOpen || !calls.failedBy || *calls.failedOpen >= *stop.peer) return nullptr;
  if (failedPeer != nullptr) *failedPeer = *calls.failedOpen;
  return &scenario.faults[*calls.failedBy];
}

std::string rankList(const std::vector<int>& ranks) {
  std::string out = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
  }
  return out + "]";
}

bool hasExchangeFault(const Scenario& scenario, int rank) {
  return scenario.ranks > 1 &&
         std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& fault) {
           return exchangeSite(fault.site) && fault.appliesTo(rank);
         });
}

bool anyCertainExchangeFault(const Scenario& scenario) {
  return scenario.ranks > 1 &&
         std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& fault) {
           return exchangeSite(fault.site) && certain(fault);
         });
}

// Whether `rank` says "this": its alloc or get-handle fails (then nobody opens anything), or, when
// no certain alloc/get-handle fault ends the handshake at the exchange, the mapping of a peer fails
// on it.
bool saysThis(const Scenario& scenario, int rank) {
  // A rank that is not ready never constructs; with the runner's agreement nobody does.
  if (certainlyNotReady(scenario, rank)) return false;
  if (runnerAgrees(scenario)) {
    for (int other = 0; other < scenario.ranks; ++other) {
      if (certainlyNotReady(scenario, other)) return false;
    }
  }
  if (hasExchangeFault(scenario, rank)) return true;
  if (anyCertainExchangeFault(scenario)) return false;
  return std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& fault) {
    const bool agreed = mappingSite(fault.site) || entrySite(fault.site) ||
                        (tableSite(fault.site) && scenario.ranks > 1);
    return agreed && fault.appliesTo(rank);
  });
}

// Why the messages of a raising scenario cannot default: the first fault that makes ranks raise
// something other than this/another.
const Fault* noDefaultReason(const Scenario& scenario) {
  for (const Fault& fault : scenario.faults) {
    if ((exchangeSite(fault.site) && scenario.ranks == 1) || fault.site == FaultSite::kGroupFail ||
        pastDeadline(scenario, fault) || (tableSite(fault.site) && scenario.ranks == 1) ||
        (fault.site == FaultSite::kNotReady && scenario.ranks > 1 && !runnerAgrees(scenario))) {
      return &fault;
    }
  }
  return nullptr;
}

std::string whyExplicit(const Fault& fault) {
  switch (fault.site) {
    case FaultSite::kAlloc:
    case FaultSite::kGetHandle:
      return "a single rank has no exchange: it raises its backend error as it is (e.g. {text: \"" +
             toString(fault.site) + " failed\"})";
    case FaultSite::kGroupFail:
      if (fault.foreign) {
        return std::string("the rank whose ") +
               (fault.at == Point::kExchange ? "exchange" : "agreement") +
               " throws raises the foreign exception itself (e.g. {text: \"foreign exception "
               "from " +
               (fault.at == Point::kExchange ? "exchange" : "agree") +
               "\"}) and the others are left waiting (group)";
      }
      if (fault.reordered) {
        return std::string("the rank's ") +
               (fault.at == Point::kExchange ? "agreement meets the others' exchange"
                                             : "exchange meets the others' agreement") +
               ": the group ends that call on every rank of it with a group error (group)";
      }
      return "the failing rank raises a group error and the others are left waiting (group)";
    case FaultSite::kNotReady:
      return "and 'runner: {agree_first: false}' the rank that is not ready leaves alone and the "
             "others wait in the exchange until the deadline (group)";
    case FaultSite::kAllocTable:
    case FaultSite::kCopyTable:
      return std::string("a single rank has no agreement: it raises its backend error itself ") +
             "(e.g. {text: \"" + (fault.site == FaultSite::kAllocTable ? "alloc" : "copy") +
             " failed on rank 0\"})";
    default:
      return "the peers time out waiting for the late rank (group)";
  }
}

void checkDeaths(const Scenario& scenario) {
  // A rank dies or hangs once.
  std::map<int, const Fault*> deathOf;
  for (const Fault& fault : scenario.faults) {
    if (!isDeath(fault)) continue;
    for (int rank : fault.ranks) {
      if (auto it = deathOf.find(rank); it != deathOf.end()) {
        fail(scenario, fault.mark,
             "rank " + std::to_string(rank) + " already " + verb(*it->second) + " at " +
                 stopPlace(*it->second) + " (" + line(*it->second) +
                 "); a rank can die or hang only once (an exit counts as a death)");
      }
      deathOf[rank] = &fault;
    }
  }
  // Nothing fires on a rank after it died or hung, nor at the point where it did.
  for (const Fault& fault : scenario.faults) {
    if (isDeath(fault)) continue;
    for (int rank : fault.ranks) {
      auto it = deathOf.find(rank);
      if (it == deathOf.end()) continue;
      if (timelinePosition(fault) >= timelinePosition(it->second->at) &&
          !firesBeforeStopInOpen(*it->second, fault)) {
        fail(scenario, fault.mark,
             "this " + writtenSite(fault) + " fault on rank " + std::to_string(rank) +
                 " never fires: rank " + std::to_string(rank) + " " + verb(*it->second) + " at " +
                 stopPlace(*it->second) + " (" + line(*it->second) + ") before it");
      }
    }
  }
  // A rank must reach the point where it is meant to die: nothing certain may stop it first.
  for (const Fault& death : scenario.faults) {
    if (!isDeath(death)) continue;
    const int point = timelinePosition(death.at);
    for (int rank : death.ranks) {
      int failed = 0;
      // A rank whose allocation fails exports no handle (it sends a failure record instead).
      if (death.at == Point::kGetHandle) {
        for (const Fault& alloc : scenario.faults) {
          // A chance alloc fault too: whether the rank stops or raises would follow the draw.
          if (alloc.site != FaultSite::kAlloc || !alloc.appliesTo(rank)) continue;
          fail(scenario, death.mark,
               "rank " + std::to_string(rank) + " never reaches " + stopPlace(death) +
                   ", where it " + verb(death) + ": its own alloc fault (" + line(alloc) +
                   ") fails its allocation first" + (certain(alloc) ? "" : " where it fires") +
                   ", and a rank whose allocation failed exports no handle");
        }
      }
      if (const Fault* open = earlierOpenFailure(scenario, death, rank, &failed)) {
        fail(scenario, death.mark,
             "rank " + std::to_string(rank) + " never reaches " + stopPlace(death) + ", where it " +
                 verb(death) + ": its own " + toString(open->site) + " fault (" + line(*open) +
                 ") fails its open of peer " + std::to_string(failed) +
                 " first, and the core stops opening at its first failure");
      }
      for (const Fault& other : scenario.faults) {
        if (&other == &death) continue;
        const int stop = stopFor(scenario, other, rank);
        if (stop >= point) continue;
        const std::string who = other.appliesTo(rank) ? "its own " + writtenSite(other) + " fault"
                                                      : "the " + writtenSite(other) + " fault";
        fail(scenario, death.mark,
             "rank " + std::to_string(rank) + " never reaches " +
                 inSingleQuotes(toString(death.at)) + ", where it " + verb(death) + ": " + who +
                 " (" + line(other) + ") ends its handshake at " +
                 inSingleQuotes(positionName(stop)) + " first");
      }
    }
  }
}

std::vector<int> deathRanks(const Scenario& scenario) {
  std::set<int> ranks;
  for (const Fault& fault : scenario.faults) {
    if (isDeath(fault)) ranks.insert(fault.ranks.begin(), fault.ranks.end());
  }
  return {ranks.begin(), ranks.end()};
}

const Fault* firstDeath(const Scenario& scenario) {
  for (const Fault& fault : scenario.faults) {
    // One that names no rank acts in another construction (model::aimedConstruction).
    if (isDeath(fault) && !fault.ranks.empty()) return &fault;
  }
  return nullptr;
}

// A death or hang in the handshake (before the data plane and close()): it leaves every survivor
// waiting at a group call. One in the data plane leaves their handshake done.
bool deathBeforeClose(const Scenario& scenario) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(), [](const Fault& fault) {
    return isDeath(fault) && timelinePosition(fault.at) < model::kTimelineDataplane;
  });
}

// 'messages', 'reported' and 'within' only with the outcomes they describe.
void checkOutcomeKeys(const Scenario& scenario, const ExpectMarks& marks) {
  const Outcome outcome = scenario.expect.outcome;
  const std::string outcomeName = inSingleQuotes(toString(outcome));
  if (marks.messagesGiven && outcome == Outcome::kSuccess) {
    fail(scenario, marks.messages,
         "'messages' is only valid with outcome 'raise' or 'reported' (outcome is 'success')");
  }
  if (marks.reportedGiven && outcome != Outcome::kReported) {
    fail(scenario, marks.reported,
         "'reported' is only valid with outcome 'reported' (outcome is " + outcomeName + ")");
  }
  if (marks.withinGiven && outcome == Outcome::kSuccess) {
    fail(scenario, marks.within,
         "'within' is only valid with outcome 'raise' or 'reported'; a successful run is bounded "
         "by the deadline (outcome is " +
             outcomeName + ")");
  }
}

// 'reported' exactly when a rank dies or hangs.
void checkReportedMeansDeath(const Scenario& scenario, const ExpectMarks& marks) {
  const Outcome outcome = scenario.expect.outcome;
  const std::string outcomeName = inSingleQuotes(toString(outcome));
  const Fault* death = firstDeath(scenario);
  if (death != nullptr && outcome != Outcome::kReported) {
    fail(scenario, marks.outcome,
         "expect.outcome must be 'reported', not " + outcomeName + ": rank " +
             std::to_string(death->ranks.front()) + " " + verb(*death) + " at " +
             inSingleQuotes(toString(death->at)) + " (" + line(*death) + ")");
  }
  if (death == nullptr && outcome == Outcome::kReported) {
    fail(scenario, marks.outcome,
         "outcome 'reported' needs a death, hang or exit fault: nothing else makes a rank go "
         "missing");
  }
}

// 'success' with no fault that always fails the handshake.
void checkSuccessPossible(const Scenario& scenario) {
  for (const Fault& fault : scenario.faults) {
    if (failingSite(fault.site) && certain(fault)) {
      fail(scenario, fault.mark,
           "outcome 'success' is impossible: this " + toString(fault.site) +
               " fault always fires (probability 1, and 'count' only limits repeats); give it "
               "a probability below 1 or expect 'raise'");
    }
    if (pastDeadline(scenario, fault) && certain(fault)) {
      fail(scenario, fault.mark,
           "outcome 'success' is impossible: a delay of " + formatDuration(fault.delay) + " at " +
               inSingleQuotes(toString(fault.at)) + " is not shorter than the deadline (" +
               formatDuration(scenario.deadline) + "); the peers give up first");
    }
  }
}

// 'raise' with a fault that can fail the handshake (a negative control may raise without one).
void checkRaisePossible(const Scenario& scenario, const ExpectMarks& marks) {
  if (std::none_of(scenario.faults.begin(), scenario.faults.end(),
                   [&](const Fault& fault) { return canFail(scenario, fault); })) {
    fail(scenario, marks.outcome,
         "outcome 'raise' needs a fault that can fail the handshake (alloc, get-handle, open, "
         "handle-corrupt, handle-stale, entry-corrupt, exchange-long, alloc-table, copy-table, "
         "group-fail, "
         "not-ready, or a delay not shorter than the deadline)");
  }
}

// 'reported': the ranks that die or hang (checked against the list given, or filled in), and a
// 'within' the survivors can meet.
void settleReported(Scenario& scenario, const ExpectMarks& marks) {
  Expectation& expect = scenario.expect;
  const std::vector<int> dead = deathRanks(scenario);
  // No vacuous verdicts: with every rank dead or hung, no survivor is left for C1-C7 to judge and
  // only C8 (every rank reported, in time) checks anything, so the file must say that is what it
  // checks by listing the ranks.
  if (!marks.reportedGiven && !dead.empty() && static_cast<int>(dead.size()) == scenario.ranks) {
    fail(scenario, marks.outcome,
         "every rank dies or hangs, so only C8 has anything to check (each rank reported in "
         "time): say so by listing them, 'reported: " +
             rankList(dead) + "'");
  }
  if (marks.reportedGiven) {
    std::vector<int> given = expect.reported;
    std::sort(given.begin(), given.end());
    if (given != dead) {
      fail(scenario, marks.reported,
           "'reported' " + rankList(given) +
               " does not match the ranks that die or hang: " + rankList(dead));
    }
  }
  expect.reported = dead;

  const bool controlOfC8 = std::find(expect.violations.begin(), expect.violations.end(), "C8") !=
                           expect.violations.end();
  if (expect.within && deathBeforeClose(scenario) && *expect.within <= scenario.deadline &&
      !controlOfC8) {
    fail(scenario, marks.within,
         "'within' " + formatDuration(*expect.within) +
             " cannot be met: the survivors wait a full deadline (" +
             formatDuration(scenario.deadline) +
             ") before they give up; make it longer, or list C8 in 'violations' for a negative "
             "control");
  }
}

// 'within' with 'raise': a bound the ranks can meet. Where a rank legitimately waits (a late or
// stopped peer, a group-fail) the others wait a full deadline first.
void checkRaiseWithin(const Scenario& scenario, const ExpectMarks& marks) {
  const Expectation& expect = scenario.expect;
  if (!expect.within) return;
  const bool controlOfC8 = std::find(expect.violations.begin(), expect.violations.end(), "C8") !=
                           expect.violations.end();
  const auto wait = legitimateWait(scenario);
  if (wait && *expect.within <= scenario.deadline && !controlOfC8) {
    fail(scenario, marks.within,
         "'within' " + formatDuration(*expect.within) +
             " cannot be met: a rank waits a full deadline (" + formatDuration(scenario.deadline) +
             ") before it raises, " + *wait +
             "; make it longer, or list C8 in 'violations' for a negative control");
  }
}

// `outcome: as-drawn`: the draw gives every run's outcome, messages and reported ranks, so the file
// gives none, and it has a fault left to chance that can fail the handshake (else nothing is
// drawn: the file writes its outcome).
void checkAsDrawn(const Scenario& scenario, const ExpectMarks& marks) {
  const std::string why =
      " is not given with outcome 'as-drawn': each run is held to what the faults that fired in "
      "it imply (`peerconf explain` lists every draw)";
  if (marks.messagesGiven) fail(scenario, marks.messages, "'messages'" + why);
  if (marks.reportedGiven) fail(scenario, marks.reported, "'reported'" + why);
  if (scenario.dataPlane) {
    fail(scenario, marks.outcome,
         "outcome 'as-drawn' with a 'dataplane' is not supported: a data plane runs after a "
         "handshake that succeeds on every rank; write the outcome, and leave to chance only "
         "faults that do not decide it");
  }
  if (std::none_of(scenario.faults.begin(), scenario.faults.end(),
                   [](const Fault& fault) { return failingSite(fault.site) && !certain(fault); })) {
    fail(scenario, marks.outcome,
         "outcome 'as-drawn' needs a fault left to chance (probability below 1) that can fail "
         "the handshake (alloc, get-handle, open, handle-corrupt, handle-stale, alloc-table, "
         "copy-table, group-fail, not-ready): with none, nothing is drawn; write the outcome");
  }
}

void checkOutcome(Scenario& scenario, const ExpectMarks& marks) {
  if (scenario.expect.asDrawn) {
    checkAsDrawn(scenario, marks);
    return;
  }
  const Outcome outcome = scenario.expect.outcome;
  checkOutcomeKeys(scenario, marks);
  checkReportedMeansDeath(scenario, marks);
  if (outcome == Outcome::kSuccess) checkSuccessPossible(scenario);
  if (outcome == Outcome::kRaise && scenario.expect.violations.empty()) {
    checkRaisePossible(scenario, marks);
  }
  if (outcome == Outcome::kRaise) checkRaiseWithin(scenario, marks);
  if (outcome == Outcome::kReported) settleReported(scenario, marks);
}

// Where an error about the messages points: 'messages' when given, else the outcome.
Mark messagesMark(const ExpectMarks& marks) {
  return marks.messagesGiven ? marks.messages : marks.outcome;
}

// Where an error about `rank`'s message points: its key under 'messages' when it has one.
Mark messageMark(const ExpectMarks& marks, int rank) {
  auto it = marks.messageRanks.find(rank);
  return it != marks.messageRanks.end() ? it->second : messagesMark(marks);
}

bool isReported(const Expectation& expect, int rank) {
  return std::find(expect.reported.begin(), expect.reported.end(), rank) != expect.reported.end();
}

// A rank that dies or hangs is reported: it raises nothing to expect.
void checkReportedRaiseNothing(const Scenario& scenario, const ExpectMarks& marks) {
  for (const auto& [rank, message] : scenario.expect.messages) {
    if (isReported(scenario.expect, rank)) {
      fail(scenario, messageMark(marks, rank),
           "rank " + std::to_string(rank) + " dies or hangs: it is reported, it raises no message");
    }
  }
}

// A rank whose handshake returned and whose data plane must report a rank that an `at: dataplane`
// fault stops (it is neither stopped by one nor by `dataplane.stop`).
bool dataPlaneSurvivor(const Scenario& scenario, int rank) {
  if (!scenario.dataPlane || !model::stopsOnlyInDataPlane(scenario)) return false;
  if (isReported(scenario.expect, rank)) return false;
  return !(scenario.dataPlane->stop && scenario.dataPlane->stop->rank == rank);
}

// Whether `rank` makes the construction some rank never makes (buffer-count).
bool countWaits(const model::CountMismatch& count, int rank) {
  return std::find(count.waiting.begin(), count.waiting.end(), rank) != count.waiting.end();
}

// Each rank without a message of its own gets 'others', or the one its faults make it raise;
// where the faults leave no default (noDefaultReason), the file must list the rank, unless the
// scenario is a control.
void defaultMessages(Scenario& scenario, const ExpectMarks& marks) {
  Expectation& expect = scenario.expect;
  const bool control = !expect.violations.empty();
  const bool survivorsWait = deathBeforeClose(scenario);
  const Fault* noDefault = noDefaultReason(scenario);

  // A rank that is not ready raises the runner's own error without a group call when the runner
  // does not agree first (or there is no group); with the agreement, every rank raises the
  // runner's error from it.
  const MessageExpectation notReadyThis{MessageKind::kText, std::string(kNotReadyThisRankMessage)};
  const MessageExpectation notReadyAnother{MessageKind::kText,
                                           std::string(kNotReadyAnotherRankMessage)};
  auto leavesAlone = [&](int rank) {
    return !runnerAgrees(scenario) && certainlyNotReady(scenario, rank);
  };

  const auto mismatch = model::bufferMismatch(scenario);
  const auto count = model::countMismatch(scenario);
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    if (isReported(expect, rank) || expect.messages.count(rank) != 0) continue;
    if (expect.others) {
      expect.messages[rank] = *expect.others;
    } else if (count && expect.outcome == Outcome::kRaise) {
      // The ranks that make the construction a peer never does wait for it (a group error); the
      // others return every buffer they constructed.
      expect.messages[rank] = {countWaits(*count, rank) ? MessageKind::kGroup : MessageKind::kOk,
                               {}};
    } else if (mismatch && expect.outcome == Outcome::kRaise) {
      // Every rank raises the same BufferMismatchError, naming the ranks, sizes and labels.
      expect.messages[rank] = {MessageKind::kText, mismatch->message};
    } else if (expect.outcome == Outcome::kReported) {
      // With every death at close() the survivors have returned: no message to expect. A stop
      // in the data plane: they return too, and their data plane reports the stopped rank (not
      // a rank that 'dataplane.stop' stops as planned: its data plane ends there).
      if (dataPlaneSurvivor(scenario, rank)) {
        expect.messages[rank] = model::dataPlaneReport(scenario);
      } else if (survivorsWait) {
        expect.messages[rank] =
            leavesAlone(rank) ? notReadyThis : MessageExpectation{MessageKind::kGroup, {}};
      }
    } else if (notReadyOn(scenario, rank) && (leavesAlone(rank) || runnerAgrees(scenario))) {
      expect.messages[rank] = notReadyThis;
    } else if (runnerAgrees(scenario) && anyNotReady(scenario) && noDefault == nullptr) {
      expect.messages[rank] = notReadyAnother;
    } else if (noDefault != nullptr && !control) {
      fail(scenario, messagesMark(marks),
           "rank " + std::to_string(rank) + " needs an expected message: with the " +
               (noDefault->foreign     ? std::string("foreign-exception")
                : noDefault->reordered ? std::string("collective-order")
                                       : toString(noDefault->site)) +
               " fault (" + line(*noDefault) + ") " + whyExplicit(*noDefault) +
               "; list the rank under 'messages' or give 'others'");
    } else {
      expect.messages[rank] = {
          saysThis(scenario, rank) ? MessageKind::kThis : MessageKind::kAnother, {}};
    }
  }
}

// `ok` (a rank that raises nothing under `outcome: raise`) is a buffer-count fault's returning
// rank's message, and only its: each rank of such a scenario says what its count makes it.
void checkCountMessage(const Scenario& scenario, const ExpectMarks& marks,
                       const std::optional<model::CountMismatch>& count, int rank,
                       const MessageExpectation& message) {
  const std::string who = "rank " + std::to_string(rank);
  if (!count) {
    if (message.kind != MessageKind::kOk) return;
    fail(scenario, messageMark(marks, rank),
         who +
             " cannot say 'ok': 'ok' is a rank that raises nothing while the others raise, "
             "which only a buffer-count fault makes (a rank that registers fewer buffers than "
             "its peers, or whose peers register more)");
  }
  const std::string at = "construction " + std::to_string(count->at);
  if (!countWaits(*count, rank) && message.kind != MessageKind::kOk) {
    fail(scenario, messageMark(marks, rank),
         who + " cannot say " + inSingleQuotes(toString(message)) + ": it registers " +
             std::to_string(count->at) + " buffer(s) and never makes " + at +
             ", where the others wait; it returns every buffer it constructed (expect 'ok')");
  }
  if (countWaits(*count, rank) && message.kind != MessageKind::kGroup &&
      message.kind != MessageKind::kText) {
    fail(scenario, messageMark(marks, rank),
         who + " cannot say " + inSingleQuotes(toString(message)) + ": it makes " + at +
             ", which rank(s) " + rankList(count->returning) +
             " never make: it waits in its exchange until the deadline (expect 'group')");
  }
}

// Every message, given or defaulted, is one the rank can raise (a control's may be anything but a
// group error on a single rank).
void checkMessages(const Scenario& scenario, const ExpectMarks& marks) {
  const bool control = !scenario.expect.violations.empty();
  const bool survivorsWait = deathBeforeClose(scenario);
  const auto mismatch = model::bufferMismatch(scenario);
  const auto count = model::countMismatch(scenario);
  for (const auto& [rank, message] : scenario.expect.messages) {
    if (scenario.ranks == 1 && message.kind == MessageKind::kGroup) {
      fail(scenario, messageMark(marks, rank),
           "rank 0 cannot see a group error: a single rank has no group");
    }
    if (control) continue;
    checkCountMessage(scenario, marks, count, rank, message);
    if (mismatch && message.kind != MessageKind::kText) {
      fail(scenario, messageMark(marks, rank),
           "rank " + std::to_string(rank) + " cannot say " +
               inSingleQuotes(toString(message.kind)) +
               ": every rank raises BufferMismatchError at its construction " +
               std::to_string(mismatch->at) + ", matched as {text: \"...\"} (default {text: \"" +
               mismatch->message + "\"})");
    }
    if (dataPlaneSurvivor(scenario, rank) && message.kind != MessageKind::kText) {
      fail(scenario, messageMark(marks, rank),
           "rank " + std::to_string(rank) + " cannot say " +
               inSingleQuotes(toString(message.kind)) +
               ": its handshake succeeded and a rank stops in the data plane; what it reports is "
               "its data plane's timeout, matched as {text: \"...\"} (default " +
               toString(model::dataPlaneReport(scenario)) + ")");
    }
    if (message.kind == MessageKind::kThis && !saysThis(scenario, rank)) {
      fail(scenario, messageMark(marks, rank),
           "rank " + std::to_string(rank) +
               (anyCertainExchangeFault(scenario)
                    ? " is expected to say 'this', but an alloc or get-handle fault on another "
                      "rank ends the handshake at the exchange, before this rank opens anything "
                      "(it says 'another')"
                    : " is expected to say 'this', but no alloc, get-handle, open, handle-corrupt, "
                      "handle-stale, entry-corrupt, exchange-long, alloc-table or copy-table fault "
                      "targets it "
                      "(only the rank "
                      "that failed says 'this'; for the table sites only with more than one "
                      "rank; a rank that is not ready raises the runner's error, {text: \"" +
                          std::string(kNotReadyThisRankMessage) + "\"})"));
    }
    if (survivorsWait &&
        (message.kind == MessageKind::kThis || message.kind == MessageKind::kAnother)) {
      fail(scenario, messageMark(marks, rank),
           "rank " + std::to_string(rank) + " cannot say " +
               inSingleQuotes(message.kind == MessageKind::kThis ? "this" : "another") +
               ": a rank dies or hangs before close(), so no survivor completes the agreement "
               "(expect 'group')");
    }
  }
}

void fillMessages(Scenario& scenario, const ExpectMarks& marks) {
  if (scenario.expect.outcome == Outcome::kSuccess || scenario.expect.asDrawn) return;
  checkReportedRaiseNothing(scenario, marks);
  defaultMessages(scenario, marks);
  checkMessages(scenario, marks);
}

// The run's bound against its ceiling (`max_run`, default kDefaultMaxRun): a planned delay of an
// hour validates only where the file says it means it.
void checkCeiling(const Scenario& scenario, const ExpectMarks& marks) {
  const std::chrono::milliseconds bound = plannedBound(scenario);
  const std::chrono::milliseconds ceiling = scenario.maxRun.value_or(kDefaultMaxRun);
  if (bound <= ceiling) return;
  std::chrono::milliseconds delays{0};
  const Fault* longest = nullptr;
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kDelay) continue;
    delays += fault.delay;
    if (longest == nullptr || fault.delay > longest->delay) longest = &fault;
  }
  std::string how;
  Mark where = scenario.mark;
  if (scenario.expect.within) {
    how = "'within' " + scenario::formatDuration(*scenario.expect.within);
    where = marks.within;
  } else {
    how = std::to_string(kGroupCallsPerRun) + " group calls x deadline " +
          scenario::formatDuration(scenario.deadline) + " + delays " +
          scenario::formatDuration(delays) + " + slack " + scenario::formatDuration(kBoundSlack);
    if (longest != nullptr) {
      where = longest->mark;
    } else if (marks.deadline.line > 0) {
      where = marks.deadline;
    }
  }
  const std::string need = scenario::formatDuration(bound);
  if (scenario.maxRun) {
    fail(scenario, marks.maxRun,
         "the run's bound is " + need + " (" + how + "), above 'max_run' " +
             scenario::formatDuration(*scenario.maxRun) + "; raise 'max_run' to at least " + need +
             " or plan a shorter run");
  }
  fail(scenario, where,
       "the run's bound is " + need + " (" + how + "), above the ceiling of " +
           scenario::formatDuration(kDefaultMaxRun) +
           " on any run; a scenario meant to run this long says so with 'max_run: " + need +
           "' (top level)");
}

std::string faultName(const Scenario& scenario, const Fault& fault) {
  const auto index = static_cast<std::size_t>(&fault - scenario.faults.data());
  return "fault #" + std::to_string(index) + " (" + toString(fault.site) + model::aimText(fault) +
         ", " + line(fault) + ")";
}

// A fault that ends the handshake at the exchange once it completed: an alloc or get-handle
// failure (its failure record travels in the exchange; every rank receives every entry).
bool exchangeEnd(const Fault& fault) {
  return model::traitsOf(model::actingFault(fault).site).effect == Effect::kExchange;
}

// How far `rank` certainly gets, as model::rankCalls reads it: it opens its peers when no certain
// fault stops it before the agreement (but a stop inside one of its opens), and releases what it
// mapped when it neither dies nor hangs nor exits.
model::CallsReached certainlyReached(const Scenario& scenario, int rank) {
  model::CallsReached reached;
  int stop = model::kTimelineNever;
  int received = model::kTimelineNever;  // the stops that leave the exchange unfinished
  bool stops = false;
  for (const Fault& other : scenario.faults) {
    if (!exchangeEnd(other)) received = std::min(received, stopFor(scenario, other, rank));
    if (exchangeSite(model::actingFault(other).site) && certain(other) && scenario.ranks > 1) {
      reached.failureRecords.insert(reached.failureRecords.end(), other.ranks.begin(),
                                    other.ranks.end());
    }
    if (isDeath(other) && other.appliesTo(rank)) {
      stops = true;
      if (other.at == Point::kOpen && other.peer) {
        reached.stopsInOpenOf = other.peer;
        continue;
      }
    }
    stop = std::min(stop, stopFor(scenario, other, rank));
  }
  reached.receives = scenario.ranks > 1 && received > model::kTimelineExchange;
  reached.opens = reached.receives && stop >= model::kTimelineAgree;
  reached.releases = !stops;
  return reached;
}

// The fault `by` that fails the rank's first failed open (or takes a call), worded: "its own open
// fault (line 7)".
std::string failedOpenCause(const Fault& by) {
  return "its own " + toString(by.site) + " fault (" + line(by) + ")";
}

// Why the rank's calls never draw `fault` (model/rank_calls.h: one fault a call, no open after the
// first that fails, no close of a peer never mapped), where that is certain; else empty.
std::string silentInCalls(const Scenario& scenario, const Fault& fault, int rank) {
  const model::RankCalls calls = model::rankCalls(scenario, rank, certainlyReached(scenario, rank));
  const auto index = static_cast<std::size_t>(&fault - scenario.faults.data());
  const model::Silence* s = calls.silence(index);
  if (s == nullptr || s->maybe) return {};
  const Fault& by = scenario.faults[s->by];
  std::string opens = "rank " + std::to_string(rank) + "'s open of peer " +
                      std::to_string(s->peer.value_or(0)) + " fails first (" + failedOpenCause(by) +
                      "), and the core stops opening there";
  switch (s->why) {
    case model::Silence::Why::kNoHandle:
      return (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("every peer")) +
             " sends a failure record in the exchange (its allocation or handle export fails): "
             "there is no handle to damage";
    case model::Silence::Why::kAfterFailed:
      return opens;
    case model::Silence::Why::kUnmapped:
      return "it never maps " +
             (fault.peer ? "peer " + std::to_string(*fault.peer) : std::string("a peer")) +
             ", so it never closes one: " + opens;
    case model::Silence::Why::kTaken:
      break;
  }
  return "its own " + toString(by.site) + " fault (" + line(by) + ") takes the same call" +
         (s->peer ? " (peer " + std::to_string(*s->peer) + ")" : std::string()) +
         " first: the fault plan fires one fault a call, the first of the file's order";
}

// Why `fault` never fires on `rank`, or empty when nothing certain stops the rank first.
std::string unreachable(const Scenario& scenario, const Fault& fault, int rank) {
  const bool handle =
      fault.site == FaultSite::kHandleCorrupt || fault.site == FaultSite::kHandleStale;
  for (const Fault& other : scenario.faults) {
    if (&other == &fault) continue;
    // A handle fault fires as the rank receives the entries: an exchange that completes with a
    // failure record still delivers the others' handles (model/rank_calls.h).
    if (handle && exchangeEnd(other)) continue;
    const int stop = stopFor(scenario, other, rank);
    if (stop == model::kTimelineNever) continue;
    bool never = false;
    std::string what;
    if (fault.site == FaultSite::kClose) {
      // close fires in the release path wherever the rank had mapped a peer.
      never = stop < model::kTimelineOpen;
      what = "it never maps a peer, so it never closes one";
    } else if (fault.site == FaultSite::kFree) {
      // free fires wherever the rank's allocation succeeded.
      never = stop <= model::kTimelineAlloc ||
              (other.site == FaultSite::kAlloc && other.appliesTo(rank));
      what = "its allocation fails, so it never frees";
    } else {
      never = stop < timelinePosition(fault);
      what = "it never reaches " +
             inSingleQuotes(positionName(std::min(timelinePosition(fault), model::kTimelineClose)));
    }
    if (!never) continue;
    const std::string who = other.appliesTo(rank) ? "its own " + toString(other.site) + " fault"
                                                  : "the " + toString(other.site) + " fault";
    return who + " (" + line(other) + ") ends rank " + std::to_string(rank) + "'s handshake at " +
           inSingleQuotes(positionName(stop)) + ": " + what;
  }
  return silentInCalls(scenario, fault, rank);
}

}  // namespace

// Whether `fault`, one pair of a set of peers (`peers:`), never fires on `rank` because another
// pair of its set fails the rank's open first: the set fires there (its first failed open), as
// the file says.
bool silencedBySibling(const Scenario& scenario, const Fault& fault, int rank) {
  if (fault.set < 0) return false;
  const model::RankCalls calls = model::rankCalls(scenario, rank, certainlyReached(scenario, rank));
  const auto index = static_cast<std::size_t>(&fault - scenario.faults.data());
  const model::Silence* s = calls.silence(index);
  return s != nullptr && !s->maybe && scenario.faults[s->by].set == fault.set;
}

std::vector<Warning> warnings(const Scenario& file) {
  std::vector<Warning> out;
  // Faults aimed after a construction that fails for certain: the run ends there first.
  for (const Fault& fault : file.faults) {
    if (!fault.onBuffer) continue;
    const auto aim = static_cast<std::size_t>(*fault.onBuffer);
    const auto first = model::failingConstructionBefore(file, aim);
    if (!first) continue;
    for (int rank : fault.ranks) {
      out.push_back(
          {fault.mark,
           faultName(file, fault) + " never fires on rank " + std::to_string(rank) +
               ": construction " + std::to_string(*first) + " fails first (buffer " +
               std::to_string(*first) + "), and no later buffer is constructed" +
               (certain(fault) ? " (a run fails its coverage check)" : " (it is never counted)")});
    }
  }
  // The rest on the construction the oracle derives (model::aimedConstruction).
  const Scenario scenario = model::aimedConstruction(file);
  std::set<std::pair<int, int>> setWarned;  // (set, rank): a set's pairs warn once a rank
  for (const Fault& fault : scenario.faults) {
    if (isDeath(fault)) continue;  // a death that cannot happen is an error (checkDeaths)
    for (int rank : fault.ranks) {
      if (silencedBySibling(scenario, fault, rank)) continue;
      const std::string why = unreachable(scenario, fault, rank);
      if (why.empty()) continue;
      if (fault.set >= 0 && !setWarned.insert({fault.set, rank}).second) continue;
      out.push_back({fault.mark, faultName(scenario, fault) + " never fires on rank " +
                                     std::to_string(rank) + ": " + why +
                                     (certain(fault) ? " (a run fails its coverage check)"
                                                     : " (it is never counted)")});
    }
  }
  // A late delay past the peers' wait: their data planes time out for certain (C8 then needs a
  // timeout naming the late rank, and a run without one fails). With a data plane per buffer,
  // each buffer's (its timeout ends that data plane; the next buffer's runs after it).
  for (const model::DataPlaneTimeout& timeout : model::certainDataPlaneTimeouts(file)) {
    const model::Spec& spec = *timeout.view.dataPlane;
    const auto mark =
        spec.marks.find("late." + std::to_string(timeout.slow.lates.front()) + ".delay");
    out.push_back(
        {mark != spec.marks.end() ? Mark{mark->second.line, mark->second.column} : Mark{},
         (timeout.buffer ? "buffer " + std::to_string(*timeout.buffer) + ": " : std::string()) +
             "the peers' data planes time out for certain: " +
             model::slowStepText(timeout.view, timeout.slow) +
             (timeout.buffer ? "; that buffer's data plane ends there" : "; the run ends there") +
             ", and C8 needs a peer's timeout to name the late rank"});
  }
  return out;
}

// The data plane runs after a handshake that succeeded on every rank: a scenario that expects
// anything else would ask for a data plane that never runs (and C6/C7 fail a data plane asked for
// and not run). The one exception: 'reported' where every rank that stops stops in the data plane
// (`at: dataplane`), after that handshake.
// With a data plane per buffer, one at a time, a later round's construction may fail for certain
// after the earlier rounds ran theirs (`earlierRoundsRun`): the run's outcome is that round's.
void checkDataPlane(const Scenario& scenario, const ExpectMarks& marks, bool earlierRoundsRun) {
  if (!scenario.dataPlane || scenario.expect.outcome == Outcome::kSuccess) return;
  if (earlierRoundsRun) return;
  if (scenario.expect.outcome == Outcome::kReported && model::stopsOnlyInDataPlane(scenario)) {
    return;
  }
  fail(scenario, marks.outcome,
       "a 'dataplane' runs only after a handshake that succeeded on every rank: expect.outcome "
       "must be 'success' (or 'reported' when every rank that stops stops at 'dataplane'), not " +
           inSingleQuotes(toString(scenario.expect.outcome)));
}

// Deaths, hangs and exits at `dataplane`: a `dataplane:` section to stop in, a step it reaches,
// no `dataplane.stop` on the same rank, and every data-plane stop at one step (a rank that stops
// leaves the others waiting for its pair of that step: none of them reaches a later one).
void checkDataPlaneStops(const Scenario& scenario) {
  const Fault* first = nullptr;
  for (const Fault& fault : scenario.faults) {
    if (!model::stopsInDataPlane(fault)) continue;
    const std::string what = "this " + toString(fault.site) + " at 'dataplane'";
    if (!scenario.dataPlane) {
      fail(scenario, fault.mark,
           what +
               " needs a 'dataplane:' section: without one the ranks run no data plane "
               "after the handshake");
    }
    const model::Spec& spec = *scenario.dataPlane;
    if (fault.step >= spec.steps) {
      fail(scenario, fault.mark,
           what + " never fires: step " + std::to_string(fault.step) +
               " never comes, the data "
               "plane runs " +
               std::to_string(spec.steps) +
               " steps (dataplane.steps; steps "
               "count from 0)");
    }
    if (spec.stop && fault.appliesTo(spec.stop->rank)) {
      const auto mark = spec.marks.find("stop");
      fail(scenario, fault.mark,
           what + " stops rank " + std::to_string(spec.stop->rank) + ", which 'dataplane.stop'" +
               (mark != spec.marks.end() ? " (line " + std::to_string(mark->second.line) + ")"
                                         : std::string()) +
               " already stops at step " + std::to_string(spec.stop->step) +
               "; a rank stops in the data plane once: keep one of them");
    }
    if (spec.stop && spec.stop->step != fault.step) {
      fail(scenario, fault.mark,
           what + " at step " + std::to_string(fault.step) + " and 'dataplane.stop' (rank " +
               std::to_string(spec.stop->rank) + " at step " + std::to_string(spec.stop->step) +
               ") stop at different steps: the ranks wait for the first one's pair and never "
               "reach the later step; stop them at the same step");
    }
    if (first != nullptr && first->step != fault.step) {
      fail(scenario, fault.mark,
           what + " at step " + std::to_string(fault.step) + " never fires: rank " +
               std::to_string(first->ranks.front()) + " " + verb(*first) + " at data-plane step " +
               std::to_string(first->step) + " (" + line(*first) +
               ") and the others wait there for its pair; stop them at the same step");
    }
    if (first == nullptr) first = &fault;
  }
}

// A late rank against the peers' data-plane wait (model::judgeLateDelay): a delay between half
// and 1.5 times the wait would leave whether the peers time out to the machine's timing; a delay
// that times them out for certain cannot go with a planned stop (the run ends at whichever comes
// first, and the other is never reached).
void checkDataPlaneDelays(const Scenario& scenario) {
  if (!scenario.dataPlane) return;
  const model::Spec& spec = *scenario.dataPlane;
  const auto wait = model::waitTimeout(spec, scenario.deadline);
  const std::string waitText = std::to_string(wait.count()) + " ms" +
                               (spec.timeout ? " (dataplane.timeout)" : " (the deadline)");
  for (std::size_t i = 0; i < spec.late.size(); ++i) {
    const model::Late& late = spec.late[i];
    if (model::judgeLateDelay(late.delay, wait) != model::LateDelay::kUndecidable) continue;
    const auto mark = spec.marks.find("late." + std::to_string(i) + ".delay");
    fail(scenario, mark != spec.marks.end() ? Mark{mark->second.line, mark->second.column} : Mark{},
         "a late delay of " + std::to_string(late.delay.count() / 1000) +
             " ms is between half and 1.5 times the data plane's wait of " + waitText +
             ": whether rank " + std::to_string(late.rank) +
             "'s peers time out waiting for it depends on the machine's timing; make it at most " +
             formatDuration(wait / 2) + " (no timeout) or at least " +
             formatDuration(wait * 3 / 2) + " (a certain timeout the peers report)");
  }
  const auto slow = model::certainDataPlaneTimeout(scenario);
  if (!slow) return;
  const bool stops = spec.stop || !model::dataPlaneStopRanks(scenario).empty();
  if (stops) {
    const auto mark = spec.marks.find("late." + std::to_string(slow->lates.front()) + ".delay");
    fail(scenario, mark != spec.marks.end() ? Mark{mark->second.line, mark->second.column} : Mark{},
         "a late delay that times the peers out for certain (" +
             model::slowStepText(scenario, *slow) +
             ") cannot go with a data-plane stop: the run ends at whichever comes first; keep "
             "one of them");
  }
}

// A delay, death, hang or exit aimed at buffer I stops or delays the rank at its point in that
// construction (or its close) only. Two points are not one construction's: `before-construct`
// comes once a run, before buffer 0's construction (aimed at a later buffer it never fires), and
// one at `close` of a buffer with later rounds (`one-at-a-time`) leaves the rank stopped or late
// in the next round's construction, which the oracle does not derive (for now).
void checkAimedPoint(const Scenario& scenario, const Fault& fault, std::size_t listed) {
  if (!isDeath(fault) && fault.site != FaultSite::kDelay) return;
  const auto aim = static_cast<std::size_t>(*fault.onBuffer);
  if (fault.at == Point::kBeforeConstruct && aim > 0) {
    fail(scenario, fault.mark,
         "this " + toString(fault.site) + " at 'before-construct' is aimed at buffer " +
             std::to_string(aim) +
             ": the point comes once a run, before buffer 0's construction, so it never "
             "fires; aim it at buffer 0, or at 'alloc' of buffer " +
             std::to_string(aim));
  }
  const bool laterRounds =
      scenario.buffersAlive == model::BuffersAlive::kOneAtATime && aim + 1 < listed;
  if (fault.at == Point::kClose && laterRounds) {
    fail(scenario, fault.mark,
         "this " + toString(fault.site) + " at 'close' of buffer " + std::to_string(aim) +
             " leaves rank(s) " + rankList(fault.ranks) + " " +
             (fault.site == FaultSite::kDelay ? "late" : "stopped") +
             " in the next round's construction (buffer " + std::to_string(aim + 1) +
             "), which is not derived (for now): aim it at the last buffer, or use "
             "'buffers_alive: together'");
  }
}

// Faults aimed at several buffers: the constructions run in order, and the first that does not
// succeed ends the run (model::aimedBuffer). The oracle derives that one construction, so every
// construction before it must succeed for certain (its faults: close, free and delays under the
// deadline, which fire at their point of a construction that succeeds or at its close) and one
// that may fail or succeed as the draw falls cannot have faults aimed after it (the run would be
// one construction's or another's). A fault aimed after a construction that fails for certain
// never fires: a warning (warnings()).
void checkSeveralAims(const Scenario& scenario) {
  const std::vector<std::size_t> aims = model::aimedBuffers(scenario);
  if (aims.size() < 2) return;
  const std::size_t derived = *model::aimedBuffer(scenario);
  for (const Fault& fault : scenario.faults) {
    if (!fault.onBuffer) continue;
    const auto aim = static_cast<std::size_t>(*fault.onBuffer);
    if (aim < derived && fault.site != FaultSite::kClose && fault.site != FaultSite::kFree &&
        fault.site != FaultSite::kDelay) {
      fail(scenario, fault.mark,
           "this " + toString(fault.site) + " fault is aimed at buffer " + std::to_string(aim) +
               ", whose construction succeeds before buffer " + std::to_string(derived) +
               "'s: with faults aimed at several buffers, a construction before the one that "
               "fails takes close, free and delay faults only (for now: the oracle derives one "
               "failing construction)");
    }
    if (isDeath(fault) && fault.at == Point::kClose) {
      fail(scenario, fault.mark,
           "this " + toString(fault.site) +
               " at 'close' cannot go with faults aimed at several buffers (for now): the "
               "buffers still alive are closed after a later construction fails, and the rank "
               "would stop there");
    }
    if (aim > derived &&
        model::constructionEnd(scenario, derived) == model::ConstructionEnd::kMayFail) {
      fail(scenario, fault.mark,
           "this fault is aimed at buffer " + std::to_string(aim) + ", after buffer " +
               std::to_string(derived) +
               ", whose construction fails or succeeds as the draw of its faults left to chance "
               "falls: the run would be one construction's or the other's, which is not derived "
               "(for now); make buffer " +
               std::to_string(derived) + "'s faults certain, or aim this one at it");
    }
  }
}

// Rule 8c for buffer-count (model/buffers.h, countMismatch): whether the scenario has one, and
// if so what it may go with. Alone among the buffer faults (an order, size or label mismatch and a
// count would each end the run at their own construction: the oracle derives one), one a rank;
// some rank must register another number than another, each fires where its rank skips or adds
// a construction (no rank stops earlier), and the outcome is `raise`.
bool checkBufferCount(const Scenario& scenario, const ExpectMarks& marks) {
  const Fault* first = nullptr;
  for (const Fault& fault : scenario.faults) {
    if (fault.site == FaultSite::kBufferCount && first == nullptr) first = &fault;
  }
  if (first == nullptr) return false;
  std::vector<const Fault*> byRank(static_cast<std::size_t>(scenario.ranks), nullptr);
  for (const Fault& fault : scenario.faults) {
    if (model::isBufferFault(fault) && fault.site != FaultSite::kBufferCount) {
      fail(scenario, fault.mark,
           "this " + toString(fault.site) + " fault cannot go with a buffer-count fault (" +
               line(*first) +
               ") (for now): a registration mismatch and a missing construction each end the run "
               "at their own construction; plant one of them");
    }
    if (fault.site != FaultSite::kBufferCount) continue;
    for (int rank : fault.ranks) {
      const Fault*& mine = byRank[static_cast<std::size_t>(rank)];
      if (mine != nullptr) {
        fail(scenario, fault.mark,
             "rank " + std::to_string(rank) + " has a buffer-count fault already (" + line(*mine) +
                 "): a rank registers one number of buffers");
      }
      mine = &fault;
    }
  }
  const auto count = model::countMismatch(scenario);
  if (!count) {
    fail(scenario, first->mark,
         "every rank registers " + std::to_string(model::registeredBy(scenario, 0)) +
             " buffer(s): no rank registers another number than another, so nothing waits (a "
             "no-op); plant the buffer-count fault on fewer ranks");
  }
  const std::size_t listed = model::listedBuffers(scenario).size();
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kBufferCount) continue;
    const std::size_t fires = std::min(fault.registers, listed);
    if (fires == count->at) continue;
    const auto index = static_cast<std::size_t>(&fault - scenario.faults.data());
    fail(scenario, fault.mark,
         "fault #" + std::to_string(index) + " (buffer-count, " + line(fault) +
             ") never fires: its rank(s) would skip or add construction " + std::to_string(fires) +
             ", but rank(s) " + rankList(count->returning) + " register " +
             std::to_string(count->at) + " buffer(s), so every rank's constructions end at " +
             "construction " + std::to_string(count->at) + " first");
  }
  if (scenario.expect.outcome != Outcome::kRaise && !scenario.expect.violations.empty()) {
    return true;
  }
  if (scenario.expect.outcome != Outcome::kRaise) {
    fail(scenario, marks.outcome,
         "outcome " + inSingleQuotes(toString(scenario.expect.outcome)) +
             " is impossible: rank(s) " + rankList(count->waiting) + " make construction " +
             std::to_string(count->at) + ", which rank(s) " + rankList(count->returning) +
             " never make, and wait for them there until the deadline; expect 'raise' (the "
             "returning ranks say 'ok')");
  }
  return true;
}

// A fault beside a data plane over several buffers. What the oracle derives (for now): the
// constructions succeed and each buffer's data plane runs, or, one at a time, a later round ends
// the rounds for certain (a failed call, not a stopped rank; a registration mismatch; a count
// that differs) after the earlier rounds ran theirs (model::dataPlanesRun). So a fault is aimed
// at a buffer whose construction succeeds for certain (a delay under the deadline, a close or free
// fault, ...) or fails for certain in a later round, a buffer-* fault ends a later round, or a
// fault stops its rank in the last buffer's data plane (`at: dataplane`): a rank stopped in an
// earlier one would leave its peers waiting for it in the next buffer's data plane or
// construction.
void checkFaultBesideBufferDataPlanes(const Scenario& scenario, const Fault& fault,
                                      std::size_t listed) {
  const std::string what = "this " + toString(fault.site) + " fault";
  if (model::isBufferFault(fault)) {
    // A registration mismatch or a count that differs ends the rounds at its construction.
    if (model::dataPlanesRun(scenario) > 0) return;
    fail(scenario, fault.mark,
         what + " ends the registration rounds at " +
             (scenario.buffersAlive == model::BuffersAlive::kOneAtATime
                  ? std::string("the first construction")
                  : std::string("its construction, with the buffers alive together (their data "
                                "planes run once every buffer is constructed)")) +
             ", so no buffer's data plane runs: the 'dataplane:' would never run; make a later "
             "round of 'buffers_alive: one-at-a-time' differ, or drop the 'dataplane:'");
  }
  if (!fault.onBuffer) return;  // checkBuffers: every fault names its buffer
  const auto aim = static_cast<std::size_t>(*fault.onBuffer);
  if (model::stopsInDataPlane(fault)) {
    if (aim + 1 == listed) return;
    fail(scenario, fault.mark,
         what + " at 'dataplane' is aimed at buffer " + std::to_string(aim) +
             ", whose data plane is not the last: the stopped rank's peers would wait for it in "
             "buffer " +
             std::to_string(aim + 1) +
             "'s, which is not derived (for now); aim it at the last buffer (" +
             std::to_string(listed - 1) + ")");
  }
  if (model::stopsRank(fault.site)) {
    fail(scenario, fault.mark,
         what + " stops its rank at '" + toString(fault.at) + "' of buffer " + std::to_string(aim) +
             ": with a rank planned to stop outside the data plane no data plane runs (the "
             "harness cannot end one together); stop it 'at: dataplane' of the last buffer, or "
             "drop the 'dataplane:'");
  }
  if (aim >= listed) return;  // checkBuffers names the buffer that is not there
  switch (model::constructionEnd(scenario, aim)) {
    case model::ConstructionEnd::kSucceeds:
      return;
    case model::ConstructionEnd::kFails:
      if (scenario.buffersAlive == model::BuffersAlive::kOneAtATime && aim > 0) return;
      fail(scenario, fault.mark,
           what + " fails buffer " + std::to_string(aim) + "'s construction, so no buffer's data " +
               "plane runs (" +
               (aim == 0 ? std::string("it is the first")
                         : std::string("alive together, they run once every buffer is "
                                       "constructed")) +
               "): the 'dataplane:' would never run; fail a later round of 'buffers_alive: "
               "one-at-a-time', or drop the 'dataplane:'");
      break;
    case model::ConstructionEnd::kMayFail:
      fail(scenario, fault.mark,
           what + " may fail buffer " + std::to_string(aim) +
               "'s construction as its draw falls, and this scenario runs a data plane over each "
               "buffer: which data planes run would depend on the draw, which is not derived "
               "(for now); make it certain (probability 1), or drop the 'dataplane:'");
  }
}

// A data plane per buffer (scenarios/README.md, "A data plane per buffer"): with a `dataplane:`
// and several buffers, every buffer every rank constructed runs a data plane, its entry's own
// `dataplane:` or the scenario's. Each is judged as the one buffer's is (its stop, its delays, a
// late rank's certain timeout, an `at: dataplane` stop aimed at it): a stop or a timeout ends that
// buffer's data plane only, and the next buffer's runs after it. The faults beside them:
// checkFaultBesideBufferDataPlanes.
void checkBufferDataPlanes(const Scenario& scenario, const std::vector<model::BufferSpec>& listed) {
  for (const model::BufferSpec& buffer : scenario.buffers) {
    if (!buffer.dataPlane) continue;
    if (listed.size() < 2) {
      fail(scenario, buffer.dataPlaneMark,
           "a buffer's 'dataplane' chooses among several buffers' data planes, but this scenario "
           "constructs one buffer: write its data plane as the scenario's 'dataplane:'");
    }
    if (!scenario.dataPlane) {
      fail(scenario, buffer.dataPlaneMark,
           "a buffer's 'dataplane' replaces the scenario's 'dataplane:' for that buffer, and this "
           "scenario has none: give the scenario's 'dataplane:' too (for now every buffer runs a "
           "data plane, the scenario's where its entry has none)");
    }
  }
  if (!scenario.dataPlane || !model::plansBuffers(scenario)) return;
  for (const Fault& fault : scenario.faults) {
    checkFaultBesideBufferDataPlanes(scenario, fault, listed.size());
  }
  for (std::size_t number = 0; number < listed.size(); ++number) {
    Scenario view = model::dataPlaneScenarioOf(scenario, number);
    // The stops aimed at another buffer name no rank here: not this data plane's to judge.
    std::erase_if(view.faults, [](const Fault& fault) { return fault.ranks.empty(); });
    checkDataPlaneStops(view);
    checkDataPlaneDelays(view);
  }
}

// Several buffers and the buffer-* faults (model/buffers.h). The oracle derives one handshake a
// buffer: either a mismatch (buffer-order, -size, -label) fails one construction and nothing else
// is planted, or the handshake faults (delays, deaths, hangs and exits among them) are all aimed
// at one buffer I (`buffer: I`) and the run is construction I's (model::aimedConstruction); no
// device_memory (a data plane over several buffers: checkBufferDataPlanes). A buffer fault
// must make some rank differ from rank 0, fire on every rank it names before the mismatch ends
// the run, and the outcome is then `raise`.
// Over 80 lines: rule 8c's cases, one after another; to be split by case.
// NOLINTNEXTLINE(readability-function-size): to be split
void checkBuffers(const Scenario& scenario, const ExpectMarks& marks) {
  const std::size_t listed = model::listedBuffers(scenario).size();
  const Fault* aimed = nullptr;
  for (const Fault& fault : scenario.faults) {
    if (!fault.onBuffer) continue;
    if (listed < 2) {
      fail(scenario, fault.mark,
           "'buffer' aims a fault at one of several buffers, but this scenario constructs one "
           "(list them under 'buffers:', or drop 'buffer')");
    }
    if (aimed == nullptr) aimed = &fault;
    checkAimedPoint(scenario, fault, listed);
  }
  checkSeveralAims(scenario);
  if (!model::plansBuffers(scenario)) return;
  const bool control = !scenario.expect.violations.empty();
  if (!scenario.deviceMemory.empty()) {
    fail(scenario, scenario.mark,
         "'device_memory' cannot go with several buffers or a buffer-* fault (for now): the "
         "out-of-memory allocations it implies are derived for the one buffer of 'buffer'");
  }
  for (const Fault& fault : scenario.faults) {
    if (model::isBufferFault(fault)) {
      if (aimed != nullptr) {
        fail(scenario, fault.mark,
             "this " + toString(fault.site) +
                 " fault cannot go with a fault aimed at one buffer (" + line(*aimed) +
                 ") (for now): the oracle derives either a mismatch or the failure of one "
                 "construction");
      }
      continue;
    }
    if (fault.onBuffer) continue;
    fail(scenario, fault.mark,
         "this " + toString(fault.site) +
             " fault is aimed at no buffer: with several buffers or a buffer-* fault, a "
             "handshake fault names the buffer whose construction it is aimed at "
             "('buffer: I', an alloc, get-handle, open, close, free, table, handle-*, "
             "group-fail, delay, death, hang or exit fault); other faults are refused (for now)");
  }
  if (aimed != nullptr) return;  // the aimed construction's handshake: the other rules judge it
  if (checkBufferCount(scenario, marks)) return;
  const auto mismatch = model::bufferMismatch(scenario);
  const Fault* first = nullptr;
  for (const Fault& fault : scenario.faults) {
    if (first == nullptr) first = &fault;
    const auto index = static_cast<std::size_t>(&fault - scenario.faults.data());
    for (int rank : fault.ranks) {
      const auto constructions = model::constructionsOf(scenario, rank);
      std::optional<std::size_t> at;
      for (std::size_t i = 0; i < constructions.size() && !at; ++i) {
        const auto& fired = constructions[i].faults;
        if (std::find(fired.begin(), fired.end(), index) != fired.end()) at = i;
      }
      const std::string name = "fault #" + std::to_string(index) + " (" + toString(fault.site) +
                               ", " + line(fault) + ")";
      if (!at) {
        fail(scenario, fault.mark,
             name + " never fires on rank " + std::to_string(rank) +
                 ": with the rank's other buffer faults it constructs the listed buffers as "
                 "they are");
      }
      if (mismatch && *at > mismatch->at) {
        fail(scenario, fault.mark,
             name + " never fires on rank " + std::to_string(rank) +
                 ": it changes the rank's construction " + std::to_string(*at) +
                 ", but every rank raises BufferMismatchError at construction " +
                 std::to_string(mismatch->at) + " first");
      }
    }
  }
  if (first != nullptr && !mismatch) {
    fail(scenario, first->mark,
         "the buffer faults leave every rank constructing what rank 0 constructs, in the same "
         "order: no rank differs from rank 0, so nothing is refused (a no-op); plant them on "
         "fewer ranks");
  }
  if (mismatch && scenario.expect.outcome != Outcome::kRaise && !control) {
    fail(scenario, marks.outcome,
         "outcome " + inSingleQuotes(toString(scenario.expect.outcome)) +
             " is impossible: rank(s) " + rankList(mismatch->ranks) +
             " construct another buffer than rank 0 at construction " +
             std::to_string(mismatch->at) +
             ", so every rank raises BufferMismatchError there; expect 'raise'");
  }
}

// A rank that cannot decode a peer's entry opens no peer, builds no table and never closes a
// mapping, and its all-gather must complete for the damage to land: a fault of those on its rank
// would never fire, or make it raise something else. Refused, at that fault (rule 10b).
void checkEntryFaults(const Scenario& scenario) {
  for (const Fault& entry : scenario.faults) {
    if (!entrySite(entry.site)) continue;
    for (const Fault& fault : scenario.faults) {
      if (&fault == &entry) continue;
      const bool opens = mappingSite(fault.site) || tableSite(fault.site) ||
                         fault.site == FaultSite::kClose ||
                         (isDeath(fault) && fault.at == Point::kOpen);
      const bool other = fault.site == FaultSite::kGroupFail || entrySite(fault.site);
      if (!opens && !other) continue;
      for (int rank : fault.ranks) {
        if (!entry.appliesTo(rank)) continue;
        const std::string site = toString(entry.site);
        if (entrySite(fault.site)) {
          fail(scenario, fault.mark,
               "rank " + std::to_string(rank) + " already has an " + site + " fault (" +
                   line(entry) +
                   "): one entry-corrupt or exchange-long fault a rank (without 'peer' "
                   "entry-corrupt damages every peer's entry; the decoder refuses an exchange of "
                   "the wrong length before it reads any)");
        }
        if (!opens) {
          fail(scenario, fault.mark,
               "this group-fail fault on rank " + std::to_string(rank) +
                   " would end its handshake in a group call, not at the exchange that the " +
                   site + " fault (" + line(entry) + ") damages: plant them on different ranks");
        }
        fail(scenario, fault.mark,
             "this " + toString(fault.site) + " fault on rank " + std::to_string(rank) +
                 " never fires: the " + site + " fault (" + line(entry) + ") leaves rank " +
                 std::to_string(rank) +
                 (entry.site == FaultSite::kExchangeLong
                      ? " unable to decode the exchange (its length is wrong)"
                      : " unable to decode a peer's entry") +
                 ", so it opens no peer, builds no table and closes no mapping");
      }
    }
  }
}

// ranks_per_gpu with device_memory: the ranks of one mocked GPU allocate from its one memory, in
// the order the run interleaves them. Where it holds each rank's allocations but not all of them
// together, which rank runs out depends on that order (the seed), and no expectation can say which:
// refused. A GPU must hold every allocation of its ranks (their buffers, alive together, and an
// address table each). The buffer faults are left out: they change what one rank constructs.
void checkSharedGpus(const Scenario& scenario) {
  if (scenario.ranksPerGpu <= 0 || scenario.deviceMemory.empty()) return;
  std::map<int, std::vector<int>> members;  // each GPU's ranks (model::gpuOfRank)
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    members[model::gpuOfRank(rank, scenario.ranks, scenario.ranksPerGpu, scenario.nodes)].push_back(
        rank);
  }
  const std::size_t table = static_cast<std::size_t>(scenario.ranks) * sizeof(std::int64_t);
  std::size_t perRank = 0;
  for (const model::BufferSpec& buffer : model::listedBuffers(scenario)) {
    const std::size_t one = buffer.bytes + table;
    perRank = scenario.buffersAlive == model::BuffersAlive::kOneAtATime ? std::max(perRank, one)
                                                                        : perRank + one;
  }
  for (const auto& [gpu, ranks] : members) {
    // device_memory is the GPU's, given alike to its ranks (the parser's check): its first's.
    const auto memory = scenario.deviceMemory.find(ranks.front());
    if (memory == scenario.deviceMemory.end()) continue;
    const int onIt = static_cast<int>(ranks.size());
    const std::size_t needed = perRank * static_cast<std::size_t>(onIt);
    if (onIt > 1 && memory->second < needed) {
      fail(scenario, scenario.mark,
           "mocked GPU " + std::to_string(gpu) + " (ranks_per_gpu " +
               std::to_string(scenario.ranksPerGpu) + ") holds " + std::to_string(onIt) +
               " ranks needing " + std::to_string(needed) +
               " bytes together, but its "
               "device_memory is " +
               std::to_string(memory->second) +
               ": which rank runs out would depend on the order they allocate in (the seed); "
               "give the GPU room for every rank's allocations");
    }
  }
}

// collective-order (rule 10d), on the faults as written: the rank's call must meet another call
// of its peers. Every rank in the same order meets no other call (their calls still pair), and a
// group call that already fails on the rank (group-fail, a foreign exception) is made in no order.
void checkCollectiveOrder(const Scenario& scenario) {
  for (const Fault& order : scenario.faults) {
    if (order.site != FaultSite::kCollectiveOrder) continue;
    const std::string call = order.at == Point::kExchange ? "exchange" : "agreement";
    std::vector<int> same;
    for (const Fault& fault : scenario.faults) {
      if (fault.site != FaultSite::kCollectiveOrder || fault.at != order.at) continue;
      same.insert(same.end(), fault.ranks.begin(), fault.ranks.end());
    }
    std::sort(same.begin(), same.end());
    same.erase(std::unique(same.begin(), same.end()), same.end());
    if (static_cast<int>(same.size()) == scenario.ranks) {
      fail(scenario, order.mark,
           "every rank makes its calls in this order (collective-order at " +
               inSingleQuotes(toString(order.at)) +
               " on each of them): their calls still pair, nothing is out of order; name the "
               "ranks that differ from the others, not all " +
               std::to_string(scenario.ranks));
    }
    for (const Fault& fault : scenario.faults) {
      const Fault acting = model::actingFault(fault);
      if (fault.site == FaultSite::kCollectiveOrder || acting.site != FaultSite::kGroupFail ||
          acting.at != order.at) {
        continue;
      }
      for (int rank : order.ranks) {
        if (!fault.appliesTo(rank)) continue;
        fail(scenario, order.mark,
             "rank " + std::to_string(rank) + "'s " + call + " already fails there, locally (" +
                 toString(fault.site) + ", " + line(fault) +
                 "): a call that fails before it is made meets no peer's call in any order; "
                 "plant them on different ranks or calls");
      }
    }
  }
}

// handle-mapped gives a rank, for its peer, the handle that peer exported for the previous buffer
// of `buffers:`, which the rank still maps: there is one only in a construction after the first
// while the earlier buffers live (buffers alive together).
void checkMappedHandles(const Scenario& scenario) {
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kHandleMapped) continue;
    const bool later = fault.onBuffer && *fault.onBuffer >= 1;
    if (!later || scenario.buffersAlive != model::BuffersAlive::kTogether) {
      fail(scenario, fault.mark,
           "handle-mapped gives the rank, for its peer, the handle that peer exported for the "
           "previous buffer, which the rank still maps: aim it at a buffer after the first "
           "('buffer: I', I >= 1, of 'buffers:') with 'buffers_alive: together' (a freed "
           "earlier buffer's handle is handle-stale's)");
    }
  }
}

// handle-stale aimed at buffer I (I >= 1) of buffers alive one at a time gives the rank, for its
// peer, the handle of that peer's buffer I - 1, freed when its round ended (FaultyBackend, when
// that buffer is a block of its own: 4 MiB at least, its kStaleScratchBytes). Measured on CUDA
// (runtime_table.yaml): the next block of at least the freed one's size takes its place
// (large-block-reuse, large-place-bigger-block) and, once its owner exported it as the next
// round's PeerBuffer does, the old handle opens onto it (stale-large-place-taken,
// -bigger-exported): the fault has no effect. A 2 MiB block goes elsewhere and the handle is
// refused (large-place-smaller-block, stale-large-place-smaller). Sizes between 2 and 4 MiB are
// unmeasured and refused here too; below 2 MiB the buffer lives in a chunk, whose place after a
// freed large block is unmeasured as well (the mock puts a new chunk elsewhere), and passes. The
// mock models the same size only, so a file posing a bigger next buffer would be judged one way
// on the mock and another on CUDA. A file that expects the judge to say so
// (`judge: [{rule: fault-without-effect, ...}]`) states it.
void checkStaleHandlesPlaceTaken(const Scenario& scenario) {
  constexpr std::size_t kOwnBlockBytes = std::size_t{4} << 20;   // faults' kStaleScratchBytes
  constexpr std::size_t kElsewhereBytes = std::size_t{2} << 20;  // large-place-smaller-block
  if (scenario.buffersAlive != model::BuffersAlive::kOneAtATime) return;
  const auto& refusals = scenario.expect.refusals;
  if (std::any_of(refusals.begin(), refusals.end(),
                  [](const auto& r) { return r.rule == "fault-without-effect"; })) {
    return;
  }
  for (const Fault& fault : scenario.faults) {
    if (fault.site != FaultSite::kHandleStale || !fault.onBuffer || *fault.onBuffer < 1) continue;
    const auto at = static_cast<std::size_t>(*fault.onBuffer);
    if (at >= scenario.buffers.size()) continue;
    const std::size_t before = scenario.buffers[at - 1].bytes;
    const std::size_t now = scenario.buffers[at].bytes;
    if (before < kOwnBlockBytes || now <= kElsewhereBytes) continue;
    // Round I - 1 must run clean for the peer to have exported and freed that buffer.
    const bool clean = std::all_of(
        scenario.faults.begin(), scenario.faults.end(),
        [&](const Fault& f) { return f.onBuffer && static_cast<std::size_t>(*f.onBuffer) >= at; });
    if (!clean) continue;
    const std::string why =
        now >= before ? " is at least the size of its freed buffer " + std::to_string(at - 1) +
                            " and takes its place, and the runtime opens the stale handle onto "
                            "the block now at its place once the peer exported it "
                            "(runtime_table.yaml stale-large-place-taken, "
                            "stale-large-place-bigger-exported)"
                      : " is smaller than its freed buffer " + std::to_string(at - 1) +
                            " but above 2 MiB: whether it takes the freed place (and the stale "
                            "handle then opens onto it) is unmeasured (runtime_table.yaml "
                            "large-place-smaller-block measured 2 MiB: elsewhere)";
    fail(scenario, fault.mark,
         "handle-stale aimed at buffer " + std::to_string(at) +
             " may have no effect: the peer's buffer " + std::to_string(at) + why +
             "; make buffer " + std::to_string(at) +
             " 2 MiB or smaller (it goes elsewhere: the handle is refused), or expect the "
             "judge's fault-without-effect");
  }
}

void apply(Scenario& scenario, const ExpectMarks& marks) {
  checkCollectiveOrder(scenario);
  checkMappedHandles(scenario);
  checkStaleHandlesPlaceTaken(scenario);
  // The rules judge device_memory's out-of-memory allocations as the faults they act as; only the
  // expectation they settle goes back into the scenario.
  Scenario judged = model::withDeviceMemoryFaults(scenario);
  // A foreign-exception fault as the failure of the call it names (model::actingFault).
  for (Fault& fault : judged.faults) fault = model::actingFault(fault);
  // First the buffers as written; then, where the faults are aimed at one buffer of `buffers:`,
  // the rest judge that construction alone, as the oracle derives it (model::aimedConstruction).
  checkBufferDataPlanes(judged, model::listedBuffers(judged));
  checkBuffers(judged, marks);
  const bool earlierRoundsRun = model::dataPlanePerBuffer(judged) &&
                                model::dataPlanesRun(judged) < judged.buffers.size() &&
                                model::dataPlanesRun(judged) > 0;
  judged = model::aimedConstruction(std::move(judged));
  checkDeaths(judged);
  checkEntryFaults(judged);
  checkSharedGpus(judged);
  checkDataPlaneStops(judged);
  checkDataPlaneDelays(judged);
  checkOutcome(judged, marks);
  checkDataPlane(judged, marks, earlierRoundsRun);
  fillMessages(judged, marks);
  checkCeiling(judged, marks);
  scenario.expect = judged.expect;
}

}  // namespace peerconf::harness::scenario
