// The simulator's self-check (issue 42 item 3): every verdict on simulated time rests on the weak
// memory and the seeded scheduler, so `peerconf run` checks them before it judges anything, and
// refuses to judge on a failure. Two parts, each a few milliseconds:
//   - the litmus table (MP, SB, LB, IRIW, WRC, 2+2W and CoRR, with and without fences and scopes)
//     run through the path the data plane takes (Access<ClockedMemOps> over SimMemory), every
//     interleaving and every memory choice enumerated, its outcome set compared test by test with
//     the named model's allowed set: RC11 (Lahav et al., PLDI 2017) for the orders, the PTX model
//     (Lustig et al., ASPLOS 2019) where a scope narrower than system decides it;
//   - the scheduler's use of the seed: a small program of three participants run on SimClock
//     under a few seeds, on the run's engine, twice each: the same seed must give the same
//     interleaving, different seeds different ones.
// The one copy of the table: ctest (tests/src/sim_memory_test.cc) runs it too.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "layout/mem_ops.h"
#include "layout/tag.h"

namespace peerconf::harness::dataplane {

// ---- The litmus table -----------------------------------------------------------------------

struct LitmusOp {
  enum Kind { kLoad, kStore, kFence } kind = kLoad;
  int var = 0;
  layout::Word value = 0;  // a store's
  int reg = -1;            // a load's
  layout::Order order = layout::Order::kRelaxed;
  layout::Scope scope = layout::Scope::kSystem;
};

enum class LitmusVerdict { kAllowed, kForbidden };

using LitmusOutcome = std::vector<layout::Word>;

struct Litmus {
  std::string name;
  std::vector<std::vector<LitmusOp>> threads;
  int registers = 0;
  bool finalMemory = false;  // the outcome ends with x and y as memory holds them at the end
  LitmusOutcome weak;        // the outcome the test is about
  LitmusVerdict model = LitmusVerdict::kForbidden;
  std::string why;                // the model and the rule that decides it
  bool needsSpeculation = false;  // allowed by PTX, not producible by an executing simulator
};

// Every test, in a fixed order.
std::vector<Litmus> litmusTable();

struct LitmusOutcomes {
  std::set<LitmusOutcome> seen;
  std::uint64_t executions = 0;
};

// Every outcome of `test`: on the simulator, or with `sequential` on plain memory (every access
// atomic and in program order: the sequentially consistent outcomes).
LitmusOutcomes enumerateLitmus(const Litmus& test, bool sequential);

// "(1,0)"
std::string outcomeText(const LitmusOutcome& outcome);

// What the simulator gets wrong on `test`: an outcome the model forbids that it produces, or one
// the model allows that it never produces (the weak outcome of a test that needs speculation is
// left out of the allowed set: LB's, which PTX allows and RC11 forbids). Empty when right.
// `simulated`, when given, receives the simulator's outcomes.
std::vector<std::string> litmusProblems(const Litmus& test, LitmusOutcomes* simulated = nullptr);

// ---- The scheduler's seed -------------------------------------------------------------------

// The interleaving of the check's program under a SimClock seeded `seed`: three participants, each
// taking 24 call points, recorded as the participant id at each point. On the fiber engine
// (SimClock::runFibers) or, with `fibers` false, a thread a participant.
std::vector<int> schedulerTrace(std::uint64_t seed, bool fibers);

// The seeds the check compares (the last one differs from the first in its high 32 bits only).
std::vector<std::uint64_t> checkedSeeds();

// What is wrong with how `trace` uses its seed, over checkedSeeds(): a seed whose two runs
// interleave differently, or two seeds that interleave alike. Empty when right.
std::vector<std::string> seedProblems(const std::function<std::vector<int>(std::uint64_t)>& trace);

// ---- Both ---------------------------------------------------------------------------------

struct EngineCheck {
  std::vector<std::string> problems;  // empty: the simulator may judge
  int litmusTests = 0;
  std::uint64_t executions = 0;  // enumerated, over the whole table (simulator and sequential)
  std::int64_t elapsedNs = 0;    // real time the check took
  bool ok() const { return problems.empty(); }
};

// The litmus table and the seed check on `fibers`' engine, then their own controls: two table
// tests with their verdicts flipped (one allowed made forbidden, one forbidden made allowed) and a
// scheduler that ignores its seed must each fail its comparison (else the comparison is blind,
// and that is a problem too).
EngineCheck checkEngine(bool fibers);

}  // namespace peerconf::harness::dataplane
