// The `dataplane:` section of a scenario: which layout and workload the ranks run over their
// PeerBuffer after the handshake, for how many steps, and which data-plane faults to plant.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "layout/engine.h"
#include "layout/layout.h"
#include "layout/payload.h"
#include "layout/rank_base.h"
#include "name_table.h"

namespace peerconf::harness::model {

enum class Workload {
  kExchange,   // every rank sends a pair to every peer each step
  kAllReduce,  // one-shot all-reduce: every rank pushes its input to every peer, each reduces
  // two one-shot all-reduces in flight a step on the one buffer, each with its own epochs
  // (layout/workloads.h, TwoInFlightOf); its control shares A's epochs and slots with B
  kTwoInFlight,
  kTwoInFlightSharedSlots,
  // the exchange as a replayed CUDA graph, its epoch from a device-side counter
  // (layout/workloads.h, ReplayEpoch); its control runs the epoch fixed at capture
  kGraphReplay,
  kGraphReplayCapturedEpoch,
};

enum class Prefill {
  kNone,
  kStaleEpochs,    // every slot and acknowledgement holds this buffer's pairs of earlier epochs
  kEarlierBuffer,  // every slot holds an earlier buffer's pairs (another generation) for the
                   // very epochs this run will use, with that buffer's valid payloads
  kEarlierAbort,   // as kEarlierBuffer, and that life ended in an abort: its abort word (its
                   // generation, the abort bit, a rank) is left in word 0 of every rank's buffer
};

enum class Role { kReader, kWriter };

// A late rank: before its read phase (reader) or push phase (writer) of the chosen steps it
// sleeps for `delay`. Steps are counted from 0 (the run's first step).
struct Late {
  int rank = 0;
  Role role = Role::kReader;
  std::uint64_t every = 0;           // every k-th step (k, 2k, ...); 0 = only `steps`
  std::vector<std::uint64_t> steps;  // these steps
  std::chrono::microseconds delay{0};

