// Console report: what a person watching a suite, or reading a CI log, needs.
#include "reports/console.h"

#include <unistd.h>

#include <iostream>
#include <string>

#include "judge/judgement.h"

namespace peerconf::harness::reports {

using judge::Failure;
using judge::formatDuration;
using judge::Judgement;
using judge::rankWord;
using judge::story;
using model::RunRecord;
using model::Verdict;

ConsoleReport::ConsoleReport(std::ostream& out, ConsoleOptions options)
    : out_(out), options_(options) {
  options_.progress = options_.progress || isTerminal(out_);
}

void ConsoleReport::onScenario(const RunRecord& record, const Judgement& judgement) {
  const std::size_t index = passed_ + failed_ + 1;
  (judgement.passed ? passed_ : failed_) += 1;

  if (options_.progress) {
    out_ << '[' << index;
    if (options_.total > 0) out_ << '/' << options_.total;
    out_ << "] ";
  }
  const int ranks =
      record.scenario.ranks > 0 ? record.scenario.ranks : static_cast<int>(record.ranks.size());
  // The run's duration is wall time; on simulated time the events' times (in the findings, C8's
  // bound) are virtual, and the line says so.
  out_ << (judgement.passed ? "PASS " : "FAIL ") << record.scenario.name << " (" << rankWord(ranks)
       << ", " << formatDuration(record.wallNs) << " wall"
       << (record.simulatedTime() ? ", clock sim: event times simulated" : "") << ")";
  if (!judgement.controls.empty()) {
    out_ << " [";
    const char* separator = "";
    for (const std::string& control : judgement.controls) {
      out_ << separator << control;
      separator = ", ";
    }
    out_ << " failed as expected]";
  }
  if (!judgement.drawn.empty()) out_ << " [as drawn: " << judgement.drawn << ']';
  if (!judgement.refusals.empty()) {
    out_ << " [the judge refused it as expected: ";
    const char* separator = "";
    for (const std::string& rule : judgement.refusals) {
      out_ << separator << rule;
      separator = ", ";
    }
    out_ << ']';
  }
  if (!judgement.passed) {
    out_ << ':';
    const char* separator = " ";
    for (const Failure& failure : judgement.failures) {
      out_ << separator << failure.title;
      separator = ", ";
    }
  }
  out_ << '\n';
  if (!judgement.passed) {
    out_ << story(record, judgement, "    ");
  } else if (options_.verbose) {
    for (const Verdict& verdict : judgement.verdicts) {
      out_ << "    " << toString(verdict.property) << ": "
           << (verdict.status == Verdict::Status::kPass   ? "pass"
               : verdict.status == Verdict::Status::kFail ? "fail (expected)"
                                                          : "n/a")
           << (verdict.summary.empty() ? "" : " — " + verdict.summary) << '\n';
    }
  }
  out_.flush();
}

void ConsoleReport::finish() {
  out_ << passed_ << " passed, " << failed_ << " failed\n";
  out_.flush();
}

bool isTerminal(const std::ostream& out) {
  if (&out == &std::cout) return ::isatty(STDOUT_FILENO) != 0;
  if (&out == &std::cerr || &out == &std::clog) return ::isatty(STDERR_FILENO) != 0;
  return false;
}

}  // namespace peerconf::harness::reports
