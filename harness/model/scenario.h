// Scenario: what a scenario file says, parsed and validated (the first stage of the data flow).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "faults/fault_plan.h"
#include "faults/fault_spec.h"
#include "model/dataplane_spec.h"
#include "name_table.h"

namespace peerconf::harness::model {

// The fault vocabulary is faults/'s (fault_spec.h): one home for the sites, points and their
// names. Where in a scenario file something was written (1-based; 0 when unknown).
using Mark = faults::SourceMark;
using FaultSite = faults::Site;
using Point = faults::Point;
using Fault = faults::FaultSpec;

// What the harness's rank runner raises when it skips the constructor because a setup failed
// (a not-ready fault): the rank whose setup failed says "this", with the runner's agreement every
// other rank says "another". A scenario expects them as {text: ...} messages.
inline constexpr std::string_view kNotReadyThisRankMessage =
    "setup failed on this TP rank before the constructor";
inline constexpr std::string_view kNotReadyAnotherRankMessage =
    "setup failed on another TP rank before the constructor";

// The core's HandshakeError messages (src/handshake.cc): what `this` and `another` stand for. The
// checker C2 holds a run to them and the expectation oracle names them.
inline constexpr std::string_view kThisRankMessage = "peer memory handshake failed on this TP rank";
inline constexpr std::string_view kAnotherRankMessage =
    "peer memory handshake failed on another TP rank";

// What a rank must show when the scenario raises.
enum class MessageKind {
  kThis,     // "peer memory handshake failed on this TP rank" with the backend error chained
  kAnother,  // "peer memory handshake failed on another TP rank"
  kGroup,    // a group error (timeout, or a peer that left): the rank was left waiting
  // Under `outcome: raise`, a rank that raises nothing: it returned every buffer it constructed
  // and never entered the construction the others raised in (a buffer-count fault: it registers
  // fewer buffers, or its peers more; model/buffers.h countMismatch).
  kOk,
  kText,  // any error whose message contains `text`
};

inline constexpr NameTable<MessageKind, 5> kMessageKindNames{{{
    {MessageKind::kThis, "this"},
    {MessageKind::kAnother, "another"},
    {MessageKind::kGroup, "group"},
    {MessageKind::kOk, "ok"},
    {MessageKind::kText, "text"},
}}};

struct MessageExpectation {
  MessageKind kind = MessageKind::kAnother;
  std::string text;  // kText only
};

enum class Outcome {
  kSuccess,   // every rank returns a usable PeerBuffer
  kRaise,     // every rank raises, each with its expected message
  kReported,  // some ranks die or hang: they are reported, survivors raise, within `within`
};

inline constexpr NameTable<Outcome, 3> kOutcomeNames{{{
    {Outcome::kSuccess, "success"},
    {Outcome::kRaise, "raise"},
    {Outcome::kReported, "reported"},
}}};

// `outcome: as-drawn` (Expectation::asDrawn): the file's word for an outcome the draw decides.
inline constexpr std::string_view kAsDrawn = "as-drawn";

// A negative control's named finding: the verdict of `property` must fail with `text` in its
// summary or in one of its findings (ignoring case), else the control itself fails.
struct ExpectedFinding {
  std::string property;  // "C3", as in Expectation::violations
  std::string text;      // a fragment of the finding, e.g. "never closed"
  Mark mark;             // where the violation was written
  // `appear: may`: the property may fail, with this finding, or pass (a knock-on, such as the C8
  // a C6 can bring, that a seed may or may not show); every control has at least one that must.
  bool may = false;
};

// A control of the judge itself (`expect.judge`): the judge must refuse the run for `rule` with
// `text` in that failure's summary or one of its findings (ignoring case), and for nothing the file
// does not list (judge/judgement.h). A file's guard of the judge's own rules: blind a rule and the
// file's run fails.
struct JudgeRefusal {
  std::string rule;  // one of kJudgeRules
  std::string text;  // a fragment of the failure, e.g. "the file is wrong, not the core"
  Mark mark;         // where the entry was written
};

// The judge's rules a file may expect it to refuse a run for, by the names its failures carry
// (judge::Failure::rule): a certain fault that never fired (coverage), a negative control that
// failed otherwise than it names (named-finding) or not at all (control), a handle fault the
// runtime answered otherwise than it means (fault-without-effect), and a property's own failure
// (C1..C8: one the file does not list in `violations`, such as a failure that follows from a fault
// without effect). The judge's other failures (a fault fired past its count, the harness's own
// error) guard the harness, and no file can pose them on purpose.
inline constexpr std::array<std::string_view, 12> kJudgeRules{"coverage", "named-finding",
                                                              "control",  "fault-without-effect",
                                                              "C1",       "C2",
                                                              "C3",       "C4",
                                                              "C5",       "C6",
                                                              "C7",       "C8"};

// Where a file wrote the keys of its `expect:` (line 0 where it did not, and in a scenario built in
// code): the comparison with the oracle's derivation names them (expectation/compare.h).
struct ExpectationMarks {
  Mark outcome;                  // the value of `outcome`
  std::optional<Mark> reported;  // the value of `reported`, where written
  std::map<int, Mark> messages;  // each rank key of `messages`
  std::optional<Mark> others;    // the `others` key of `messages`, where written
};

struct Expectation {
  Outcome outcome = Outcome::kSuccess;
  // `outcome: as-drawn`: success, or every rank raising together (or reported) with the messages
  // the faults that fired imply, as the draw of the faults left to chance falls. The judge takes
  // each run's outcome, messages and reported ranks from the oracle's derivation of the draw the
  // run made (judge/judgement.h); `outcome` holds kRaise until then, and the file gives no
  // `messages` or `reported` of its own.
  bool asDrawn = false;
  std::map<int, MessageExpectation> messages;       // per rank (kRaise/kReported)
  std::optional<MessageExpectation> others;         // ranks not listed in `messages`
  std::vector<int> reported;                        // kReported: the dead or hung ranks
  std::optional<std::chrono::milliseconds> within;  // kReported: bound on the whole run
  // Checks a negative control lists, e.g. "C6": they must FAIL, or (a finding with `may`) may.
  std::vector<std::string> violations;
  // What each control's property must report (a file gives one per violation; a scenario built
  // in code may leave a violation without one, and then any failure of the property counts).
  std::vector<ExpectedFinding> findings;
  // `judge`: the judge's refusals the file expects (a control of the judge; empty: none).
  std::vector<JudgeRefusal> refusals;
  ExpectationMarks marks;
};

// `runner:`: what the harness's rank runner does before the constructor, as the seed's runner.
struct RunnerOptions {
  // The seed: "a runner reaches [the constructor] only after tp_agree". true: every rank calls
  // tpAgree(ready) on the group first and constructs only when every rank was ready; a rank whose
  // setup failed (not-ready) makes every rank skip construction together. false: each rank
  // constructs as soon as it is ready; a rank that is not ready leaves alone and the others wait
  // in the handle exchange until the deadline.
  bool agreeFirst = true;
};

// One buffer of `buffers:`: its size and the label its caller gives it ("" = none).
struct BufferSpec {
  std::size_t bytes = 0;
  std::string label;
  Mark mark;  // where the entry was written
  // The entry's own `dataplane:`: the data plane run over this buffer instead of the scenario's
  // (dataPlaneOf; keys it leaves out take their defaults, not the scenario's). Unset: the
  // scenario's `dataplane:`, when it has one.
  std::optional<model::Spec> dataPlane;
  Mark dataPlaneMark;  // of its `dataplane` key
};

// `buffers_alive:` how the buffers of `buffers:` live: all alive at once (each rank constructs
// every one before it checks and closes any), or one at a time (a registration round each: a
// rank constructs the next buffer only after it closed the one before).
enum class BuffersAlive { kTogether, kOneAtATime };

inline constexpr NameTable<BuffersAlive, 2> kBuffersAliveNames{{{
    {BuffersAlive::kTogether, "together"},
    {BuffersAlive::kOneAtATime, "one-at-a-time"},
}}};

// The ceiling on a run's bound when the scenario does not set `max_run:`.
inline constexpr std::chrono::milliseconds kDefaultMaxRun{60000};

struct Scenario {
  std::string file;  // as given on the command line
  std::string name;  // `name:` or the file's stem
  std::string description;
  int ranks = 1;
  std::size_t bufferBytes = 1 << 16;
  // `buffers:` the buffers each rank constructs, in order (model/buffers.h); empty: one buffer of
  // bufferBytes, unlabelled, as without the key.
  std::vector<BufferSpec> buffers;
  BuffersAlive buffersAlive = BuffersAlive::kTogether;
  // `device_memory:` the memory of each rank's mocked device, by rank (a rank not listed, or an
  // empty map: the mocked runtime's default); allocations past it fail with hipErrorOutOfMemory.
  // The mocked runtime's only: a GPU run skips the scenario.
  std::map<int, std::size_t> deviceMemory;
  // `ranks_per_gpu:` the ranks of each mocked GPU (the thread launcher's --ranks-per-gpu for this
  // file): rank r's device on GPU r mod ceil(ranks / N), the devices of one GPU sharing its memory
  // (device_memory is then the GPU's, its ranks' allocations counted together). 0: the command
  // line's (a GPU a rank by default). Threads over the mocked runtime only: MPI runs skip the file.
  int ranksPerGpu = 0;
  // `nodes:` the nodes the file's ranks are grouped into: node n holds the ranks/nodes consecutive
  // ranks from n x ranks/nodes (as `--nodes K` groups a box's ranks). It names fault targets
  // (`peers: cross-node`) and scopes ranks_per_gpu (a GPU never spans two nodes); the run itself
  // runs on one box, so a cross-node failure is a fault the file plants. 0: not given (one node).
  int nodes = 0;
  std::uint64_t seed = 1;
  std::chrono::milliseconds deadline{2000};  // per group call; the run's bound is derived
  std::vector<Fault> faults;
  Expectation expect;
  // The launchers whose semantics the expectation is written for (empty = every launcher);
  // other launchers skip the scenario with a message.
  std::vector<std::string> launchers;
  // `clock:` the clock the expectation is written for ("sim": simulated time, whose weak memory
  // and seeded interleaving some controls need; "real"); empty = either. Thread runs on the other
  // clock, and MPI runs (real time only) of a "sim" file, skip the scenario with a message.
  std::string clock;
  // The data plane run after a successful handshake (C6/C7): `dataplane:` (dataplane/spec.h).
  std::optional<model::Spec> dataPlane;
  // `core:`: the core under test by name (a planted core of tests/planted/, see core_registry.h);
  // empty = the launcher's (the production PeerBuffer).
  std::string core;
  Mark coreMark;
  // `max_run:`: the ceiling on the run's bound (C8); without it a bound above
  // kDefaultMaxRun is a validation error, so no file can block a run for an hour by accident.
  std::optional<std::chrono::milliseconds> maxRun;
  RunnerOptions runner;  // `runner:`
  Mark mark;             // of the document
};

// The file's node of `rank` (`nodes:`; 0 without it).
int nodeOf(const Scenario& scenario, int rank);
// The mocked GPU of `rank` at `ranksPerGpu` (> 0) ranks a GPU: round-robin over the GPUs of its
// node (rank's place in its node mod ceil(ranks of a node / ranksPerGpu)), the GPUs numbered
// node by node; without `nodes:` rank mod ceil(ranks / ranksPerGpu).
int gpuOfRank(int rank, int ranks, int ranksPerGpu, int nodes = 0);

// A scenario file that does not parse or validate. what() is "FILE:LINE:COL: message".
// Without a mark (line 0: the file could not be read) what() is "FILE: message".
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, Mark mark, const std::string& message);
  const std::string& file() const noexcept { return file_; }
  Mark mark() const noexcept { return mark_; }
  // The message alone, without "FILE:LINE:COL: ".
  const std::string& message() const noexcept { return message_; }

 private:
  std::string file_;
  Mark mark_;
  std::string message_;
};

