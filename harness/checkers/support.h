// Helpers every checker shares: starting a verdict, finding a rank's result, reading the
// scenario's faults and expectations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/run_record.h"
#include "model/scenario.h"
#include "model/text.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// A verdict for `property` on `record`: reproduce command and expectedViolation filled in,
// status kPass until a checker says otherwise.
model::Verdict startVerdict(model::Property property, const model::RunRecord& record);

// True when the scenario lists `property` among the checks that must fail ("C6", "c6", or the
// full name "C6 no unread data overwritten").
bool expectsViolation(const model::Scenario& scenario, model::Property property);
// Whether the scenario lets `property` fail, with its named finding, or pass (`appear: may`).
bool mayViolate(const model::Scenario& scenario, model::Property property);

// With a data plane per buffer (model::dataPlanePerBuffer), the buffers whose data planes the
// checkers judge one by one, from buffer 0: those whose data planes run (model::dataPlanesRun: all
// of them, or one at a time the rounds before a construction that fails); else 1 (the one data
// plane).
std::size_t dataPlaneBuffers(const model::Scenario& scenario);
// The run as buffer `buffer`'s data plane saw it, to judge it as a one-buffer data plane: the
// scenario's `dataplane:` that buffer's (model::dataPlaneScenarioOf), each rank's dataPlane its
// data plane of that buffer (none where it ran none), no laterDataPlanes.
model::RunRecord dataPlaneView(const model::RunRecord& record, std::size_t buffer);
// "buffer 1: " before what a checker finds in a buffer's data plane when there are several;
// "" with one.
std::string bufferPrefix(const model::Scenario& scenario, std::size_t buffer);

// The ranks a run is about: the scenario's rank count, or more if more results came back.
int rankCount(const model::RunRecord& record);

// The result of `rank` (looked up by RankResult::rank, not by position), or nullptr.
const model::RankResult* findRank(const model::RunRecord& record, int rank);

// True when the scenario expects `rank` to die or hang (Expectation::reported).
bool expectedReported(const model::Scenario& scenario, int rank);

// Whether `rank` is expected to raise nothing under `outcome: raise` (message `ok`, its own or
// `others`): it returns every buffer it constructed (a buffer-count fault's returning rank).
bool expectedOk(const model::Scenario& scenario, int rank);

// How many "construct" phases the rank began (one a buffer it constructed or tried to).
int constructionsBegun(const model::RankResult& result);

// What the ranks not expected to be reported must end as: kOk for expect.outcome success; kRaised
// for raise; for reported, kRaised, except when every planted death/hang is at close() (after
// the constructor returned everywhere) and no message expectation covers a survivor: then kOk.
model::RankStatus expectedSurvivorStatus(const model::Scenario& scenario);

// True when the scenario plants a fault at `site` on `rank`; when `peer` is given, a fault
// naming another peer does not count (a fault with no peer covers every peer).
bool faultPlanted(const model::Scenario& scenario, model::FaultSite site, int rank,
                  std::optional<int> peer = std::nullopt);

// "raised HandshakeError: peer memory handshake failed on this TP rank", "ok", "hung", ...
std::string describeResult(const model::RankResult& result);

// A duration for people: "12 ms", "3.4 ms", "1.25 s" (model/text.h).
using harness::model::formatNs;

// Hex form of a device pointer ("0x7f00"; model/text.h).
using harness::model::hexPtr;

// "ptr=<decimal or 0x hex>" anywhere in an event's detail (what the recording decorators write).
std::optional<std::uint64_t> parsePtr(std::string_view detail);

// A fault that fired on a rank, from its kFault events (what = the site's name, peer).
struct FiredFault {
  std::string site;       // as scenario files name it: "open", "close", "handle-stale", ...
  int peer = -1;          // the peer it fired for (-1: none)
  int error = 0;          // error sites: the runtime code the call failed with (0: unknown)
  std::size_t event = 0;  // its index in RankResult::events
  std::string phase;      // the harness phase it fired in: construct, check, close, destroy, ""
  std::string detail;     // the event's detail, for findings
};

// Every fault that fired on `result`'s rank, in order. The code of an error site is the `error`
// of the scenario's fault the event names ("[fault #N" in its detail; else the first fault of
// that site naming the rank and peer), defaulted as the parser does (alloc 2, else 1).
std::vector<FiredFault> firedFaults(const model::Scenario& scenario,
                                    const model::RankResult& result);

// The seam operation (peerconf::opName) a failure at `site` makes fail: "open" for open,
// "close-handle" for close, "alloc" for alloc, ..., "all-gather" for entry-corrupt (the decoder's
// GroupError naming the peer) and exchange-long (its GroupError naming none); empty for sites that
// fail no runtime call (handle-corrupt,
// handle-stale, group-fail, delay, death, hang).
std::string faultOp(std::string_view site);

// "hipErrorInvalidValue (1)": a runtime code for findings.
std::string codeText(int code);

// The index of the top-level kPhaseBegin event named `phase` (construct, check, close,
// destroy), or events.size() when the rank never entered it.
std::size_t phaseBegin(const std::vector<model::Event>& events, std::string_view phase);

}  // namespace peerconf::harness::checkers
