// Scenario: the names of its values and the error a file that does not validate raises (reading
// files is scenario/load.cc's).
#include "model/scenario.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "model/fault_sites.h"
#include "model/text.h"
#include "sim_clock.h"

namespace peerconf::harness::model {

namespace {

std::string located(const std::string& file, Mark mark, const std::string& message) {
  if (mark.line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) + ": " +
         message;
}

}  // namespace

ScenarioError::ScenarioError(std::string file, Mark mark, const std::string& message)
    : std::runtime_error(located(file, mark, message)),
      file_(std::move(file)),
      mark_(mark),
      message_(message) {}

std::vector<int> dataPlaneStopRanks(const Scenario& scenario) {
  std::vector<int> out;
  for (const Fault& fault : scenario.faults) {
    if (!stopsInDataPlane(fault)) continue;
    out.insert(out.end(), fault.ranks.begin(), fault.ranks.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t dataPlaneStopBuffer(const Scenario& scenario) {
  if (!dataPlanePerBuffer(scenario)) return 0;
  for (const Fault& fault : scenario.faults) {
    if (stopsInDataPlane(fault) && fault.onBuffer) return static_cast<std::size_t>(*fault.onBuffer);
  }
  return 0;
}

bool stopsOnlyInDataPlane(const Scenario& scenario) {
  bool any = false;
  for (const Fault& fault : scenario.faults) {
    if (!stopsRank(fault.site)) continue;
    if (fault.at != Point::kDataplane) return false;
    any = true;
  }
  return any;
}

Spec dataPlaneOf(const Scenario& scenario, int rank) {
  Spec spec = scenario.dataPlane.value();
  for (const Fault& fault : scenario.faults) {
    if (stopsInDataPlane(fault) && fault.appliesTo(rank)) spec.stop = Stop{rank, fault.step};
  }
  return spec;
}

Spec dataPlaneOf(const Scenario& scenario, int rank, std::size_t buffer) {
  if (!dataPlanePerBuffer(scenario)) return dataPlaneOf(scenario, rank);
  return dataPlaneOf(dataPlaneScenarioOf(scenario, buffer), rank);
}

bool dataPlanePerBuffer(const Scenario& scenario) {
  return scenario.dataPlane.has_value() && scenario.buffers.size() > 1;
}

Scenario dataPlaneScenarioOf(const Scenario& scenario, std::size_t buffer) {
  Scenario view = scenario;
  if (buffer < scenario.buffers.size() && scenario.buffers[buffer].dataPlane) {
    view.dataPlane = scenario.buffers[buffer].dataPlane;
  }
  // An `at: dataplane` death, hang or exit stops its rank in the data plane of the buffer it is
  // aimed at (`buffer: I`) only: another buffer's view does not plan it (it names no rank there,
  // as model::aimedConstruction leaves a fault aimed elsewhere; the faults keep their numbers).
  if (!dataPlanePerBuffer(scenario)) return view;
  for (Fault& fault : view.faults) {
    if (stopsInDataPlane(fault) && fault.onBuffer &&
        static_cast<std::size_t>(*fault.onBuffer) != buffer) {
      fault.ranks.clear();
    }
  }
  return view;
}

MessageExpectation dataPlaneReport(const Scenario& scenario) {
  const std::vector<int> stopped = dataPlaneStopRanks(scenario);
  if (stopped.size() == 1) {
    return {MessageKind::kText, "waiting for rank " + std::to_string(stopped.front()) + "'s pair"};
  }
  return {MessageKind::kText, "waiting for rank "};
}

LateDelay judgeLateDelay(std::chrono::microseconds delay, std::chrono::milliseconds wait) {
  const std::chrono::microseconds w = wait;
  if (2 * delay <= w) return LateDelay::kOnTime;
  if (2 * delay >= 3 * w) return LateDelay::kTimesOut;
  return LateDelay::kUndecidable;
}

std::optional<std::uint64_t> firstLateStep(const Late& late, std::uint64_t steps) {
  std::optional<std::uint64_t> first;
  for (std::uint64_t s : late.steps) {
    if (s < steps && (!first || s < *first)) first = s;
  }
  if (late.every > 0 && late.every < steps && (!first || late.every < *first)) first = late.every;
  return first;
}

std::optional<SlowStep> certainDataPlaneTimeout(const Scenario& scenario) {
  if (!scenario.dataPlane || scenario.ranks < 2) return std::nullopt;
  const Spec& spec = *scenario.dataPlane;
  const std::chrono::milliseconds wait = waitTimeout(spec, scenario.deadline);
  std::optional<SlowStep> slow;
  for (std::size_t i = 0; i < spec.late.size(); ++i) {
    const Late& late = spec.late[i];
    if (judgeLateDelay(late.delay, wait) != LateDelay::kTimesOut) continue;
    const auto step = firstLateStep(late, spec.steps);
    if (!step) continue;
    if (!slow || *step < slow->step) slow = SlowStep{*step, {}, {}};
    if (*step == slow->step) {
      slow->lates.push_back(i);
      if (std::find(slow->ranks.begin(), slow->ranks.end(), late.rank) == slow->ranks.end()) {
        slow->ranks.push_back(late.rank);
      }
    }
  }
  if (slow) std::sort(slow->ranks.begin(), slow->ranks.end());
  return slow;
}

std::string slowStepText(const Scenario& scenario, const SlowStep& slow) {
  std::string ranks;
  for (int r : slow.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  const Spec& spec = *scenario.dataPlane;
  std::chrono::microseconds delay{0};
  for (std::size_t i : slow.lates) delay = std::max(delay, spec.late[i].delay);
  return "rank(s) " + ranks + " late by " + std::to_string(delay.count() / 1000) + " ms at step " +
         std::to_string(slow.step) + " (dataplane.late), at least 1.5 x the peers' wait of " +
         std::to_string(waitTimeout(spec, scenario.deadline).count()) + " ms";
}

faults::FaultPlan faultPlan(const Scenario& scenario) {
  return faults::FaultPlan(scenario.faults, scenario.seed);
}

faults::FaultPlan faultPlan(const Scenario& scenario, std::uint64_t seed) {
  return faults::FaultPlan(scenario.faults, seed);
}

std::string toString(FaultSite site) { return std::string(faults::siteName(site)); }

std::string toString(Point point) { return std::string(faults::pointName(point)); }

std::string toString(Outcome outcome) { return kOutcomeNames.name(outcome); }

std::string toString(MessageKind kind) { return kMessageKindNames.name(kind); }

std::string toString(const MessageExpectation& message) {
  if (message.kind != MessageKind::kText) return toString(message.kind);
  return "text \"" + message.text + "\"";
}

std::string hipErrorName(int code) { return faults::hipErrorName(code); }

int nodeOf(const Scenario& scenario, int rank) {
  if (scenario.nodes <= 1) return 0;
  return rank / (scenario.ranks / scenario.nodes);
}

int gpuOfRank(int rank, int ranks, int ranksPerGpu, int nodes) {
  const int perNode = nodes > 1 ? ranks / nodes : ranks;
  const int gpusPerNode = std::max((perNode + ranksPerGpu - 1) / std::max(ranksPerGpu, 1), 1);
  return (rank / perNode) * gpusPerNode + (rank % perNode) % gpusPerNode;
}

std::chrono::milliseconds plannedBound(const Scenario& scenario) {
  if (scenario.expect.within) return *scenario.expect.within;
  std::chrono::milliseconds bound = kGroupCallsPerRun * scenario.deadline + kBoundSlack;
  for (const Fault& fault : scenario.faults) {
    if (fault.site == FaultSite::kDelay) bound += fault.delay;
  }
  return bound;
}

int handshakeCalls(int ranks) {
  // The runner's agreement, alloc, get-handle, exchange, the table's alloc and copy, agree, and
  // the two frees; an open and a close per peer.
  constexpr int kFixedCalls = 9;
  return kFixedCalls + 2 * std::max(0, ranks - 1);
}

std::chrono::nanoseconds agreementRound(int ranks) {
  const int points = std::max(1, ranks) * handshakeCalls(ranks) * kPointsPerCall;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(points * SimClock::kCallCost);
}

std::optional<std::string> legitimateWait(const Scenario& scenario) {
  if (scenario.ranks < 2) return std::nullopt;  // nobody to wait for
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& fault = scenario.faults[i];
    std::string why;
    switch (traitsOf(actingFault(fault).site).effect) {
      case Effect::kLate:
        why = "a late rank: the others wait for it, until the deadline at most";
        break;
      case Effect::kStop:
        why = "a rank that stops: the others wait for it until the deadline";
        break;
      case Effect::kGroup:
        why = fault.site == FaultSite::kCollectiveOrder
                  ? "collectives in another order: a group may end the mismatched call only at "
                    "its deadline"
                  : "a group call fails on one rank: the others wait for it until the deadline";
        break;
      case Effect::kEntry:
        // A damaged failure record: the others raise from it at the exchange, while the
        // receiving rank, which could not read it, waits alone in the agreement.
        for (const Fault& other : scenario.faults) {
          if (traitsOf(other.site).effect != Effect::kExchange) continue;
          for (int peer : other.ranks) {
            if ((!fault.peer || *fault.peer == peer) && !fault.appliesTo(peer)) {
              why =
                  "a damaged failure record: the rank that cannot read it waits in the "
                  "agreement, which the others never reach, until the deadline";
            }
          }
        }
        break;
      case Effect::kCount:
        why =
            "a rank registers another number of buffers: the ranks that construct a buffer a "
            "peer never does wait for it in that exchange until the deadline";
        break;
      case Effect::kNotReady:
        if (!scenario.runner.agreeFirst) {
          why = "without the runner's agreement the others wait in the exchange until the deadline";
        }
        break;
      default:
        break;
    }
    if (!why.empty()) {
      return "fault #" + std::to_string(i) + " (" + toString(fault.site) + ", line " +
             std::to_string(fault.mark.line) + "): " + why;
    }
  }
  return std::nullopt;
}

std::optional<std::chrono::nanoseconds> togetherBound(const Scenario& scenario) {
  if (scenario.expect.outcome != Outcome::kRaise || scenario.expect.within) return std::nullopt;
  if (legitimateWait(scenario)) return std::nullopt;
  return agreementRound(scenario.ranks);
}

namespace {

// "240 us", "1.4 ms": a round is far shorter than formatNs's smallest unit.
std::string roundText(std::chrono::nanoseconds round) {
  if (round < std::chrono::milliseconds(1)) {
    return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(round).count()) +
           " us";
  }
  return formatNs(round.count());
}

}  // namespace

Scenario withDeviceMemoryFaults(Scenario scenario) {
  const std::size_t table = static_cast<std::size_t>(scenario.ranks) * sizeof(std::int64_t);
  for (const auto& [rank, bytes] : scenario.deviceMemory) {
    if (rank < 0 || rank >= scenario.ranks) continue;
    Fault fault;
    if (scenario.bufferBytes > bytes) {
      fault.site = FaultSite::kAlloc;
    } else if (scenario.bufferBytes + table > bytes) {
      fault.site = FaultSite::kAllocTable;
    } else {
      continue;
    }
    fault.ranks = {rank};
    fault.error = faults::defaultError(fault.site);  // hipErrorOutOfMemory, as the runtime says
    // Once only (a derivation may be handed a scenario this already filled in): the implied
    // fault is the one without a source line.
    const bool present =
        std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const Fault& f) {
          return f.mark.line == 0 && f.site == fault.site && f.ranks == fault.ranks &&
                 f.error == fault.error;
        });
    if (!present) scenario.faults.push_back(fault);
  }
  return scenario;
}

std::string boundsText(const Scenario& scenario) {
  const std::string run = formatNs(std::chrono::nanoseconds(plannedBound(scenario)).count());
  std::string text = "the run within " + run +
                     (scenario.expect.within ? " (expect.within, on either clock)"
                                             : " (2 x deadline + delays + 2 s)");
  if (scenario.expect.outcome != Outcome::kRaise) return text;
  if (auto round = togetherBound(scenario)) {
    return text + "; on simulated time every rank raises within one agreement round (" +
           roundText(*round) + ": " + std::to_string(scenario.ranks) +
           (scenario.ranks == 1 ? " rank x " : " ranks x ") +
           std::to_string(handshakeCalls(scenario.ranks)) + " calls x " +
           std::to_string(kPointsPerCall) + " call points x 1 us) of the last fault that fired";
  }
  if (scenario.expect.within) return text;
  return text + "; no agreement-round bound: " + *legitimateWait(scenario);
}

}  // namespace peerconf::harness::model