// The slack added to a derived bound: process start-up, thread joins, report writing.
inline constexpr std::chrono::milliseconds kBoundSlack{2000};
// Group calls of one handshake that can each wait up to the deadline: exchange and agree.
inline constexpr int kGroupCallsPerRun = 2;

// The one bound on a run of `scenario` that the launchers, the groups' deadlines and C8 share:
// expect.within when the scenario sets it; else kGroupCallsPerRun x deadline + the sum of every
// delay fault's delay (each fault counted once: ranks are late in parallel, and a rank meets each
// point once) + kBoundSlack.
std::chrono::milliseconds plannedBound(const Scenario& scenario);

// --- Together, judged in time (C8 on simulated time; scenarios/README.md "Raising together"). ---
// Every rank of a raising run must raise within one agreement round of the last fault that fired,
// not after a deadline: a core that waits out the group's deadline and then raises the right
// messages is wrong. The round is measured in call points of the simulated clock, where a rank
// that waits jumps the clock to a deadline, far past it; real time has no such bound (the OS
// schedules the ranks), there only `within:` applies.

// `device_memory`: an allocation that does not fit in its device fails with the runtime's
// out-of-memory error, without a fault. To the rules and the oracle it is the fault it acts as:
// a rank whose buffer exceeds its device's memory has a certain `alloc` fault, one whose buffer
// fits but not the address table beside it (8 bytes a rank) a certain `alloc-table` fault, both
// hipErrorOutOfMemory. Returns the scenario with those faults appended (the run plants none).
Scenario withDeviceMemoryFaults(Scenario scenario);

