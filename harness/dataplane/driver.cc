// The host driver: generation agreement, prefill, the step loop with delays and stops, abort.
#include "dataplane/driver.h"

#include <unistd.h>

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "clock.h"
#include "dataplane/recorder.h"
#include "layout/clocked_mem_ops.h"
#include "layout/engine.h"
#include "layout/generation.h"
#include "layout/layout_names.h"
#include "layout/payload.h"
#include "layout/rank_base.h"
#include "sim_memory.h"

namespace peerconf::harness::dataplane {

using model::DataplaneOutcome;
using model::Late;
using model::Prefill;
using model::Result;
using model::Role;
using model::shapeOf;
using model::Spec;

namespace {

using layout::describeSlot;
using layout::describeTag;
using layout::Word;

layout::Workload workloadOf(const Spec& spec) { return model::engineWorkload(spec.workload); }

std::int64_t sinceNs(Clock::TimePoint start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(threadClock().now() - start).count();
}

void runSteps(const Spec& spec, const RankMemory& memory, layout::Session& session,
              std::chrono::milliseconds timeout, Result& result) {
  layout::Tally tally;
  const int rank = memory.rank;
  for (std::uint64_t step = 0; step < spec.steps; ++step) {
    if (spec.stop && spec.stop->rank == rank && spec.stop->step == step) {
      result.outcome = DataplaneOutcome::kStopped;
      result.detail = stopDetail(rank, step);
      break;
    }
    const auto epoch = static_cast<std::uint32_t>(spec.startEpoch + step);
    for (const Late& late : spec.late) {
      if (late.rank == rank && late.role == Role::kWriter && late.firesAt(step)) {
        threadClock().sleepFor(late.delay);
      }
    }
    layout::Wait wait = session.pushPhase(step, epoch);
    if (wait.ok()) {
      for (const Late& late : spec.late) {
        if (late.rank == rank && late.role == Role::kReader && late.firesAt(step)) {
          threadClock().sleepFor(late.delay);
        }
      }
      wait = session.readPhase(step, epoch, tally);
    }
    if (!wait.ok()) {
      describeWait(wait, spec, timeout, result);
      // Tell the others at once, so that they report within one deadline instead of each
      // waiting out its own.
      if (wait.status == layout::Status::kTimeout) session.abort();
      break;
    }
    result.stepsDone = step + 1;
  }
  if (result.stepsDone == spec.steps) {
    result.outcome = DataplaneOutcome::kCompleted;
    result.detail.clear();
  }
  result.pairsRead = tally.pairs;
  result.pairsGenuine = tally.genuine;
  result.overwrites = tally.overwritten;
  result.stale = tally.stale;
  result.wrongResults = tally.wrongResults;
}

}  // namespace

void describeWait(const layout::Wait& wait, const Spec& spec, std::chrono::milliseconds timeout,
                  Result& result) {
  result.waitWhat = layout::waitForName(wait.what);
  result.waitPeer = wait.peer;
  result.waitSlot = wait.slot;
  result.waitEpoch = wait.epoch;
  result.waitStep = wait.step;
  result.abortedBy = wait.abortedBy;
  const std::string peer = std::to_string(wait.peer);
  const std::string me = std::to_string(wait.rank);
  std::string where;
  switch (wait.what) {
    case layout::WaitFor::kAck:
      where = "rank " + peer + "'s acknowledgement of epoch " +
              std::to_string(wait.epoch - static_cast<std::uint32_t>(spec.depth)) +
              " before pushing epoch " + std::to_string(wait.epoch) + " (step " +
              std::to_string(wait.step) + ") into " + describeSlot(wait.slot, wait.rank) +
              " of rank " + peer + "'s buffer";
      break;
    case layout::WaitFor::kPair:
    case layout::WaitFor::kArrival:
      where = "rank " + peer + "'s pair of epoch " + std::to_string(wait.epoch) + " (step " +
              std::to_string(wait.step) + ") at " + describeSlot(wait.slot, wait.peer) +
              " of rank " + me + "'s buffer";
      break;
    case layout::WaitFor::kNothing:
      where = "nothing";
      break;
  }
  if (wait.status == layout::Status::kTimeout) {
    result.outcome = DataplaneOutcome::kTimeout;
    result.detail = "rank " + me + " timed out after " + std::to_string(timeout.count()) +
                    " ms waiting for " + where + "; last saw " + describeTag(wait.seen);
  } else {
    result.outcome = DataplaneOutcome::kAborted;
    result.detail = "rank " + me + " stopped waiting for " + where + ": rank " +
                    std::to_string(wait.abortedBy) + " gave up on the run";
  }
}

void closingBarrier(Group* group, Result& result) {
  try {
    if (group != nullptr) group->allReduceMin(1);  // nobody closes while a peer may write
  } catch (const std::exception& e) {
    result.detail +=
        std::string(result.detail.empty() ? "" : "; ") + "the closing barrier failed: " + e.what();
    if (result.outcome == DataplaneOutcome::kCompleted) result.outcome = DataplaneOutcome::kError;
  }
}

std::string stopDetail(int rank, std::uint64_t step) {
  return "rank " + std::to_string(rank) + " stopped at step " + std::to_string(step) +
         " as planned";
}

std::uint32_t earlierGeneration(std::uint32_t generation) {
  const std::uint32_t earlier = generation ^ 0x5bd1e995u;
  return earlier == 0 ? 1u : earlier;
}

std::uint64_t clockDomain() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a
  for (const char* c = host; *c != '\0'; ++c) {
    hash = (hash ^ static_cast<unsigned char>(*c)) * 1099511628211ULL;
  }
  return hash;
}

