// C2: each rank's error says where the handshake failed and keeps the backend's own error.
#include "checkers/messages.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::LedgerRecord;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;

namespace {

std::string inQuotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string describeExpectation(const MessageExpectation& expectation) {
  switch (expectation.kind) {
    case MessageKind::kThis:
      return "HandshakeError " + inQuotes(kThisRankMessage) + " with its cause";
    case MessageKind::kAnother:
      return "HandshakeError " + inQuotes(kAnotherRankMessage);
    case MessageKind::kGroup:
      return "GroupTimeout or GroupError";
    case MessageKind::kOk:
      return "no error (it returns every buffer it constructed)";
    case MessageKind::kText:
      return "an error containing " + inQuotes(expectation.text);
  }
  return "?";
}

// The chained cause as the rank recorded it: "open (peer 0) with hipErrorInvalidValue (1)".
std::string describeCause(const RankResult& result) {
  if (result.causeOp.empty())
    return "a cause that is no peerconf::Error (\"" + result.cause + "\")";
  std::string text = result.causeOp;
  if (result.causePeer >= 0) text += " (peer " + std::to_string(result.causePeer) + ")";
  return text + " with " + codeText(result.causeCode);
}

// The mocked runtime's ledger entry of a refused open: which allocation its handle named.
std::string describeRefusedOpen(const LedgerRecord& open) {
  if (open.ownerDevice < 0 && open.generation == 0) {
    return "a handle it could not decode (garbage: no allocation named)";
  }
  return "allocation " + std::to_string(open.generation) + " of device " +
         std::to_string(open.ownerDevice);
}

// A stale handle names an earlier allocation of the peer that the peer freed. The mocked runtime
// decodes every handle it is given, and its ledger keeps, for a refused open too, the owner
// device and allocation the handle named: on this rank's ledger, an open refused for an
// allocation that the peer's own ledger shows freed is the stale handle reaching the runtime. A
// handle that is garbage (bytes from elsewhere) names none, though the runtime answers it with
// the same code (hipErrorInvalidValue) and the same rank fails for the same peer. (The peer frees
// its live buffer too once the handshake failed: this tells a stale handle from garbage, not from
// the live one, whose open the runtime does not refuse.) Real GPUs keep no ledger, and their
// handles do not say what they name: no claim there (ledgerAvailable).
// Empty when it holds or cannot be judged; else what the refused opens named instead.
std::string staleHandleProblem(const RunRecord& record, const RankResult& result, int peer) {
  const RankResult* owner = findRank(record, peer);
  if (!result.ledgerAvailable || owner == nullptr || !owner->ledgerAvailable) return {};
  auto freedByPeer = [&](const LedgerRecord& open) {
    return std::any_of(owner->ledger.begin(), owner->ledger.end(), [&](const LedgerRecord& e) {
      return e.op == "free" && e.error == 0 && e.generation == open.generation &&
             e.ownerDevice == open.ownerDevice;
    });
  };
  std::string refused;
  for (const LedgerRecord& e : result.ledger) {
    if (e.op != "open" || e.error == 0) continue;
    if (freedByPeer(e)) return {};
    refused +=
        (refused.empty() ? "" : ", ") + describeRefusedOpen(e) + " (" + codeText(e.error) + ")";
  }
  return refused.empty() ? "the runtime refused no open on this rank" : "it refused " + refused;
}

// On a "this" rank: the chained cause is the planted failure that fired on this rank in the
// constructor. A runtime fault (open, alloc, ...: the first that fired, since the core stops at
// its first failure) must be the cause's operation, peer and code; a handle fault (corrupt,
// stale) fails whatever the runtime answers, so only its operation (open) and peer are checked,
// and for a stale handle, where the mocked runtime's ledger shows it, that the refused open named
// an allocation the peer freed (staleHandleProblem).
void causeProblems(const RunRecord& record, const RankResult& result,
                   std::vector<std::string>& found) {
  const Scenario& scenario = record.scenario;
  const FiredFault* runtime = nullptr;
  std::vector<const FiredFault*> handles;
  bool unknown = false;  // a site this checker cannot map to an operation
  const std::vector<FiredFault> fired = firedFaults(scenario, result);
  for (const FiredFault& f : fired) {
    if (f.phase != "construct") continue;
    if (f.site == "handle-corrupt" || f.site == "handle-stale") {
      handles.push_back(&f);
    } else if (f.site == "close" || f.site == "free" || f.site == "delay" || f.site == "death" ||
               f.site == "hang" || f.site == "group-fail") {
      continue;  // fails no call of the open phase
    } else if (faultOp(f.site).empty()) {
      unknown = true;
    } else if (runtime == nullptr) {
      runtime = &f;
    }
  }
  const std::string got = "the chained cause is " + describeCause(result);
  if (runtime != nullptr) {
    const std::string op = faultOp(runtime->site);
    const bool peerOk = runtime->peer < 0 || result.causePeer == runtime->peer;
    const bool codeOk = runtime->error == 0 || result.causeCode == runtime->error;
    if (result.causeOp != op || !peerOk || !codeOk) {
      found.push_back(got + ", not the planted failure: the " + runtime->site + " fault fired" +
                      (runtime->peer >= 0 ? " for peer " + std::to_string(runtime->peer) : "") +
                      " with " + codeText(runtime->error) + ", so the cause must be " + op +
                      (runtime->peer >= 0 ? " (peer " + std::to_string(runtime->peer) + ")" : "") +
                      " with that code");
    }
    return;
  }
  // A fault fired that this checker cannot judge: no claim either way. So too beside a handle
  // fault: a foreign exception at the open of that peer is thrown before the runtime refuses the
  // damaged handle, and the cause is the exception (found by explain_run_property_test.cc).
  if (unknown) return;
  if (!handles.empty()) {
    std::string notStale;  // the open of a stale handle's peer, refused for another handle
    for (const FiredFault* h : handles) {
      if (result.causeOp != "open" || result.causePeer != h->peer) continue;
      if (h->site != "handle-stale") return;
      const std::string stale = staleHandleProblem(record, result, h->peer);
      if (stale.empty()) return;
      notStale = got + ", not the planted failure: the handle-stale fault for peer " +
                 std::to_string(h->peer) + " fired, but no open this rank's runtime refused " +
                 "named an allocation peer " + std::to_string(h->peer) +
                 " freed (the mocked runtime's ledger: " + stale + ")";
    }
    if (!notStale.empty()) {
      found.push_back(notStale);
      return;
    }
    std::string peers;
    for (const FiredFault* h : handles) {
      peers += (peers.empty() ? "" : ", ") + h->site + " for peer " + std::to_string(h->peer);
    }
    found.push_back(got + ", not the planted failure (" + peers +
                    "): the cause must be the open of that peer");
    return;
  }
  // device_memory: the runtime's own out-of-memory answer to an allocation (the buffer's or the
  // address table's) on a device the scenario made too small for it (the fault it acts as:
  // model::withDeviceMemoryFaults). Which allocation is the oracle's.
  if (result.causeOp == "alloc") {
    const Scenario implied = model::withDeviceMemoryFaults(scenario);
    const bool tooSmall =
        std::any_of(implied.faults.begin() + static_cast<std::ptrdiff_t>(scenario.faults.size()),
                    implied.faults.end(), [&](const model::Fault& f) {
                      return f.appliesTo(result.rank) && f.error == result.causeCode;
                    });
    if (tooSmall) return;
  }
  found.push_back(got + ", but no fault fired on this rank in the constructor to explain it");
}

// A survivor of a data-plane stop against `expectation` ({text}: a fragment of its data plane's
// detail, which names the rank and slot it waited for).
// With a data plane per buffer, the data plane of the buffer the stops are aimed at.
void dataPlaneProblems(const Scenario& scenario, const RankResult& result,
                       const MessageExpectation& expectation, std::vector<std::string>& found) {
  const std::size_t buffer = model::dataPlaneStopBuffer(scenario);
  const model::Result* ran = model::dataPlaneOfBuffer(result, buffer);
  const std::string its = model::dataPlanePerBuffer(scenario)
                              ? "buffer " + std::to_string(buffer) + "'s data plane"
                              : "its data plane";
  if (ran == nullptr) {
    found.push_back("expected " + its + " to report the stopped rank (" +
                    describeExpectation(expectation) + "), but it ran no data plane there");
    return;
  }
  const model::Result& dp = *ran;
  const std::string got = its + " " + toString(dp.outcome) +
                          (dp.detail.empty() ? std::string() : ": " + inQuotes(dp.detail));
  if (dp.outcome != model::DataplaneOutcome::kTimeout &&
      dp.outcome != model::DataplaneOutcome::kAborted) {
    found.push_back("expected " + its +
                    " to end reporting the stopped rank (a timeout or an abort), but " + got);
    return;
  }
  if (expectation.kind != MessageKind::kText) {
    found.push_back("expected " + describeExpectation(expectation) +
                    ", which a data plane's report never is; " + got);
  } else if (dp.detail.find(expectation.text) == std::string::npos) {
    found.push_back("expected " + its + "'s report to contain " + inQuotes(expectation.text) +
                    ", but " + got);
  }
}

// What is wrong with `result` against `expectation`; empty when it matches.
std::vector<std::string> problems(const RunRecord& record, const RankResult& result,
                                  const MessageExpectation& expectation) {
  const Scenario& scenario = record.scenario;
  std::vector<std::string> found;
  const std::string got = "got " + describeResult(result);
  if (model::stopsOnlyInDataPlane(scenario) && result.status == RankStatus::kOk) {
    // A survivor of a data-plane stop: its handshake returned, what it reports is its data
    // plane's end (a timeout, or the abort of a peer that timed out), never a completed run.
    dataPlaneProblems(scenario, result, expectation, found);
    return found;
  }
  if (expectation.kind == MessageKind::kOk) {
    if (result.status != RankStatus::kOk) {
      found.push_back("expected " + describeExpectation(expectation) + ", but " + got);
    }
    return found;
  }
  if (result.status != RankStatus::kRaised) {
    found.push_back("expected " + describeExpectation(expectation) + ", but " + got);
    return found;
  }
  auto handshake = [&](bool thisRank, std::string_view message) {
    if (result.errorType != "HandshakeError") {
      found.push_back("expected HandshakeError, " + got);
      return;
    }
    // One finding for a wrong flag, naming what the rank should have raised and what it did (the
    // message is then part of it); the message alone otherwise.
    if (result.thisRank != thisRank) {
      found.push_back("expected to raise " + inQuotes(message) + " (thisRank=" +
                      (thisRank ? "true: its own failure" : "false: another rank's failure") +
                      "), but it raised " + inQuotes(result.message) +
                      " with thisRank=" + (result.thisRank ? "true" : "false"));
    } else if (result.message != message) {
      found.push_back("expected message " + inQuotes(message) + ", got " +
                      inQuotes(result.message));
    }
  };
  switch (expectation.kind) {
    case MessageKind::kThis:
      handshake(true, kThisRankMessage);
      if (result.errorType == "HandshakeError" && result.cause.empty()) {
        found.push_back("the failing rank lost its backend error: no cause attached");
      } else if (result.errorType == "HandshakeError" && result.thisRank) {
        causeProblems(record, result, found);
      }
      break;
    case MessageKind::kAnother:
      handshake(false, kAnotherRankMessage);
      break;
    case MessageKind::kGroup:
      if (result.errorType != "GroupTimeout" && result.errorType != "GroupError") {
        found.push_back("expected GroupTimeout or GroupError, " + got);
      }
      break;
    case MessageKind::kOk:
      break;  // above
    case MessageKind::kText:
      if (result.message.find(expectation.text) == std::string::npos) {
        found.push_back("expected a message containing " + inQuotes(expectation.text) + ", " + got);
      }
      break;
  }
  return found;
}

}  // namespace