// The seam and group calls of one rank's handshake at `ranks` ranks, as the timeline lists them
// (scenarios/README.md "Timeline"): the runner's agreement, alloc, get-handle, the exchange, an
// open per peer, the table's alloc and copy, the agreement, and the cleanup of a failed handshake
// (a close per peer, the table's free, the buffer's free).
int handshakeCalls(int ranks);
// The call points one of those calls costs at most on the simulated clock (SimClock::kCallCost
// each): its call and return (or throw) events, the group call's own scheduling points, and the
// phase, fault and outcome events around it.
inline constexpr int kPointsPerCall = 4;
// One agreement round on the simulated clock: every rank's whole handshake, the ranks running one
// at a time: ranks x handshakeCalls(ranks) x kPointsPerCall x SimClock::kCallCost (4 ranks: 240
// us).
std::chrono::nanoseconds agreementRound(int ranks);
// Why a rank of `scenario` may wait out a deadline before it raises, or nullopt when none may:
// the first fault that leaves a rank waiting for a peer (a delay, a death or a hang, a group-fail,
// a not-ready rank without the runner's agreement), as "fault #I (SITE, line L): why".
std::optional<std::string> legitimateWait(const Scenario& scenario);
// The together bound of `scenario` on simulated time: agreementRound(ranks) when it expects
// `raise`, states no `within:` (which then bounds the whole run instead) and no rank may
// legitimately wait; nullopt otherwise.
std::optional<std::chrono::nanoseconds> togetherBound(const Scenario& scenario);
// The bounds a run of `scenario` is held to (C8), in words, for explain and the reports:
// "the run within 2.6 s (2 x deadline + delays + 2 s); on simulated time every rank raises within
// one agreement round (240 us) of the last fault that fired".
std::string boundsText(const Scenario& scenario);