void prefill(const Spec& spec, const layout::Engine& engine, const layout::Shape& shape, int rank,
             Word* buffer, std::uint32_t generation) {
  if (spec.prefill == Prefill::kNone) return;
  const int reader = model::readsAllReduceInputs(spec.workload) ? layout::kAnyReader : rank;
  const std::uint32_t start = spec.startEpoch;
  const auto slots = static_cast<std::uint32_t>(engine.slots(shape));
  if (spec.prefill == Prefill::kStaleEpochs) {
    // As if this buffer had already run the steps before `start`, all of them consumed.
    for (int source = 0; source < shape.ranks; ++source) {
      if (source == rank) continue;
      for (std::uint32_t back = 2 * slots; back >= 1; --back) {
        engine.writeEarlierPair(shape, buffer, source, reader, generation, start - back);
      }
    }
    for (int r = 0; r < shape.ranks; ++r) {
      engine.writeEarlierAck(shape, buffer, r, generation, start - 1);
    }
  } else {
    // An earlier buffer at the same memory that used the very epochs this run is about to.
    const std::uint32_t earlier = earlierGeneration(generation);
    for (int source = 0; source < shape.ranks; ++source) {
      if (source == rank) continue;
      for (std::uint32_t ahead = 0; ahead < slots; ++ahead) {
        engine.writeEarlierPair(shape, buffer, source, reader, earlier, start + ahead);
      }
    }
    for (int r = 0; r < shape.ranks; ++r) {
      engine.writeEarlierAck(shape, buffer, r, earlier, start - 1);
    }
    if (spec.prefill == Prefill::kEarlierAbort) {
      // That life ended with a rank giving up (the next rank's, here): its abort word is left in
      // word 0, where every layout's waits look (rank_base.h). This run's generation differs, so
      // the word must not stop it.
      const auto gaveUp = static_cast<std::uint32_t>((rank + 1) % shape.ranks);
      __atomic_store_n(buffer + layout::kAbortWord,
                       layout::makeTag(earlier, layout::kAbortBit | gaveUp), __ATOMIC_RELAXED);
    }
  }
}

void describeRun(const Spec& spec, int ranks, std::chrono::milliseconds timeout, Result& result) {
  result.layout = spec.layout;
  result.workload = toString(spec.workload);
  result.ranks = ranks;
  result.depth = spec.depth;
  result.payloadWords = spec.payload;
  result.startEpoch = spec.startEpoch;
  result.stepsPlanned = spec.steps;
  result.timeoutNs = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  result.clockDomain = clockDomain();
  // Under two-in-flight the history counts collectives, two a step.
  result.historySteps =
      std::min(spec.history, spec.steps) * model::collectivesPerStep(spec.workload);
}

