// RunRecord: everything every rank reported for one run of one scenario — the input of the
// checkers and the reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/dataplane_result.h"
#include "model/event_log.h"
#include "model/scenario.h"
#include "name_table.h"

namespace peerconf::harness::model {

// One entry of the mocked runtime's ledger, as the harness keeps it (empty on real GPUs).
struct LedgerRecord {
  std::string op;  // alloc | open | close | free
  std::uint64_t ptr = 0;
  std::size_t size = 0;
  int ownerDevice = -1;  // open/close: the peer whose buffer was mapped
  std::uint64_t generation = 0;
  int error = 0;  // 0 on success, else the hipError_t the call returned
};

enum class RankStatus {
  kOk,       // the constructor returned
  kRaised,   // the constructor threw
  kDead,     // the rank died by a planted fault
  kHung,     // the rank hung by a planted fault and was reported
  kMissing,  // nothing came back from the rank (crashed, or the harness lost it)
  kExited,   // the rank's process ended by a planted exit (its code in the result's message)
};

// The rank stopped by a planted death, hang or exit: the ranks a scenario reports.
inline bool stoppedByFault(RankStatus status) {
  return status == RankStatus::kDead || status == RankStatus::kHung ||
         status == RankStatus::kExited;
}

inline constexpr NameTable<RankStatus, 6> kRankStatusNames{{{
    {RankStatus::kOk, "ok"},
    {RankStatus::kRaised, "raised"},
    {RankStatus::kDead, "dead"},
    {RankStatus::kHung, "hung"},
    {RankStatus::kMissing, "missing"},
    {RankStatus::kExited, "exited"},
}}};

std::string toString(RankStatus status);

// Why the harness releases, once a rank has been judged, what the core left held (a planted core's
// leaked buffer or unclosed mapping), as the process's end would (launch/rank_launch.cc). Such a
// release that fails means the harness's count of what the rank holds was wrong: the judge fails
// the run for it ("harness").
inline constexpr std::string_view kReleasedAfterTheChecks =
    "left by the core: released after the checks, as its process's end would";

struct RankResult {
  int rank = 0;
  RankStatus status = RankStatus::kMissing;
  std::string errorType;  // HandshakeError, BackendError, GroupTimeout, GroupError, CloseError...
  std::string message;    // what() of the error (kRaised)
  bool thisRank = false;  // HandshakeError::thisRank()
  std::string cause;      // the chained cause's message (empty when none)
  int causeCode = 0;      // its runtime code
  std::string causeOp;    // its operation (peerconf::opName: "open", "alloc"...; empty: no Error)
  int causePeer = -1;     // its peer (-1: none)
  // C4 (success only): addresses()[rank] == bytes().data, and what each peer found in this rank's
  // buffer after every rank wrote a rank-signed pattern through its addresses.
  bool ownSlotIsLocal = true;
  std::vector<std::string> addressFindings;  // empty = every pattern landed where it should
  // C4 (every outcome): mappings of a peer that did not reach the buffer that peer exported, as
  // the open seam read them back (faults/faulty_backend.h), one line each.
  std::vector<std::string> mappingFindings;
  // C4: the tables as the check found them: addresses() and addressesDevice() read back through
  // the backend (tableChecked: the check ran; tableError: why the device table was not read).
  bool tableChecked = false;
  std::vector<std::int64_t> hostTable;
  std::vector<std::int64_t> deviceTable;
  std::string tableError;
  // C3: close() a second time was a no-op; close() errors (text).
  bool closeTwiceOk = true;
  // C3: what the buffer still handed out once the first close() had returned (empty: nothing),
  // each as a sentence: a non-empty bytes(), a non-empty addresses(), a non-null addressesDevice().
  // After close() every one of them names released memory.
  std::vector<std::string> leftAfterClose;
  std::vector<std::string> closeErrors;
  // C3: what the first close() raised: its type (empty when it returned) and, for a CloseError,
  // its failures; and the ledger's length at the end of the close phase, before the buffer
  // object was destroyed, and after it was (-1: no close phase). The entries between, like the
  // events inside the "destroy" phase, are the destructor's; later ones the harness's own.
  std::string closeErrorType;
  std::vector<std::string> closeFailures;
  std::int64_t ledgerAtClose = -1;
  std::int64_t ledgerAfterDestroy = -1;
  std::vector<LedgerRecord> ledger;  // this rank's device, whole run
  bool ledgerAvailable = false;      // false on real GPUs
  // After the run, once the ledger above was taken (rank_settle.h): what the harness released
  // for real because an injected close/free failure had left it held (the core saw the failure;
  // C3 judged that), and what the rank's device still held after that which the run created
  // (mock: the runtime's live allocations and mappings; GPU: any drop of free device memory).
  // C3 reports every device leftover.
  // Each line is "freed ..."/"closed ..." or, where the release failed, "could not ...", with the
  // reason the harness released it (kReleasedAfterTheChecks: what the core left, once judged).
  std::vector<std::string> harnessReleases;
  std::vector<std::string> deviceLeftovers;
  std::vector<Event> events;
  std::int64_t endNs = 0;  // when the rank finished, since the run's start
  // The data plane (C6/C7), when the scenario has one and the handshake succeeded everywhere:
  // with several buffers (model::dataPlanePerBuffer), buffer 0's.
  std::optional<model::Result> dataPlane;
  // With several buffers, the data planes of buffers 1, 2, ... in order (element i: buffer i+1),
  // each run over that registration's peer pointers once every rank constructed it.
  std::vector<model::Result> laterDataPlanes;
};

// The data plane of buffer `buffer` of the rank (0: dataPlane), or null when it did not run.
const model::Result* dataPlaneOfBuffer(const RankResult& result, std::size_t buffer);
// How many buffers' data planes the rank recorded (0 when none ran).
std::size_t dataPlanesRecorded(const RankResult& result);

struct RunRecord {
  Scenario scenario;
  std::string launcher;  // threads | mpi
  std::string runtime;   // mock | gpu
  std::uint64_t seed = 0;
  // The planted core the run used (the scenario's `core:`, else `peerconf run --core`), empty for
  // the production core: the reproduce line names it, so a pasted line runs the same core.
  std::string core;
  // The clock of the events' times: "real" (measured) or "sim" (a thread run on simulated time,
  // its interleaving drawn from `seed`; event times and C8 are virtual there). wallNs is real.
  std::string clock = "real";
  bool simulatedTime() const noexcept { return clock == "sim"; }
  // How long the run lasted on its events' clock: wallNs on real time; on simulated time the
  // latest rank end or event time (virtual; wallNs, the real time it took, is on another axis).
  std::int64_t timelineNs() const noexcept;
  std::vector<RankResult> ranks;           // indexed by rank, one per rank of the scenario
  std::int64_t wallNs = 0;                 // the whole run
  std::vector<std::string> firedSites;     // fault sites that fired at least once
  std::vector<std::string> harnessErrors;  // problems of the harness itself (never hidden)
  // Set by the suite (not `--no-coverage`): a certain fault of the scenario (probability 1) that
  // did not fire on a rank it names fails the run (judge/judgement.h).
  bool requireCoverage = false;
};

// The command that reruns this scenario alone, the same way; every word shell-quoted, so it can
// be pasted into sh or bash whatever the file's path holds (spaces, quotes, $, newlines).
std::string reproduceCommand(const RunRecord& record);

// The command reproduce lines start with: "peerconf", or the basename of `path` once set (a team's
// own executable, driver/command_line.h).
void setProgramName(const std::string& path);
const std::string& programName();
// `word` as one POSIX shell word: unchanged when it holds only [A-Za-z0-9_-./:=@%+,], else in
// single quotes (a ' inside written as '\'').
std::string shellQuote(const std::string& word);

}  // namespace peerconf::harness::model