Verdict checkMessages(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC2Message, record);
  const Scenario& scenario = record.scenario;
  if (scenario.expect.outcome == Outcome::kSuccess) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "the scenario expects success: no messages to check";
    return verdict;
  }

  int checked = 0, wrong = 0;
  for (int rank = 0; rank < rankCount(record); ++rank) {
    if (expectedReported(scenario, rank)) continue;
    const MessageExpectation* expectation = nullptr;
    if (auto it = scenario.expect.messages.find(rank); it != scenario.expect.messages.end()) {
      expectation = &it->second;
    } else if (scenario.expect.others) {
      expectation = &*scenario.expect.others;
    }
    if (expectation == nullptr) continue;
    ++checked;
    const RankResult* result = findRank(record, rank);
    if (result == nullptr) {
      ++wrong;
      verdict.findings.push_back(
          {rank, "expected " + describeExpectation(*expectation) + ", but no result came back"});
      continue;
    }
    const std::vector<std::string> found = problems(record, *result, *expectation);
    if (!found.empty()) ++wrong;
    for (const std::string& text : found) verdict.findings.push_back({rank, text});
  }

  if (checked == 0) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "the scenario expects no message of any rank";
  } else if (wrong > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary =
        std::to_string(wrong) + " of " + std::to_string(checked) + " ranks raised the wrong error";
  } else {
    verdict.summary =
        "every one of " + std::to_string(checked) + " ranks raised the expected error";
  }
  return verdict;
}

}  // namespace peerconf::harness::checkers
