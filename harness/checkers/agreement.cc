// C5: replays the MIN all-reduce from every rank's events.
#include "checkers/agreement.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::Outcome;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Verdict;

namespace {

constexpr std::string_view kMethod = "allReduceMin";

struct Call {
  std::optional<int> in;
  std::optional<int> out;
  bool ended = false;  // returned or threw
  bool threw = false;
  bool inAgreePhase = false;
  int construction = 0;  // how many "construct" phases had begun on the rank at this call
  std::string inDetail, outDetail;
};

// The integer after `key` ("in=", "out=") in `detail`.
std::optional<int> parseValue(std::string_view detail, std::string_view key) {
  std::size_t at = detail.find(key);
  while (at != std::string_view::npos && at > 0 && detail[at - 1] != ' ' && detail[at - 1] != ',') {
    at = detail.find(key, at + 1);
  }
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view digits = detail.substr(at + key.size());
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end == digits.data()) return std::nullopt;
  return value;
}

std::vector<Call> callsOf(const RankResult& result) {
  std::vector<Call> calls;
  int agreeDepth = 0;
  int construction = 0;
  for (const Event& event : result.events) {
    if (event.what == "construct" && event.kind == EventKind::kPhaseBegin) ++construction;
    if (event.what == "agree") {
      if (event.kind == EventKind::kPhaseBegin) ++agreeDepth;
      if (event.kind == EventKind::kPhaseEnd && agreeDepth > 0) --agreeDepth;
      continue;
    }
    if (event.what != kMethod) continue;
    if (event.kind == EventKind::kCall) {
      Call call;
      call.in = parseValue(event.detail, "in=");
      call.inDetail = event.detail;
      call.inAgreePhase = agreeDepth > 0;
      call.construction = construction;
      calls.push_back(std::move(call));
    } else if ((event.kind == EventKind::kReturn || event.kind == EventKind::kThrow) &&
               !calls.empty() && !calls.back().ended) {
      Call& call = calls.back();
      call.ended = true;
      call.threw = event.kind == EventKind::kThrow;
      if (!call.threw) {
        call.out = parseValue(event.detail, "out=");
        call.outDetail = event.detail;
      }
    }
  }
  return calls;
}

std::string show(const std::optional<int>& value) {
  return value ? std::to_string(*value) : std::string("?");
}

// The runner's own agreement before the constructor (rank_runner, "ready" phase): at most one
// "tpAgree" call a rank, recorded like allReduceMin ("in=<v>", "out=<v>").
std::optional<Call> runnerCall(const RankResult& result) {
  for (std::size_t i = 0; i < result.events.size(); ++i) {
    const Event& event = result.events[i];
    if (event.what != "tpAgree" || event.kind != EventKind::kCall) continue;
    Call call;
    call.in = parseValue(event.detail, "in=");
    call.inDetail = event.detail;
    for (std::size_t j = i + 1; j < result.events.size(); ++j) {
      const Event& end = result.events[j];
      if (end.what != "tpAgree") continue;
      if (end.kind == EventKind::kReturn || end.kind == EventKind::kThrow) {
        call.ended = true;
        call.threw = end.kind == EventKind::kThrow;
        if (!call.threw) {
          call.out = parseValue(end.detail, "out=");
          call.outDetail = end.detail;
        }
        break;
      }
    }
    return call;
  }
  return std::nullopt;
}

bool constructed(const RankResult& result) {
  return std::any_of(result.events.begin(), result.events.end(), [](const Event& e) {
    return e.kind == EventKind::kPhaseBegin && e.what == "construct";
  });
}

