// Synthetic run records for tests of checkers and reports: consistent, clean runs (every
// built-in checker passes) that a test then breaks in one place. Not linked into the harness.
#pragma once

#include <string>
#include <string_view>

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers::testing {

// Every rank returns a PeerBuffer, then closes it (and closes it twice). Ledger and seam events
// (with "ptr=" details) on every rank; expect success.
model::RunRecord successRun(int ranks = 4);

// openMemHandle on `failingRank` for `peer` fails (error 1, planted fault); every rank raises:
// "this" on failingRank with its cause, "another" elsewhere; every rank releases what it held.
model::RunRecord openFailureRun(int ranks = 4, int failingRank = 2, int peer = 0);

// `hungRank` hangs entering the agreement; every other rank times out there (GroupTimeout) and
// releases; expect reported = {hungRank}, others kGroup, deadline 1 s, no expect.within.
model::RunRecord hangRun(int ranks = 4, int hungRank = 1);

// Drops ledgers (ledgerAvailable = false), as on real GPUs: C3 then reads the seam events.
model::RunRecord withoutLedgers(model::RunRecord record);

// True when `verdict` has a finding about `rank` whose text contains `text`.
bool hasFinding(const model::Verdict& verdict, int rank, std::string_view text = {});

// The verdict as text (status, summary, findings), for assertion messages.
std::string dump(const model::Verdict& verdict);

}  // namespace peerconf::harness::checkers::testing
