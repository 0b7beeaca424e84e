// JUnit XML report (--junit FILE): one <testsuite name="peerconf">, one <testcase> per scenario,
// a <failure> telling the failing properties rank by rank. Valid for Jenkins-style JUnit schemas.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "judge/judgement.h"
#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::reports {

class JUnitReport {
 public:
  // Records one scenario: classname "peerconf.<dir of the scenario file>", name = scenario name,
  // time = the run's wall time in seconds.
  // `judgement`: the run's (judge::judgeRun).
  void onScenario(const model::RunRecord& record, const judge::Judgement& judgement);

  // The list was interrupted (`line`: "interrupted after N of M scenarios (SIGINT)"): the document
  // ends with a test case "interrupted" in error with that message, so that a run cut short never
  // reads as a complete one.
  void onInterrupted(std::string line) { interrupted_ = std::move(line); }

  // The whole document (XML declaration, UTF-8).
  void write(std::ostream& out) const;
  // Writes to `path`; throws std::runtime_error naming the path when it cannot.
  void writeFile(const std::string& path) const;

  std::size_t tests() const noexcept { return cases_.size(); }
  std::size_t failures() const noexcept;

 private:
  struct Case {
    std::string classname;
    std::string name;
    std::int64_t wallNs = 0;
    bool failed = false;
    std::string failureType;     // "C3 cleanup" (the first failing property)
    std::string failureMessage;  // "C3 cleanup: 1 of 4 ...; C1 uniform outcome: ..."
    std::string story;           // the per-rank account
    std::string systemOut;       // every verdict, one line each
  };
  std::vector<Case> cases_;
  std::string interrupted_;
};

// "peerconf.<dir>" for a scenario file: the name of the folder holding it ("handshake" for
// scenarios/handshake/open.yaml), dots replaced so report viewers do not split it; "peerconf"
// when the file has no folder.
std::string junitClassname(const std::string& scenarioFile);

// XML-escapes `text` for element content or attribute values: & < > " ' as entities, tab/LF/CR
// as character references in attributes, other characters XML 1.0 forbids (control bytes,
// U+FFFE, U+FFFF) and invalid UTF-8 replaced by U+FFFD.
std::string xmlEscape(std::string_view text, bool attribute);

}  // namespace peerconf::harness::reports