// --- Deaths, hangs and exits at `at: dataplane` (scenarios/README.md "Data plane"). ---
// The ranks such a fault stops, ascending (empty without one).
std::vector<int> dataPlaneStopRanks(const Scenario& scenario);
// The buffer whose data plane the `at: dataplane` faults stop: with a data plane per buffer, the
// one they are aimed at (the rules allow the last only), else 0.
std::size_t dataPlaneStopBuffer(const Scenario& scenario);
// Whether every death, hang and exit of `scenario` is at `dataplane` (and it has one): the
// handshake succeeds on every rank, the survivors' data plane reports the stopped ranks.
bool stopsOnlyInDataPlane(const Scenario& scenario);
// The data plane `rank` runs: the scenario's `dataplane:` with, where an `at: dataplane` fault
// names the rank, its stop (the step where the driver stops it, as `dataplane.stop` would).
// Requires scenario.dataPlane.
model::Spec dataPlaneOf(const Scenario& scenario, int rank);
// With several buffers (`buffers:` and a `dataplane:`), each buffer every rank constructed runs a
// data plane: buffer `buffer`'s own `dataplane:` where its entry has one, else the scenario's
// (scenarios/README.md, "A data plane per buffer"). The one buffer's is dataPlaneOf's.
model::Spec dataPlaneOf(const Scenario& scenario, int rank, std::size_t buffer);
// Whether the data plane runs over each of several buffers: a `dataplane:` and 2 or more buffers.
bool dataPlanePerBuffer(const Scenario& scenario);
// The scenario as buffer `buffer`'s data plane sees it: its `dataplane:` that buffer's
// (dataPlaneOf), so what is derived and judged for one data plane (C6/C7/C8, a late rank's
// certain timeout) is derived for that buffer's. With a data plane per buffer, an `at: dataplane`
// death, hang or exit aimed at another buffer names no rank in it.
Scenario dataPlaneScenarioOf(const Scenario& scenario, std::size_t buffer);
// What a survivor of a data-plane stop reports, as a message the checkers match against its data
// plane's detail: {text: "waiting for rank R's pair"} for one stopped rank R, {text: "waiting for
// rank "} for several. The driver's timeout and abort both name what the rank waited for
// ("rank 0 timed out after 500 ms waiting for rank 2's pair of epoch 100 (step 100) at ..."):
// the stopped rank acknowledged every epoch before its step, so a survivor blocks on its pair of
// that step, never on an acknowledgement.
MessageExpectation dataPlaneReport(const Scenario& scenario);