// C5 on the runner's agreement: the MIN all-reduce replayed, no rank constructing unless it saw
// every rank ready, and each NotReady error matching what its rank passed and saw. Returns how
// many ranks called it; adds findings through `add`.
template <typename Add>
int checkRunnerAgreement(const RunRecord& record, int ranks, Add&& add) {
  std::vector<std::optional<Call>> calls(static_cast<std::size_t>(ranks));
  std::optional<int> minimum;
  bool inputsKnown = true;
  int called = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const RankResult* result = findRank(record, rank);
    if (result == nullptr) continue;
    calls[rank] = runnerCall(*result);
    if (!calls[rank]) continue;
    ++called;
    if (!calls[rank]->in) {
      inputsKnown = false;
      add(rank, "tpAgree call without a readable input (detail \"" + calls[rank]->inDetail +
                    "\", expected \"in=<v>\")");
      continue;
    }
    minimum = minimum ? std::min(*minimum, *calls[rank]->in) : *calls[rank]->in;
  }
  if (called == 0) return 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const RankResult* result = findRank(record, rank);
    if (result == nullptr) continue;
    const std::optional<Call>& call = calls[rank];
    const bool returned = call && call->ended && !call->threw;
    if (returned && inputsKnown && minimum && call->out != *minimum) {
      add(rank, "the runner's tpAgree returned out=" + show(call->out) +
                    ", but the minimum of the inputs is " + std::to_string(*minimum));
    }
    if (constructed(*result) && !(returned && call->out == 1)) {
      add(rank,
          call ? "constructed though the runner's agreement did not return out=1 (passed in=" +
                     show(call->in) +
                     ", saw out=" + (call->threw ? std::string("<threw>") : show(call->out)) + ")"
               : std::string("constructed without the runner's agreement (tpAgree), which "
                             "other ranks called"));
    }
    if (result->status == RankStatus::kRaised && result->errorType == "NotReady") {
      if (result->thisRank && !(call && call->in == 0)) {
        add(rank, "raised \"not ready\" on this TP rank, so it must have passed in=0 to tpAgree");
      } else if (!result->thisRank && !(call && call->in == 1 && call->out == 0)) {
        add(rank,
            "raised \"not ready\" on another TP rank, so it must have passed in=1 to tpAgree and "
            "seen out=0");
      }
    }
  }
  return called;
}

// Each rank's allReduceMin calls in order, and whether its events can tell if it called (a
// missing rank with no events cannot).
struct RankCalls {
  std::vector<std::vector<Call>> calls;
  std::vector<bool> known;
  std::size_t maxCalls = 0;
};

RankCalls rankCalls(const RunRecord& record, int ranks) {
  RankCalls out;
  out.calls.resize(static_cast<std::size_t>(ranks));
  out.known.assign(static_cast<std::size_t>(ranks), false);
  for (int rank = 0; rank < ranks; ++rank) {
    const RankResult* result = findRank(record, rank);
    if (result == nullptr) continue;
    out.known[rank] = result->status != RankStatus::kMissing || !result->events.empty();
    out.calls[rank] = callsOf(*result);
    out.maxCalls = std::max(out.maxCalls, out.calls[rank].size());
  }
  return out;
}

// No rank called the all-reduce: only the runner's agreement can be judged, and with several
// ranks a rank that returned a buffer skipped the agreement.
Verdict withoutAgreement(Verdict verdict, const RunRecord& record, int ranks, int runnerProblems,
                         int runnerCalls, const std::string& runnerNote) {
  if (runnerProblems > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(runnerProblems) +
                      " problem(s) with the runner's agreement before the constructor";
    return verdict;
  }
  // With several ranks, returning a buffer is only sound after the agreement: a rank that
  // returned without ever calling it skipped the agreement.
  if (ranks > 1) {
    for (int rank = 0; rank < ranks; ++rank) {
      const RankResult* result = findRank(record, rank);
      // A rank that constructed nothing (a buffer-count of 0) returned no buffer.
      if (result != nullptr && result->status == RankStatus::kOk &&
          constructionsBegun(*result) > 0) {
        verdict.findings.push_back(
            {rank, "returned a PeerBuffer but no rank ever called the agreement"});
      }
    }
  }
  if (!verdict.findings.empty()) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(verdict.findings.size()) + " of " + std::to_string(ranks) +
                      " ranks returned without agreeing";
    return verdict;
  }
  if (runnerCalls > 0) {
    verdict.summary = "no rank reached the handshake's agreement" + runnerNote;
    return verdict;
  }
  verdict.status = Verdict::Status::kNotApplicable;
  verdict.summary = "no rank reached the agreement";
  return verdict;
}

