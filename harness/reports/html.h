// HTML report (--html FILE): one self-contained page for people (a reviewer opening a CI
// artifact): the summary (passed, failed, skipped, fault sites fired), then per scenario its
// verdicts with findings, the reproduce line with a copy button, and a swimlane picture (inline
// SVG, one lane per rank) of the run's events with faults, raises, timeouts and the verdict
// marked. No network: the stylesheet, the script and the pictures are all inline. Passing
// scenarios are collapsed, failing ones expanded (the first 20); a filter box narrows the list by
// name, path and status.
//
// The page honours (for links and headless screenshots): `#s-N` opens scenario N (1-based, in
// run order) and scrolls to it; `?status=fail|pass` and `?q=TEXT` preset the filter;
// `?open=all|fail|none` expands or collapses the scenarios. The script marks the body with
// data-load-ms (when the load event came, in ms since navigation: ci/bench/html_bench.sh reads
// it; the browser test checks it is there to know the script ran to its end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "judge/judgement.h"
#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::reports {

struct HtmlOptions {
  std::string title = "peerconf report";
  // Shown under the title when set: the command that made the report, when it was made.
  std::string command;
  std::string generated;
};

class HtmlReport {
 public:
  explicit HtmlReport(HtmlOptions options = {});

  // Adds one run with its judgement (judge::judgeRun's, like every other report's).
  void onScenario(const model::RunRecord& record, const judge::Judgement& judgement);
  // A scenario the suite did not run, and why ("written for --launcher mpi").
  void onSkipped(const std::string& name, const std::string& reason);
  // The list was interrupted (`line`: "interrupted after N of M scenarios (SIGINT)"): the summary
  // and the title say so.
  void onInterrupted(const std::string& line) { interrupted_ = line; }

  // The whole document.
  void write(std::ostream& out) const;
  // Writes to `path`; throws std::runtime_error naming the path when it cannot.
  void writeFile(const std::string& path) const;

  std::size_t passed() const noexcept { return passed_; }
  std::size_t failed() const noexcept { return failed_; }
  std::size_t skipped() const noexcept { return skipped_.size(); }

 private:
  HtmlOptions options_;
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
  std::int64_t wallNs_ = 0;
  std::vector<std::pair<std::string, std::string>> skipped_;  // name, reason
  std::map<std::string, std::size_t> sites_;                  // fault site -> runs it fired in
  // Failing runs for the summary's list: element id, name.
  std::vector<std::pair<std::string, std::string>> failures_;
  std::string body_;         // the scenarios' <details> elements, in run order
  std::string interrupted_;  // onInterrupted's line, or empty
};

// Escapes `text` for HTML element content and quoted attribute values: & < > " ' as entities;
// invalid UTF-8 and control characters other than tab, LF and CR as U+FFFD.
std::string htmlEscape(std::string_view text);

// The swimlane picture of one run: an inline <svg> element (time on x, one lane per rank).
// `verdict` labels the line drawn at the run's end ("PASS", "FAIL: C3 cleanup"); `failed`
// colours it.
std::string swimlaneSvg(const model::RunRecord& record, const std::string& verdict, bool failed);

// The swimlane axis's tick step for an axis of `endNs`: 1, 2 or 5 times a power of ten, at most
// four steps to the end; and a tick's label, with the decimals of `step`, so that the labels of
// one axis all differ ("0.05 ms", "0.10 ms", ...; "0 s", "2 s" from a step of a second up).
std::int64_t tickStep(std::int64_t endNs);
std::string tickLabel(std::int64_t ns, std::int64_t step);

}  // namespace peerconf::harness::reports