// --- A slow rank: a `dataplane.late` delay against the peers' wait (scenarios/README.md, "A slow
// rank"). A late rank's peers block on its pair for about its delay: a delay of at most half the
// data plane's wait (dataplane.timeout, else the deadline) leaves their waits on time; one of
// 1.5 waits or more times them out for certain (the stop's report, naming the late rank); between,
// the machine's timing decides, and validate refuses it (as the handshake's lateness is judged).
// ---
enum class LateDelay { kOnTime, kTimesOut, kUndecidable };
LateDelay judgeLateDelay(std::chrono::microseconds delay, std::chrono::milliseconds wait);
// The first step a late entry fires at (its least `steps`, or `every`), nullopt when the run has
// no such step.
std::optional<std::uint64_t> firstLateStep(const Late& late, std::uint64_t steps);
// The data plane's planned timeout: the first step at which a late delay times the peers out for
// certain, the ranks late past the wait there, and the entries (indexes into dataplane.late).
struct SlowStep {
  std::uint64_t step = 0;
  std::vector<int> ranks;
  std::vector<std::size_t> lates;
};
std::optional<SlowStep> certainDataPlaneTimeout(const Scenario& scenario);
// What the peers of a slow rank report, as dataPlaneReport says it for a stop.
std::string slowStepText(const Scenario& scenario, const SlowStep& slow);

// The scenario's faults as the decorators take them, drawn from `seed` (default: the scenario's).
faults::FaultPlan faultPlan(const Scenario& scenario);
faults::FaultPlan faultPlan(const Scenario& scenario, std::uint64_t seed);

std::string toString(FaultSite site);
std::string toString(Point point);
std::string toString(Outcome outcome);
std::string toString(MessageKind kind);                   // "this", "another", "group", "text"
std::string toString(const MessageExpectation& message);  // "this", ..., "text \"out of memory\""

// hipError_t 205 -> "hipErrorMapFailed"; codes the harness does not name -> "hipError(42)".
std::string hipErrorName(int code);

}  // namespace peerconf::harness::model
