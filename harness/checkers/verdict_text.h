// How a data-plane analysis becomes a verdict (summary and findings), shared by C6 and C7.
#pragma once

#include <string>

#include "checkers/history.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// The verdict's findings show at most this many problems (half in-band, half from the
// history), then how many more there were.
inline constexpr std::size_t kMaxVerdictFindings = 40;

// Sets status, summary and findings of `verdict` (already started by the checker) from
// `analysis`: not applicable when no data plane ran; failing with every problem (in-band ones
// marked so) otherwise. `problem` names one problem ("overwrite"), `events` what was replayed
// ("pushes").
void fillVerdict(const Analysis& analysis, const std::string& problem, const std::string& events,
                 model::Verdict& verdict);

}  // namespace peerconf::harness::checkers
