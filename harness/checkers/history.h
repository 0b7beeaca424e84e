// The replay of the data plane's event histories (and the in-band findings) that the C6 and C7
// checkers report: every rank's Result of one run, indexed, checked against the protocol's rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/run_record.h"

namespace peerconf::harness::checkers {

// One problem, about one rank (the writer for a push, the reader for a read).
struct Problem {
  int rank = -1;
  std::string text;
  bool inBand = false;  // seen by the reader during the run (else: found by the replay)
};

struct Analysis {
  bool asked = false;                // the scenario has a data plane (or some rank reports one)
  bool ran = false;                  // some rank ran the data plane
  std::vector<Problem> notRun;       // asked: each rank that did not run it, and why
  std::vector<Problem> problems;     // in-band first, then the replay's, in rank order
  std::uint64_t inBand = 0;          // problems seen in-band (exact, findings are capped)
  std::uint64_t replayed = 0;        // problems the replay found
  std::uint64_t pairsChecked = 0;    // pairs the readers checked in-band
  std::uint64_t eventsReplayed = 0;  // pushes (C6) or reads (C7) the replay checked
  std::uint64_t historySteps = 0;    // steps every rank's history covers
  std::vector<std::string> notes;    // why parts could not be replayed
};

// A result whose steps actually ran (not skipped, not an error before the first step).
bool ran(const model::Result& result);

// C6: what readers saw in-band (a slot overwritten before or while it was read), then the replay,
// from the recorded history alone (whatever layout ran): every push into a slot that held this
// run's earlier pair of the same writer is ordered after the reader released that pair (read it,
// or saw it overwritten) by what the writer saw first: (1) the acknowledgement the push waited
// for, written by the reader after the release (one it never wrote, or wrote before, is a
// finding), or, where the push waited for none, (2) a pair the reader pushed after the release
// and the writer read before the push;
// (3) no rank zeroed a pair of this run it had not read.
Analysis analyzeOverwrites(const model::RunRecord& record);

// C7: what readers saw in-band (a tag or payload that is not the step's), then the replay: every
// pair a reader took (4) carries exactly the tag its layout expected for the step (recorded with
// the read), (5) was pushed by its source for that step with that tag, and (6) was taken after its
// source stored its tag and its whole payload (ranks on one host; kClockToleranceNs of slack).
Analysis analyzeStale(const model::RunRecord& record);

inline constexpr std::int64_t kClockToleranceNs = 50000;

}  // namespace peerconf::harness::checkers
