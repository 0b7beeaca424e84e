// Helpers every checker shares: starting a verdict, finding a rank's result, reading the
// scenario's faults and expectations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "run_record.h"
#include "scenario.h"
#include "verdict.h"

namespace peerconf::harness::checkers {

// A verdict for `property` on `record`: reproduce command and expectedViolation filled in,
// status kPass until a checker says otherwise.
Verdict startVerdict(Property property, const RunRecord& record);

// True when the scenario lists `property` among the checks that must fail ("C6", "c6", or the
// full name "C6 no unread data overwritten").
bool expectsViolation(const Scenario& scenario, Property property);

// The ranks a run is about: the scenario's rank count, or more if more results came back.
int rankCount(const RunRecord& record);

// The result of `rank` (looked up by RankResult::rank, not by position), or nullptr.
const RankResult* findRank(const RunRecord& record, int rank);

// True when the scenario expects `rank` to die or hang (Expectation::reported).
bool expectedReported(const Scenario& scenario, int rank);

// What the ranks not expected to be reported must end as: kOk for expect.outcome success; kRaised
// for raise; for reported, kRaised, except when every planted death/hang is at close() (after
// the constructor returned everywhere) and no message expectation covers a survivor: then kOk.
RankStatus expectedSurvivorStatus(const Scenario& scenario);

// True when the scenario plants a fault at `site` on `rank`; when `peer` is given, a fault
// naming another peer does not count (a fault with no peer covers every peer).
bool faultPlanted(const Scenario& scenario, FaultSite site, int rank,
                  std::optional<int> peer = std::nullopt);

// "raised HandshakeError: peer memory handshake failed on this TP rank", "ok", "hung", ...
std::string describeResult(const RankResult& result);

// "success", "raise", "reported" (kept here so checkers do not depend on the scenario parser).
std::string outcomeName(Outcome outcome);

// A duration for people: "12 ms", "3.4 ms", "1.25 s".
std::string formatNs(std::int64_t ns);

// Hex form of a device pointer ("0x7f00").
std::string hexPtr(std::uint64_t ptr);

}  // namespace peerconf::harness::checkers