// The all-reduce itself, call by call: readable inputs and results, each result the minimum of
// every input, and no result while a rank never made that call.
template <typename Add>
void checkAllReduce(const RankCalls& ranksCalls, int ranks, Add&& add) {
  const auto& calls = ranksCalls.calls;
  const std::size_t maxCalls = ranksCalls.maxCalls;
  for (std::size_t k = 0; k < maxCalls; ++k) {
    const std::string which = maxCalls > 1 ? " (call " + std::to_string(k + 1) + ")" : "";
    std::optional<int> minimum;
    bool inputsKnown = true;
    std::vector<int> absent;
    for (int rank = 0; rank < ranks; ++rank) {
      if (k >= calls[rank].size()) {
        if (ranksCalls.known[rank]) absent.push_back(rank);
        continue;
      }
      const Call& call = calls[rank][k];
      if (!call.in) {
        inputsKnown = false;
        add(rank, "allReduceMin" + which + " call without a readable input (detail \"" +
                      call.inDetail + "\", expected \"in=<v>\")");
        continue;
      }
      minimum = minimum ? std::min(*minimum, *call.in) : *call.in;
    }
    for (int rank = 0; rank < ranks; ++rank) {
      if (k >= calls[rank].size()) continue;
      const Call& call = calls[rank][k];
      if (!call.ended || call.threw) continue;
      if (!call.out) {
        add(rank, "allReduceMin" + which + " returned without a readable result (detail \"" +
                      call.outDetail + "\", expected \"out=<v>\")");
        continue;
      }
      if (inputsKnown && minimum && *call.out != *minimum) {
        add(rank, "allReduceMin" + which + " returned out=" + std::to_string(*call.out) +
                      ", but the minimum of the inputs is " + std::to_string(*minimum));
      }
      for (int missing : absent) {
        add(rank, "allReduceMin" + which + " returned out=" + std::to_string(*call.out) +
                      " though rank " + std::to_string(missing) + " never made that call");
      }
    }
  }
}

