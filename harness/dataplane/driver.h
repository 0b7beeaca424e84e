// The host driver of the data plane: runs one rank's part of a workload over host-mapped peer
// memory for N steps with the scenario's layout, delays, prefill and stop, and reports a Result
// (outcome, in-band findings, event history).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "group.h"
#include "layout/engine.h"
#include "layout/layout.h"
#include "layout/tag.h"
#include "layout/wait.h"
#include "model/dataplane_result.h"
#include "model/dataplane_spec.h"

namespace peerconf::harness::dataplane {

// One rank's view of the buffers: every rank's buffer as this rank maps it, host addresses.
struct RankMemory {
  int rank = 0;
  std::vector<layout::Word*> buffers;  // indexed by rank; buffers[rank] is this rank's own
  std::size_t bytes = 0;               // the size of each buffer
};

// Runs rank `memory.rank`'s part of `spec`. Collective over `group` (null for a single rank):
// every rank makes the same three group calls whatever happens in between — agree on the
// generation, a barrier once every rank has prefilled its own buffer, and a barrier at the end so
// that no rank closes its buffer while a peer may still touch it. A spec that cannot run (an
// unknown layout, a buffer too small) is decided alike on every rank before any group call. Data
// plane problems never throw: waits are bounded by `timeout`, and a rank whose wait times out
// aborts the others through the abort word, so every rank returns within about one timeout.
model::Result runRank(const model::Spec& spec, const RankMemory& memory, Group* group,
                      std::chrono::milliseconds timeout);

// Writes the stale contents `spec.prefill` asks for into this rank's own buffer, in `engine`'s
// layout (before its initOwn hook and the barrier that precedes the first push). `generation` is
// the run's.
void prefill(const model::Spec& spec, const layout::Engine& engine, const layout::Shape& shape,
             int rank, layout::Word* buffer, std::uint32_t generation);

// The generation an "earlier buffer" had: any other than the run's, never 0.
std::uint32_t earlierGeneration(std::uint32_t generation);

// The fields of `result` that say what runs (layout, workload, ranks, depth, epochs, steps,
// timeout, clock domain, history steps), as runRank fills them before anything runs.
void describeRun(const model::Spec& spec, int ranks, std::chrono::milliseconds timeout,
                 model::Result& result);

// The registered layout `spec` names (layout/engine.h), for `ranks` ranks in buffers of `bytes`:
// its engine with `shape` set (and result.slots), or null with result.outcome kError and why (an
// unknown name, a workload or shape it cannot run, a buffer too small).
const layout::Engine* startLayout(const model::Spec& spec, int ranks, std::size_t bytes,
                                  model::Result& result, layout::Shape& shape);

// Fills result.outcome (kTimeout or kAborted), detail and the wait fields from a wait that ended
// early: the detail names the rank, what it waited for (peer, slot, epoch, step) and, for a
// timeout, the last word it saw.
void describeWait(const layout::Wait& wait, const model::Spec& spec,
                  std::chrono::milliseconds timeout, model::Result& result);

// The barrier after the last step: nobody closes (unmaps) while a peer may still write. A failure
// is added to result.detail and turns a completed run into kError. No-op without a group.
void closingBarrier(Group* group, model::Result& result);

// "rank R stopped at step S as planned".
std::string stopDetail(int rank, std::uint64_t step);

// An identifier of this host's clock (hostname hash): events of ranks with equal domains have
// comparable times.
std::uint64_t clockDomain();

}  // namespace peerconf::harness::dataplane
