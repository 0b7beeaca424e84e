// Console report: one line per scenario, failures told rank by rank, a final "N passed, M
// failed" line.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include "judge/judgement.h"
#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::reports {

struct ConsoleOptions {
  // Prefix each scenario line with "[i/total]" (total 0: "[i]"). On whenever the stream is a
  // terminal (isTerminal); this asks for it elsewhere too (--progress, CI logs).
  bool progress = false;
  std::size_t total = 0;
  // Also print the story of passing scenarios (every rank's status and verdict summary).
  bool verbose = false;
};

class ConsoleReport {
 public:
  explicit ConsoleReport(std::ostream& out, ConsoleOptions options = {});

  // "PASS name (4 ranks, 12 ms)" or "FAIL name (4 ranks, 12 ms): C3 cleanup, C1 uniform outcome";
  // a run on simulated time says ", clock sim" after its (real) duration.
  // followed by the story; flushed so long runs show progress. `judgement`: the run's
  // (judge::judgeRun).
  void onScenario(const model::RunRecord& record, const judge::Judgement& judgement);
  // Writes "N passed, M failed" alone on its line.
  void finish();

  std::size_t passed() const noexcept { return passed_; }
  std::size_t failed() const noexcept { return failed_; }

 private:
  std::ostream& out_;
  ConsoleOptions options_;
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
};

// True when `out` is std::cout or std::cerr/std::clog and that descriptor is a terminal.
bool isTerminal(const std::ostream& out);

}  // namespace peerconf::harness::reports