// The handshake's agreement, against each rank's outcome; how many ranks reached it.
template <typename Add>
int checkAgreedOutcomes(const RunRecord& record, const RankCalls& ranksCalls, int ranks,
                        Add&& add) {
  const bool expectSuccess = record.scenario.expect.outcome == Outcome::kSuccess;
  auto agreementOf = [&](int rank) -> const Call* {
    const auto& mine = ranksCalls.calls[rank];
    // With several buffers (model/buffers.h) the outcome is the last construction's: only its
    // agreement is judged against it (the earlier ones succeeded, and the replay holds them).
    const RankResult* result = findRank(record, rank);
    const int last = result == nullptr ? 0 : constructionsBegun(*result);
    const Call* agreement = nullptr;
    for (const Call& call : mine) {
      if (call.inAgreePhase && call.construction == last) agreement = &call;
    }
    if (agreement == nullptr && !mine.empty() && mine.back().construction == last) {
      agreement = &mine.back();
    }
    return agreement;
  };
  // A rank that raised "this" without reaching the agreement sent a failure record in the
  // exchange: the others may have raised "another" from it there, without the agreement, while a
  // rank that could not read the record (entry-corrupt) went on to the agreement alone.
  bool failureRecordSent = false;
  for (int rank = 0; rank < ranks; ++rank) {
    const RankResult* result = findRank(record, rank);
    failureRecordSent =
        failureRecordSent ||
        (result != nullptr && result->status == RankStatus::kRaised &&
         result->errorType == "HandshakeError" && result->thisRank && agreementOf(rank) == nullptr);
  }
  int reached = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const RankResult* result = findRank(record, rank);
    const Call* agreement = agreementOf(rank);
    if (agreement != nullptr) ++reached;
    const std::string seen =
        agreement != nullptr
            ? " (passed in=" + show(agreement->in) + ", saw out=" +
                  (agreement->threw ? std::string("<threw>") : show(agreement->out)) + ")"
            : std::string(" (never reached the agreement)");
    const bool passedTrue = agreement != nullptr && agreement->in == 1;
    const bool sawTrue = agreement != nullptr && agreement->out == 1;
    const bool sawFalse = agreement != nullptr && agreement->out == 0;
    if (expectSuccess && ranks > 1 && !(passedTrue && sawTrue)) {
      add(rank, "the scenario expects success, so every rank passes in=1 and sees out=1" + seen);
      continue;
    }
    if (result == nullptr) continue;
    // A rank that returned constructed nothing (a buffer-count of 0): no buffer, no agreement.
    if (result->status == RankStatus::kOk && constructionsBegun(*result) == 0) continue;
    if (result->status == RankStatus::kOk && ranks > 1 && !(passedTrue && sawTrue)) {
      add(rank, "returned a PeerBuffer without agreeing on success" + seen);
    } else if (result->status == RankStatus::kOk && ranks > 1) {
      // It returned every buffer it constructed: each construction's agreement said yes (with
      // several buffers the last one's alone would let an earlier failed one pass).
      for (const Call& call : ranksCalls.calls[rank]) {
        if (!call.inAgreePhase || (call.in == 1 && call.out == 1)) continue;
        add(rank, "returned its buffer " + std::to_string(std::max(call.construction - 1, 0)) +
                      " though that construction's agreement did not say yes (passed in=" +
                      show(call.in) +
                      ", saw out=" + (call.threw ? std::string("<threw>") : show(call.out)) + ")");
      }
    } else if (result->status == RankStatus::kRaised && result->errorType == "HandshakeError") {
      if (!result->thisRank && agreement == nullptr && failureRecordSent) {
        continue;  // it read the failure record in the exchange
      }
      if (!result->thisRank && !(passedTrue && sawFalse)) {
        add(rank, "raised \"another\" TP rank, so it must have passed in=1 and seen out=0" + seen);
      } else if (result->thisRank && agreement != nullptr && agreement->in != 0) {
        add(rank, "raised \"this\" TP rank, so it must have passed in=0" + seen);
      }
    }
  }
  return reached;
}

}  // namespace

Verdict checkAgreement(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC5Agreement, record);
  const int ranks = rankCount(record);
  const RankCalls calls = rankCalls(record, ranks);
  // The runner's agreement before the constructor, judged on its own.
  int runnerProblems = 0;
  const int runnerCalls = checkRunnerAgreement(record, ranks, [&](int rank, std::string text) {
    ++runnerProblems;
    verdict.findings.push_back({rank, std::move(text)});
  });
  const std::string runnerNote = runnerCalls > 0 ? "; the runner's tpAgree consistent on " +
                                                       std::to_string(runnerCalls) + " rank(s)"
                                                 : std::string();
  if (calls.maxCalls == 0) {
    return withoutAgreement(std::move(verdict), record, ranks, runnerProblems, runnerCalls,
                            runnerNote);
  }

  int problems = runnerProblems;
  auto add = [&](int rank, std::string text) {
    ++problems;
    verdict.findings.push_back({rank, std::move(text)});
  };
  checkAllReduce(calls, ranks, add);
  const int reached = checkAgreedOutcomes(record, calls, ranks, add);

  if (problems > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(problems) + " agreement problem(s) over " +
                      std::to_string(reached) + " rank(s) that reached it" +
                      (runnerProblems > 0
                           ? " (" + std::to_string(runnerProblems) + " with the runner's agreement)"
                           : std::string());
  } else {
    verdict.summary =
        "MIN all-reduce consistent on " + std::to_string(reached) + " rank(s)" + runnerNote;
  }
  return verdict;
}

}  // namespace peerconf::harness::checkers