const layout::Engine* startLayout(const Spec& spec, int ranks, std::size_t bytes, Result& result,
                                  layout::Shape& shape) {
  const layout::Registered* found = layout::findLayout(spec.layout);
  if (found == nullptr) {
    result.outcome = DataplaneOutcome::kError;
    result.detail = "unknown layout '" + spec.layout + "'";
    return nullptr;
  }
  const layout::Engine& engine = *found->engine;
  shape = shapeOf(spec, ranks);
  const std::string why = engine.invalidReason(shape, workloadOf(spec));
  if (!why.empty()) {
    result.outcome = DataplaneOutcome::kError;
    result.detail = "layout " + spec.layout + ": " + why;
    return nullptr;
  }
  result.slots = engine.slots(shape);
  if (engine.bytes(shape) > bytes) {
    result.outcome = DataplaneOutcome::kError;
    result.detail = "layout " + spec.layout + " needs " + std::to_string(engine.bytes(shape)) +
                    " bytes for " + std::to_string(ranks) + " ranks, the buffer has " +
                    std::to_string(bytes);
    return nullptr;
  }
  return &engine;
}

namespace {

// Simulated weak memory: every rank's mapping of rank p's buffer (the mocked runtime maps it
// anew in each rank) is the same words, rank p's.
void aliasBuffers(const RankMemory& memory) {
  Clock& clock = threadClock();
  SimMemory* simulated = clock.simMemory();
  if (simulated == nullptr || clock.participant() < 0) return;
  for (std::size_t p = 0; p < memory.buffers.size(); ++p) {
    simulated->alias(memory.buffers[p], memory.bytes, p);
  }
}

}  // namespace

Result runRank(const Spec& spec, const RankMemory& memory, Group* group,
               std::chrono::milliseconds timeout) {
  const auto start = threadClock().now();
  const int ranks = static_cast<int>(memory.buffers.size());
  Result result;
  describeRun(spec, ranks, timeout, result);

  // Every rank decides these alike (same scenario, same buffer size) before any group call.
  layout::Shape shape;
  const layout::Engine* engine = startLayout(spec, ranks, memory.bytes, result, shape);
  if (engine == nullptr) return result;

  Word* own = memory.buffers.at(static_cast<std::size_t>(memory.rank));
  aliasBuffers(memory);
  layout::Context context{shape, memory.rank, 0, memory.buffers.data(),
                          static_cast<std::uint64_t>(result.timeoutNs)};
  try {
    result.generation = layout::agreeGeneration(
        group, [&](std::uint32_t g) { return engine->generationInUse(shape, own, g); });
    context.generation = result.generation;
    prefill(spec, *engine, shape, memory.rank, own, result.generation);
    // The layout's hook: this rank's own region made ready before any peer may write to it.
    engine->initOwn(context, spec.startEpoch);
    layout::ClockedMemOps::drain();
    if (group != nullptr) group->allReduceMin(1);  // every buffer ready before any push
  } catch (const std::exception& e) {
    // The group is broken: no rank can know that every peer is ready, so none touches peer
    // memory.
    result.outcome = DataplaneOutcome::kError;
    result.detail = std::string("could not start the data plane: ") + e.what();
    result.elapsedNs = sinceNs(start);
    return result;
  }

  result.history.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(
      result.historySteps * 3 * static_cast<std::uint64_t>(ranks), 1 << 20)));
  Recorder recorder(memory.rank, result.historySteps, result, spec.values,
                    model::readsAllReduceInputs(spec.workload));
  // Simulated weak memory: the stores this rank still holds land before it leaves, thrown out
  // or not (its thread may run another rank's data plane next).
  struct DrainAtExit {
    DrainAtExit() = default;
    DrainAtExit(const DrainAtExit&) = delete;
    DrainAtExit& operator=(const DrainAtExit&) = delete;
    ~DrainAtExit() { layout::ClockedMemOps::drain(); }
  } drainAtExit;
  const std::unique_ptr<layout::Session> session =
      engine->open(context, recorder, workloadOf(spec));
  runSteps(spec, memory, *session, timeout, result);

  // Before the closing barrier: the peers read the last pairs after it.
  layout::ClockedMemOps::drain();
  closingBarrier(group, result);
  result.elapsedNs = sinceNs(start);
  return result;
}

}  // namespace peerconf::harness::dataplane
