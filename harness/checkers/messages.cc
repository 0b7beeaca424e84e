// C2: each rank's error says where the handshake failed and keeps the backend's own error.
#include "messages.h"

#include <string>
#include <vector>

#include "support.h"

namespace peerconf::harness::checkers {

namespace {

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string describeExpectation(const MessageExpectation& expectation) {
  switch (expectation.kind) {
    case MessageKind::kThis:
      return "HandshakeError " + quoted(kThisRankMessage) + " with its cause";
    case MessageKind::kAnother:
      return "HandshakeError " + quoted(kAnotherRankMessage);
    case MessageKind::kGroup:
      return "GroupTimeout or GroupError";
    case MessageKind::kText:
      return "an error containing " + quoted(expectation.text);
  }
  return "?";
}

// What is wrong with `result` against `expectation`; empty when it matches.
std::vector<std::string> problems(const RankResult& result, const MessageExpectation& expectation) {
  std::vector<std::string> found;
  const std::string got = "got " + describeResult(result);
  if (result.status != RankStatus::kRaised) {
    found.push_back("expected " + describeExpectation(expectation) + ", but " + got);
    return found;
  }
  auto handshake = [&](bool thisRank, std::string_view message) {
    if (result.errorType != "HandshakeError") {
      found.push_back("expected HandshakeError, " + got);
      return;
    }
    if (result.thisRank != thisRank) {
      found.push_back(std::string("expected thisRank=") + (thisRank ? "true" : "false") +
                      ", got thisRank=" + (result.thisRank ? "true" : "false"));
    }
    if (result.message != message) {
      found.push_back("expected message " + quoted(message) + ", got " + quoted(result.message));
    }
  };
  switch (expectation.kind) {
    case MessageKind::kThis:
      handshake(true, kThisRankMessage);
      if (result.errorType == "HandshakeError" && result.cause.empty()) {
        found.push_back("the failing rank lost its backend error: no cause attached");
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
    case MessageKind::kText:
      if (result.message.find(expectation.text) == std::string::npos) {
        found.push_back("expected a message containing " + quoted(expectation.text) + ", " + got);
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
    const std::vector<std::string> found = problems(*result, *expectation);
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
