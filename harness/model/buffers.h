// Buffers: what each rank constructs in a run — the scenario's `buffers:` in order, as a
// buffer-order, buffer-size or buffer-label fault changes them on its rank, or a buffer-count
// fault shortens or lengthens them — and the mismatch the core must then raise on every rank
// together (PyTorch PR 198024: ranks that construct their
// buffers in another order pair one rank's buffer with another's; equal sizes, only a label
// tells). The one home of these rules: the parser, the rules, the rank runner and the oracle read
// them here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::model {

// The buffers a rank constructs when no fault changes them: `buffers:`, or the one buffer of
// `buffer:` without a label.
std::vector<BufferSpec> listedBuffers(const Scenario& scenario);

// Whether the scenario constructs more than one buffer, or plants a buffer-* fault: the scenarios
// whose ranks construct buffers other than the one of `buffer:`.
bool plansBuffers(const Scenario& scenario);
bool isBufferFault(const Fault& fault);

// One construction of a rank: what it registers, which entry of `buffers:` it is, and the
// buffer-* faults of the rank that fire there (indices in scenario.faults).
struct Construction {
  std::size_t bytes = 0;
  std::string label;
  std::size_t listed = 0;           // its index in listedBuffers()
  std::vector<std::size_t> faults;  // the faults that fire at this construction
};

// What `rank` constructs, in order: listedBuffers() with the rank's buffer-size and buffer-label
// faults applied to the entries they name, then reversed by a buffer-order fault, then cut to or
// lengthened to the count of its buffer-count fault (copies of the last entry). A size or label
// fault fires where the rank constructs the entry it changed; an order fault where the rank
// first constructs another buffer than the list has in that place.
std::vector<Construction> constructionsOf(const Scenario& scenario, int rank);

// The first construction at which some rank registers another size or label than rank 0, and
// what every rank then raises: BufferMismatchError's message (src/errors.h), naming each rank that
// differs, its size and label, and rank 0's.
struct BufferMismatch {
  std::size_t at = 0;      // the construction (0 = the first buffer each rank constructs)
  std::vector<int> ranks;  // the ranks that differ from rank 0
  std::string message;     // what every rank's BufferMismatchError says
};
// nullopt when every rank constructs the same buffers (or there is one rank: no exchange).
std::optional<BufferMismatch> bufferMismatch(const Scenario& scenario);

// buffer-count (`{site: buffer-count, rank: R, count: K}`): the number of buffers `rank`
// registers, K where its buffer-count fault says so (the first such fault of the rank), else the
// list's N. constructionsOf() above already holds it: the first K of the list (K < N), or the N
// listed and K-N copies of the last entry (K > N; the fault fires at the first copy).
std::size_t registeredBy(const Scenario& scenario, int rank);
// The rank's buffer-count fault (an index in scenario.faults), or nullopt.
std::optional<std::size_t> countFaultOf(const Scenario& scenario, int rank);

// The first construction some rank never makes, when the ranks register different numbers of
// buffers: every rank that makes it (`waiting`) posts its entry in that exchange and waits for
// the others until the group's deadline, then raises a group error (a GroupTimeout: on threads
// it names the ranks that did not arrive, under MPI none); every rank that registered `at`
// buffers (`returning`) made no call of it: it returns every buffer it constructed (they all
// succeeded) and closes them. No rank constructs anything after it. The constructions before it
// succeed (rule 8c keeps every other fault out of such a scenario).
struct CountMismatch {
  std::size_t at = 0;
  std::vector<int> waiting;
  std::vector<int> returning;
};
// nullopt when every rank registers the same number of buffers (or there is one rank).
std::optional<CountMismatch> countMismatch(const Scenario& scenario);

// "rank 1 registers 1 buffer where the list has 3: it never makes its construction 1 (the
// others' 'workspace' (8192 bytes))": a buffer-count fault where it fires, as the rank runner
// records it and explain tells it.
std::string countFaultText(const Scenario& scenario, int rank);

// The buffers of `buffers:` the scenario's faults are aimed at (`buffer: I` on a handshake,
// delay, death, hang or exit fault: FaultSpec::onBuffer), in construction order, each once.
std::vector<std::size_t> aimedBuffers(const Scenario& scenario);

// How construction `buffer` ends under the faults aimed at it (a fault that names no rank counts
// for nothing): it fails for certain (a certain fault that fails the handshake, a certain delay
// not shorter than the deadline before a group call, or a death, hang or exit before its close),
// it may fail (such a fault left to chance), or it succeeds.
enum class ConstructionEnd { kSucceeds, kMayFail, kFails };
ConstructionEnd constructionEnd(const Scenario& scenario, std::size_t buffer);

// The construction the oracle derives the run from: the first aimed buffer whose construction may
// fail or fails (the rank runner's first failed construction ends every rank's: the later aimed
// faults never fire), else the last aimed one (every construction succeeds). nullopt when no
// fault is aimed.
std::optional<std::size_t> aimedBuffer(const Scenario& scenario);

// With a data plane per buffer (dataPlanePerBuffer), how many buffers' data planes run, from
// buffer 0 on: every buffer's where every construction succeeds; one at a time, the rounds before
// the construction that ends them (the aimed one that fails, a registration mismatch, a count
// that differs: each round before it ran its data plane); alive together, none once one fails
// (they run after every buffer is constructed). 1 without a data plane per buffer.
std::size_t dataPlanesRun(const Scenario& scenario);

// A late rank that times its peers out for certain (certainDataPlaneTimeout) in one data plane:
// its buffer (none with one data plane), the scenario as that data plane sees it
// (dataPlaneScenarioOf) and the step, as validate's warnings and explain state it.
struct DataPlaneTimeout {
  std::optional<std::size_t> buffer;
  Scenario view;
  SlowStep slow;
};
// Those of every data plane that runs (dataPlanesRun), in buffer order.
std::vector<DataPlaneTimeout> certainDataPlaneTimeouts(const Scenario& scenario);

// The aimed buffer whose construction fails for certain before some fault aimed at a later buffer
// (which then never fires); nullopt when none does.
std::optional<std::size_t> failingConstructionBefore(const Scenario& scenario, std::size_t buffer);

// ", buffer 1" for a fault aimed at buffer 1 (`buffer: 1`), "" for one aimed at none: what the
// oracle's names of a fault add (explain, validate), so that a reader sees which construction's
// call it fails or stops.
std::string aimText(const Fault& fault);

// What the oracle derives a scenario whose faults are aimed at buffers from: construction I of
// aimedBuffer() alone, as a scenario of one buffer (`buffer:` its size; its label compares with
// nothing) and the same faults, in the same order (their indices are the run's), those aimed at
// another buffer naming no rank (they act in their own construction or close, never in this
// one). Each fault keeps its aim (FaultSpec::onBuffer) for its name (aimText): nothing that
// derives from the result reads it otherwise, and deriving again from the result changes nothing.
// The constructions before it succeed (no fault is aimed there), and the run's outcome and messages
// are those of construction I: when it fails, every rank raises (or stops) there together and
// constructs nothing after it (the rank runner's first failed construction ends every rank's); when
// it succeeds, so does the run. With a data plane per buffer, its `dataplane:` is buffer I's own
// where its entry has one. The scenario as it is when no fault is aimed.
Scenario aimedConstruction(Scenario scenario);

// "'kv-cache' (4096 bytes)", "an unlabelled buffer (4096 bytes)": one construction in words.
std::string describeBuffer(std::size_t bytes, const std::string& label);

}  // namespace peerconf::harness::model