  bool firesAt(std::uint64_t step) const {
    if (every > 0 && step > 0 && step % every == 0) return true;
    for (std::uint64_t s : steps) {
      if (s == step) return true;
    }
    return false;
  }
};

// A rank that stops at the start of step `step`: it writes and reads nothing more. The others
// must report it (a timeout naming it) within the wait deadline, never hang.
struct Stop {
  int rank = 0;
  std::uint64_t step = 0;
};

// Where a key was written in the scenario file (1-based; 0 when unknown).
struct SpecMark {
  int line = 0;
  int column = 0;
};

struct Spec {
  std::string layout = "reference";  // layout::layoutNames()
  Workload workload = Workload::kExchange;
  std::uint64_t steps = 1000;
  int depth = 2;
  int payload = 6;               // words per pair (1..32)
  std::uint32_t startEpoch = 0;  // the first step's epoch (the tag's 32-bit field wraps)
  std::optional<std::chrono::milliseconds> timeout;  // per wait; unset = the scenario's deadline
  std::chrono::microseconds window{2000};  // the modelled reordering window of the controls
  std::uint64_t history = 1024;  // steps recorded in the event history (the in-band checks run on
                                 // every step)
  Prefill prefill = Prefill::kNone;
  // `values`: what the payload words carry (the self-verifying hash by default; typed values and
  // chosen values at chosen steps: layout/payload.h).
  layout::PayloadDomain values;
  std::vector<Late> late;
  std::optional<Stop> stop;
  // Where the section ("") and each key given were written, for the checks made after parsing
  // (what `--runtime gpu` cannot run). Not part of what runs.
  std::map<std::string, SpecMark> marks;
};

inline constexpr NameTable<Workload, 6> kWorkloadNames{{{
    {Workload::kExchange, "exchange"},
    {Workload::kAllReduce, "allreduce"},
    {Workload::kTwoInFlight, "two-in-flight"},
    {Workload::kTwoInFlightSharedSlots, "two-in-flight-shared-slots"},
    {Workload::kGraphReplay, "graph-replay"},
    {Workload::kGraphReplayCapturedEpoch, "graph-replay-captured-epoch"},
}}};
inline constexpr NameTable<Prefill, 4> kPrefillNames{{{
    {Prefill::kNone, "none"},
    {Prefill::kStaleEpochs, "stale-epochs"},
    {Prefill::kEarlierBuffer, "earlier-buffer"},
    {Prefill::kEarlierAbort, "earlier-abort"},
}}};
inline constexpr NameTable<Role, 2> kRoleNames{{{
    {Role::kReader, "reader"},
    {Role::kWriter, "writer"},
}}};

inline constexpr NameTable<layout::ValueType, 6> kValueTypeNames{{{
    {layout::ValueType::kHash, "hash"},
    {layout::ValueType::kFp64, "fp64"},
    {layout::ValueType::kFp32, "fp32"},
    {layout::ValueType::kFp16, "fp16"},
    {layout::ValueType::kBf16, "bf16"},
    {layout::ValueType::kBytes, "bytes"},
}}};

// "exchange", "allreduce", "two-in-flight", ...
inline std::string toString(Workload workload) { return kWorkloadNames.name(workload, "exchange"); }

// The workload as a layout's engine runs it (layout/engine.h).
inline layout::Workload engineWorkload(Workload workload) {
  switch (workload) {
    case Workload::kExchange:
      return layout::Workload::kExchange;
    case Workload::kAllReduce:
      return layout::Workload::kAllReduce;
    case Workload::kTwoInFlight:
      return layout::Workload::kTwoInFlight;
    case Workload::kTwoInFlightSharedSlots:
      return layout::Workload::kTwoInFlightSharedSlots;
    case Workload::kGraphReplay:
      return layout::Workload::kGraphReplay;
    case Workload::kGraphReplayCapturedEpoch:
      return layout::Workload::kGraphReplayCapturedEpoch;
  }
  return layout::Workload::kExchange;
}

// Whether the inputs every reader takes alike name no reader (the all-reduces' kAnyReader).
inline bool readsAllReduceInputs(Workload workload) {
  return workload == Workload::kAllReduce || workload == Workload::kTwoInFlight ||
         workload == Workload::kTwoInFlightSharedSlots;
}

// Collectives a step runs: 2 under two-in-flight (A, then B), whose history and findings count
// collectives (A of step s is step 2s, B is 2s + 1); else 1.
inline std::uint64_t collectivesPerStep(Workload workload) {
  return layout::twoInFlight(engineWorkload(workload)) ? 2 : 1;
}
// "none", "stale-epochs", "earlier-buffer", "earlier-abort"
inline std::string toString(Prefill prefill) { return kPrefillNames.name(prefill, "none"); }
// "reader", "writer"
inline std::string toString(Role role) { return kRoleNames.name(role, "reader"); }

inline std::optional<layout::ValueType> valueTypeFromName(const std::string& name) {
  return kValueTypeNames.find(std::string_view(name));
}
inline std::optional<Workload> workloadFromName(const std::string& name) {
  return kWorkloadNames.find(std::string_view(name));
}
inline std::optional<Prefill> prefillFromName(const std::string& name) {
  return kPrefillNames.find(std::string_view(name));
}
inline std::optional<Role> roleFromName(const std::string& name) {
  return kRoleNames.find(std::string_view(name));
}

// The wait deadline a run of `spec` uses under a scenario whose group deadline is `deadline`.
inline std::chrono::milliseconds waitTimeout(const Spec& spec, std::chrono::milliseconds deadline) {
  return spec.timeout.value_or(deadline);
}

// The shape `spec` gives every layout (built in or registered) for `ranks` ranks.
layout::Shape shapeOf(const Spec& spec, int ranks);

// The built-in layout `spec` names for `ranks` ranks (the reference family: the GPU kernels and
// benchmarks run it); throws std::invalid_argument for another name.
layout::Layout makeLayout(const Spec& spec, int ranks);

}  // namespace peerconf::harness::model
