// What one rank's data plane reports: how the run ended, what the in-band checks found, and the
// event history the C6/C7 checkers replay after the run. Part of RankResult (run_record.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "name_table.h"

namespace peerconf::harness::model {

enum class DataplaneEventKind : std::uint8_t {
  kPush,           // this rank stored a pair into `peer`'s slot
  kRead,           // this rank took `peer`'s pair from its own buffer (and checked it)
  kOverwriteSeen,  // waiting for `peer`'s pair, the slot already held a later epoch's pair
  kZero,           // this rank zeroed the payload of slot (slot, peer) in its own buffer
  kReduced,        // an all-reduce sum was checked (check: 1 right, 0 wrong)
  kAck,            // this rank released `peer`'s pair of `epoch`, storing `tag` where peer reads
  kRearm,          // this rank stored into slot `slot` of `peer`'s buffer (its own or a peer's),
                   // `source`'s words there, not as a push (re-arming, clearing, resetting)
};

// One event of a rank's history. Times are steady-clock nanoseconds (CLOCK_MONOTONIC): ranks on
// one host (same clockDomain) can be compared.
struct DataplaneEvent {
  DataplaneEventKind kind = DataplaneEventKind::kPush;
  int peer = -1;           // push: the destination; read/overwrite/zero: the source; rearm: the
                           // buffer's owner
  int slot = -1;           // slot index (the layout's) in the destination's buffer
  std::uint64_t step = 0;  // step of the run (0 = first)
  std::uint32_t epoch = 0;
  std::uint64_t tag = 0;   // push: written; read: taken; overwrite: seen; zero: overwritten;
                           // rearm: the pair it overwrote, tag(generation, its epoch) (0: none
                           // of this run, or not known)
  std::uint64_t aux = 0;   // push, rearm: the acknowledgement that let it; read: the tag re-read
  std::int64_t tNs = 0;    // push: just before the tag store; rearm: just after its stores;
                           // others: when it happened
  std::int64_t t2Ns = 0;   // push: just after the payload stores
  std::uint8_t check = 0;  // read: layout::PairCheck; reduced: 1 right, 0 wrong; rearm: 1 when
                           // the memory model said what it overwrote (simulated time), else 0
  std::uint64_t want = 0;  // read: the tag the layout expected for the step (Taken::expected)
  int source = -1;         // rearm: whose words it stored over (-1: every source's)
  bool tagless = false;    // read: the layout's pairs carry no tag (Taken::tagless)
};

enum class Violation : std::uint8_t {
  kOverwrite,  // C6
  kStale,      // C7
};

// One in-band finding: rank `rank` (the reader) saw it for `peer`'s pair at slot, epoch, step.
struct InBandFinding {
  Violation violation = Violation::kOverwrite;
  int rank = -1;
  int peer = -1;
  int slot = -1;
  std::uint64_t step = 0;
  std::uint32_t epoch = 0;
  std::string text;
};

enum class DataplaneOutcome {
  kCompleted,  // every step ran
  kStopped,    // a planted stop ended this rank's run
  kTimeout,    // a wait passed its deadline (wait* fields say where)
  kAborted,    // another rank gave up and said so (abortedBy)
  kSkipped,    // not run (detail says why: GPU memory not host-mapped, ...)
  kError,      // could not run (detail: a layout that does not fit, a group failure, ...)
};

struct Result {
  // What ran.
  std::string layout;
  std::string workload;
  int ranks = 0;
  int depth = 0;
  int slots = 0;
  int payloadWords = 0;
  std::uint32_t generation = 0;
  std::uint32_t startEpoch = 0;
  std::uint64_t stepsPlanned = 0;
  std::uint64_t stepsDone = 0;  // steps whose read phase completed
  std::int64_t elapsedNs = 0;
  std::int64_t timeoutNs = 0;
  std::uint64_t clockDomain = 0;  // events' clocks compare between ranks of one domain

  // How it ended.
  DataplaneOutcome outcome = DataplaneOutcome::kSkipped;
  std::string detail;
  std::string waitWhat;  // timeout/aborted: "pair", "acknowledgement", "arrival"
  int waitPeer = -1;
  int waitSlot = -1;
  std::uint32_t waitEpoch = 0;
  std::uint64_t waitStep = 0;
  int abortedBy = -1;

  // In-band checks over every step (counts exact; findings capped at kMaxFindings).
  static constexpr std::size_t kMaxFindings = 64;
  std::uint64_t pairsRead = 0;
  std::uint64_t pairsGenuine = 0;
  std::uint64_t overwrites = 0;  // C6 seen in-band
  std::uint64_t stale = 0;       // C7 seen in-band
  std::uint64_t wrongResults = 0;
  std::vector<InBandFinding> findings;

  // The event history of steps [0, historySteps).
  std::uint64_t historySteps = 0;
  std::vector<DataplaneEvent> history;
};

inline constexpr NameTable<DataplaneOutcome, 6> kDataplaneOutcomeNames{{{
    {DataplaneOutcome::kCompleted, "completed"},
    {DataplaneOutcome::kStopped, "stopped"},
    {DataplaneOutcome::kTimeout, "timeout"},
    {DataplaneOutcome::kAborted, "aborted"},
    {DataplaneOutcome::kSkipped, "skipped"},
    {DataplaneOutcome::kError, "error"},
}}};
inline constexpr NameTable<DataplaneEventKind, 7> kDataplaneEventKindNames{{{
    {DataplaneEventKind::kPush, "push"},
    {DataplaneEventKind::kRead, "read"},
    {DataplaneEventKind::kOverwriteSeen, "overwrite-seen"},
    {DataplaneEventKind::kZero, "zero"},
    {DataplaneEventKind::kReduced, "reduced"},
    {DataplaneEventKind::kAck, "ack"},
    {DataplaneEventKind::kRearm, "rearm"},
}}};
inline constexpr NameTable<Violation, 2> kViolationNames{{{
    {Violation::kOverwrite, "C6"},
    {Violation::kStale, "C7"},
}}};

// "completed", "stopped", ...
inline std::string toString(DataplaneOutcome outcome) {
  return kDataplaneOutcomeNames.name(outcome, "error");
}
// "push", "read", ...
inline std::string toString(DataplaneEventKind kind) {
  return kDataplaneEventKindNames.name(kind, "push");
}
// "C6", "C7"
inline std::string toString(Violation violation) { return kViolationNames.name(violation, "C7"); }

}  // namespace peerconf::harness::model
