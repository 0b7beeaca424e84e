// The simulator's self-check (engine_check.h): the litmus table against its model, and the
// scheduler's use of the seed.
#include "dataplane/engine_check.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "clock.h"
#include "layout/clocked_mem_ops.h"
#include "sim_clock.h"
#include "sim_memory.h"

namespace peerconf::harness::dataplane {

using layout::Order;
using layout::Scope;
using layout::Word;

namespace {

LitmusOp st(int var, Word value, Order order = Order::kRelaxed, Scope scope = Scope::kSystem) {
  return LitmusOp{LitmusOp::kStore, var, value, -1, order, scope};
}
LitmusOp ld(int reg, int var, Order order = Order::kRelaxed, Scope scope = Scope::kSystem) {
  return LitmusOp{LitmusOp::kLoad, var, 0, reg, order, scope};
}
LitmusOp fence(Order order, Scope scope = Scope::kSystem) {
  return LitmusOp{LitmusOp::kFence, 0, 0, -1, order, scope};
}

constexpr int kX = 0;
constexpr int kY = 1;

// A clock whose only business is to hand ClockedMemOps the memory and the running thread.
class LitmusClock final : public Clock {
 public:
  explicit LitmusClock(SimMemory& memory) : memory_(memory) {}
  bool simulated() const noexcept override { return true; }
  TimePoint now() override { return {}; }
  void sleepUntil(TimePoint) override {}
  bool waitUntil(std::unique_lock<std::mutex>&, std::condition_variable&, TimePoint,
                 const std::function<bool()>& ready) override {
    return ready();
  }
  void notifyAll(std::condition_variable&) override {}
  SimMemory* simMemory() noexcept override { return &memory_; }
  int participant() const noexcept override { return thread; }
  int thread = 0;

 private:
  SimMemory& memory_;
};

// Follows a prefix of option indices, then takes option 0, recording every choice: the scheduler's
// (which thread runs next) and the memory's (which value a load reads, where a racing store lands).
class Enumerator final : public SimMemory::Choices {
 public:
  explicit Enumerator(std::vector<int> prefix) : prefix_(std::move(prefix)) {}
  int choose(int options) override {
    const std::size_t at = taken_.size();
    const int taken = at < prefix_.size() ? prefix_[at] : 0;
    taken_.push_back(taken);
    options_.push_back(options);
    return taken;
  }
  // The next prefix of the depth-first walk, or false when every execution has run.
  bool next(std::vector<int>& prefix) const {
    for (std::size_t i = taken_.size(); i-- > 0;) {
      if (taken_[i] + 1 < options_[i]) {
        prefix.assign(taken_.begin(), taken_.begin() + static_cast<std::ptrdiff_t>(i));
        prefix.push_back(taken_[i] + 1);
        return true;
      }
    }
    return false;
  }

 private:
  std::vector<int> prefix_;
  std::vector<int> taken_;
  std::vector<int> options_;
};

template <Order O, Scope S>
void runOp(const LitmusOp& op, Word* memory, LitmusOutcome& registers) {
  using A = layout::Access<layout::ClockedMemOps>;
  if (op.kind == LitmusOp::kLoad) {
    if constexpr (O != Order::kRelease) {
      registers[static_cast<std::size_t>(op.reg)] = A::load<O, S>(&memory[op.var]);
    }
  } else if (op.kind == LitmusOp::kStore) {
    if constexpr (O != Order::kAcquire) A::store<O, S>(&memory[op.var], op.value);
  } else {
    A::fence<O, S>();
  }
}

template <Scope S>
void runScoped(const LitmusOp& op, Word* memory, LitmusOutcome& registers) {
  switch (op.order) {
    case Order::kRelaxed:
      return runOp<Order::kRelaxed, S>(op, memory, registers);
    case Order::kAcquire:
      return runOp<Order::kAcquire, S>(op, memory, registers);
    case Order::kRelease:
      return runOp<Order::kRelease, S>(op, memory, registers);
    case Order::kAcqRel:
      return runOp<Order::kAcqRel, S>(op, memory, registers);
    case Order::kSeqCst:
      return runOp<Order::kSeqCst, S>(op, memory, registers);
  }
}

void run(const LitmusOp& op, Word* memory, LitmusOutcome& registers) {
  switch (op.scope) {
    case Scope::kBlock:
      return runScoped<Scope::kBlock>(op, memory, registers);
    case Scope::kDevice:
      return runScoped<Scope::kDevice>(op, memory, registers);
    case Scope::kSystem:
      return runScoped<Scope::kSystem>(op, memory, registers);
  }
}

// One execution: the threads' ops interleaved as `choices` says, on the simulator or, with
// `sequential`, on plain memory (every access atomic and in order: sequential consistency).
LitmusOutcome execute(const Litmus& test, SimMemory::Choices& choices, bool sequential) {
  Word memory[2] = {0, 0};
  LitmusOutcome registers(static_cast<std::size_t>(test.registers), 0);
  SimMemory simulated(static_cast<int>(test.threads.size()), choices);
  LitmusClock clock(simulated);
  std::vector<std::size_t> pc(test.threads.size(), 0);
  for (;;) {
    std::vector<int> runnable;
    for (std::size_t t = 0; t < test.threads.size(); ++t) {
      if (pc[t] < test.threads[t].size()) runnable.push_back(static_cast<int>(t));
    }
    if (runnable.empty()) break;
    const int pick = runnable.size() > 1 ? choices.choose(static_cast<int>(runnable.size())) : 0;
    const auto t = static_cast<std::size_t>(runnable[static_cast<std::size_t>(pick)]);
    const LitmusOp& op = test.threads[t][pc[t]++];
    if (sequential) {
      if (op.kind == LitmusOp::kLoad) registers[static_cast<std::size_t>(op.reg)] = memory[op.var];
      if (op.kind == LitmusOp::kStore) memory[op.var] = op.value;
      continue;
    }
    clock.thread = static_cast<int>(t);
    ThreadClockScope scope(clock);
    run(op, memory, registers);
  }
  if (test.finalMemory) {
    registers.push_back(memory[kX]);
    registers.push_back(memory[kY]);
  }
  return registers;
}

}  // namespace

LitmusOutcomes enumerateLitmus(const Litmus& test, bool sequential) {
  LitmusOutcomes out;
  std::vector<int> prefix;
  for (;;) {
    Enumerator choices(prefix);
    out.seen.insert(execute(test, choices, sequential));
    ++out.executions;
    if (!choices.next(prefix)) return out;
  }
}

std::string outcomeText(const LitmusOutcome& o) {
  std::string s;
  for (const Word w : o) s += (s.empty() ? "" : ",") + std::to_string(w);
  return "(" + s + ")";
}

// NOLINTNEXTLINE(readability-function-size): a flat table of litmus tests
std::vector<Litmus> litmusTable() {
  const Order rlx = Order::kRelaxed;
  const Order acq = Order::kAcquire;
  const Order rel = Order::kRelease;
  const Order sc = Order::kSeqCst;
  const Scope dev = Scope::kDevice;
  const Scope sys = Scope::kSystem;
  const LitmusVerdict yes = LitmusVerdict::kAllowed;
  const LitmusVerdict no = LitmusVerdict::kForbidden;
  std::vector<Litmus> tests;
  auto mp = [&](std::string name, std::vector<LitmusOp> writer, std::vector<LitmusOp> reader,
                LitmusVerdict v, std::string why) {
    tests.push_back(Litmus{std::move(name),
                           {std::move(writer), std::move(reader)},
                           2,
                           false,
                           {1, 0},
                           v,
                           std::move(why)});
  };
  mp("MP", {st(kX, 1), st(kY, 1)}, {ld(0, kY), ld(1, kX)}, yes, "RC11: no synchronization");
  mp("MP+rel+acq", {st(kX, 1), st(kY, 1, rel)}, {ld(0, kY, acq), ld(1, kX)}, no,
     "RC11: release/acquire synchronizes (coherence)");
  mp("MP+rel (reader without acquire)", {st(kX, 1), st(kY, 1, rel)}, {ld(0, kY), ld(1, kX)}, yes,
     "RC11: a release read relaxed synchronizes nothing");
  mp("MP+acq (relaxed flag)", {st(kX, 1), st(kY, 1)}, {ld(0, kY, acq), ld(1, kX)}, yes,
     "RC11: an acquire of a relaxed store synchronizes nothing");
  mp("MP+fences", {st(kX, 1), fence(rel), st(kY, 1)}, {ld(0, kY), fence(acq), ld(1, kX)}, no,
     "RC11: fence-to-fence synchronization");
  mp("MP+sc", {st(kX, 1, sc), st(kY, 1, sc)}, {ld(0, kY, sc), ld(1, kX, sc)}, no, "RC11: seq_cst");
  mp("MP+rel.dev+acq", {st(kX, 1), st(kY, 1, rel, dev)}, {ld(0, kY, acq), ld(1, kX)}, yes,
     "PTX: a release of device scope does not include the peer GPU's thread");
  mp("MP+rel+acq.dev", {st(kX, 1), st(kY, 1, rel)}, {ld(0, kY, acq, dev), ld(1, kX)}, yes,
     "PTX: an acquire of device scope does not include the peer GPU's thread");
  mp("MP+fence.dev+acq", {st(kX, 1), fence(rel, dev), st(kY, 1)}, {ld(0, kY, acq), ld(1, kX)}, yes,
     "PTX: a fence of device scope orders nothing against another GPU");
  mp("MP+fence.sc.dev+fence.sc", {st(kX, 1), fence(sc, dev), st(kY, 1)},
     {ld(0, kY), fence(sc), ld(1, kX)}, yes, "PTX: both fences must include both threads");

  auto sb = [&](std::string name, std::vector<LitmusOp> t0, std::vector<LitmusOp> t1,
                LitmusVerdict v, std::string why) {
    tests.push_back(Litmus{
        std::move(name), {std::move(t0), std::move(t1)}, 2, false, {0, 0}, v, std::move(why)});
  };
  sb("SB", {st(kX, 1), ld(0, kY)}, {st(kY, 1), ld(1, kX)}, yes, "RC11: store buffering");
  sb("SB+rel+acq", {st(kX, 1, rel), ld(0, kY, acq)}, {st(kY, 1, rel), ld(1, kX, acq)}, yes,
     "RC11: release/acquire does not forbid store buffering");
  sb("SB+sc", {st(kX, 1, sc), ld(0, kY, sc)}, {st(kY, 1, sc), ld(1, kX, sc)}, no, "RC11: seq_cst");
  sb("SB+fences", {st(kX, 1), fence(sc), ld(0, kY)}, {st(kY, 1), fence(sc), ld(1, kX)}, no,
     "RC11: seq_cst fences (psc)");
  sb("SB+fences.dev", {st(kX, 1), fence(sc, dev), ld(0, kY)},
     {st(kY, 1), fence(sc, dev), ld(1, kX)}, yes,
     "PTX: fences of device scope order nothing against another GPU");

  auto lb = [&](std::string name, std::vector<LitmusOp> t0, std::vector<LitmusOp> t1,
                LitmusVerdict v, std::string why, bool speculation) {
    tests.push_back(Litmus{std::move(name),
                           {std::move(t0), std::move(t1)},
                           2,
                           false,
                           {1, 1},
                           v,
                           std::move(why),
                           speculation});
  };
  lb("LB", {ld(0, kX), st(kY, 1)}, {ld(1, kY), st(kX, 1)}, no,
     "RC11: po and rf acyclic (PTX allows it: speculation)", true);
  lb("LB+acq+rel", {ld(0, kX, acq), st(kY, 1, rel)}, {ld(1, kY, acq), st(kX, 1, rel)}, no,
     "RC11 and PTX: release/acquire", false);

  auto iriw = [&](std::string name, Order load, const std::vector<LitmusOp>& between, Scope scope,
                  LitmusVerdict v, std::string why) {
    std::vector<LitmusOp> r0{ld(0, kX, load, scope)};
    std::vector<LitmusOp> r1{ld(2, kY, load, scope)};
    for (const LitmusOp& op : between) {
      r0.push_back(op);
      r1.push_back(op);
    }
    r0.push_back(ld(1, kY, load, scope));
    r1.push_back(ld(3, kX, load, scope));
    tests.push_back(
        Litmus{std::move(name),
               {{st(kX, 1, load == sc ? sc : rlx)}, {st(kY, 1, load == sc ? sc : rlx)}, r0, r1},
               4,
               false,
               {1, 0, 1, 0},
               v,
               std::move(why)});
  };
  iriw("IRIW", rlx, {}, sys, yes, "RC11: no synchronization");
  iriw("IRIW+acq", acq, {}, sys, yes, "RC11 and PTX: not multi-copy atomic for acquires");
  iriw("IRIW+fences", rlx, {fence(sc)}, sys, no, "RC11: seq_cst fences (psc)");
  iriw("IRIW+fences.dev", rlx, {fence(sc, dev)}, sys, yes,
       "PTX: fences of device scope order nothing against another GPU");
  iriw("IRIW+sc", sc, {}, sys, no, "RC11: seq_cst");

  auto wrc = [&](std::string name, Order release, Order acquire, LitmusVerdict v, std::string why) {
    tests.push_back(
        Litmus{std::move(name),
               {{st(kX, 1)}, {ld(0, kX), st(kY, 1, release)}, {ld(1, kY, acquire), ld(2, kX)}},
               3,
               false,
               {1, 1, 0},
               v,
               std::move(why)});
  };
  wrc("WRC", rlx, rlx, yes, "RC11: no synchronization");
  wrc("WRC+rel+acq", rel, acq, no, "RC11: hb is transitive (coherence)");
  wrc("WRC+rel", rel, rlx, yes, "RC11: a release read relaxed synchronizes nothing");

  auto w22 = [&](std::string name, Order order, const std::vector<LitmusOp>& between,
                 LitmusVerdict v, std::string why) {
    std::vector<LitmusOp> t0{st(kX, 1, order)};
    std::vector<LitmusOp> t1{st(kY, 1, order)};
    for (const LitmusOp& op : between) {
      t0.push_back(op);
      t1.push_back(op);
    }
    t0.push_back(st(kY, 2, order));
    t1.push_back(st(kX, 2, order));
    tests.push_back(Litmus{std::move(name), {t0, t1}, 0, true, {1, 1}, v, std::move(why)});
  };
  w22("2+2W", rlx, {}, yes, "RC11: modification orders need not agree with program order");
  w22("2+2W+rel", rel, {}, yes, "RC11: release/acquire allows it (RA, not SRA)");
  w22("2+2W+fences", rlx, {fence(sc)}, no, "RC11: seq_cst fences (psc)");
  w22("2+2W+fences.dev", rlx, {fence(sc, dev)}, yes,
      "PTX: fences of device scope order nothing against another GPU");
  w22("2+2W+sc", sc, {}, no, "RC11: seq_cst");

  tests.push_back(Litmus{"CoRR",
                         {{st(kX, 1), st(kX, 2)}, {ld(0, kX), ld(1, kX)}},
                         2,
                         false,
                         {2, 1},
                         no,
                         "RC11: coherence (read-read)"});
  return tests;
}

std::vector<std::string> litmusProblems(const Litmus& test, LitmusOutcomes* simulated) {
  std::vector<std::string> problems;
  std::set<LitmusOutcome> allowed = enumerateLitmus(test, true).seen;
  if (allowed.count(test.weak) != 0) {
    problems.push_back(test.name + ": the table is wrong: its weak outcome " +
                       outcomeText(test.weak) + " is sequentially consistent");
  }
  if (test.model == LitmusVerdict::kAllowed && !test.needsSpeculation) allowed.insert(test.weak);
  const LitmusOutcomes produced = enumerateLitmus(test, false);
  const std::string model = " (" + test.why + ")";
  for (const LitmusOutcome& o : produced.seen) {
    if (allowed.count(o) == 0) {
      problems.push_back(test.name + ": the simulator produced " + outcomeText(o) +
                         ", which the model forbids" + model);
    }
  }
  for (const LitmusOutcome& o : allowed) {
    if (produced.seen.count(o) == 0) {
      problems.push_back(test.name + ": the simulator never produced " + outcomeText(o) +
                         ", which the model allows" + model);
    }
  }
  if (simulated != nullptr) *simulated = produced;
  return problems;
}

namespace {

constexpr int kParticipants = 3;
constexpr int kPointsEach = 24;

}  // namespace

std::vector<int> schedulerTrace(std::uint64_t seed, bool fibers) {
  SimClock clock(kParticipants, seed);
  std::vector<int> trace;
  trace.reserve(static_cast<std::size_t>(kParticipants) * static_cast<std::size_t>(kPointsEach));
  // One participant at a time holds the turn, so the trace needs no lock of its own: the clock's
  // hand-over orders every append.
  auto job = [&](int id) {
    clock.attach(id);
    for (int k = 0; k < kPointsEach; ++k) {
      trace.push_back(id);
      clock.point();
    }
    clock.detach();
  };
  if (fibers) {
    std::vector<std::function<void()>> jobs;
    for (int id = 0; id < kParticipants; ++id) jobs.emplace_back([&job, id] { job(id); });
    clock.runFibers(std::move(jobs), [](int) {});
  } else {
    std::vector<std::thread> threads;
    for (int id = 0; id < kParticipants; ++id) threads.emplace_back(job, id);
    for (std::thread& t : threads) t.join();
  }
  return trace;
}

std::vector<std::uint64_t> checkedSeeds() { return {1, 2, 3, (std::uint64_t{1} << 32) | 1}; }

std::vector<std::string> seedProblems(const std::function<std::vector<int>(std::uint64_t)>& trace) {
  std::vector<std::string> problems;
  const std::vector<std::uint64_t> seeds = checkedSeeds();
  std::vector<std::vector<int>> traces;
  for (std::uint64_t seed : seeds) {
    traces.push_back(trace(seed));
    if (trace(seed) != traces.back()) {
      problems.push_back("seed " + std::to_string(seed) +
                         " interleaved the participants differently on its second run: a run "
                         "cannot be replayed from its seed");
    }
  }
  for (std::size_t a = 0; a < seeds.size(); ++a) {
    for (std::size_t b = a + 1; b < seeds.size(); ++b) {
      if (traces[a] == traces[b]) {
        problems.push_back("seeds " + std::to_string(seeds[a]) + " and " +
                           std::to_string(seeds[b]) +
                           " interleaved the participants alike: the scheduler does not draw "
                           "its choices from the whole seed, so --repeat and other seeds "
                           "explore nothing new");
      }
    }
  }
  return problems;
}

EngineCheck checkEngine(bool fibers) {
  const auto start = std::chrono::steady_clock::now();
  EngineCheck check;
  for (const Litmus& test : litmusTable()) {
    LitmusOutcomes simulated;
    for (std::string& problem : litmusProblems(test, &simulated)) {
      check.problems.push_back("memory model: " + std::move(problem));
    }
    check.executions += simulated.executions;
    ++check.litmusTests;
  }
  for (std::string& problem :
       seedProblems([fibers](std::uint64_t seed) { return schedulerTrace(seed, fibers); })) {
    check.problems.push_back(std::string("scheduler (") + (fibers ? "fibers" : "threads") +
                             "): " + std::move(problem));
  }
  // The check's own controls: each comparison must fail where it should, or its passing above
  // says nothing (a comparison made blind would pass any simulator). Two table tests with their
  // verdicts flipped, one each way: MP+rel+acq made allowed (the simulator never produces its weak
  // outcome: as a simulator that lost release/acquire would be seen from the other side) and SB
  // made forbidden (the simulator produces it); and a scheduler that ignores its seed.
  for (Litmus test : litmusTable()) {
    if (test.name != "MP+rel+acq" && test.name != "SB") continue;
    test.model =
        test.model == LitmusVerdict::kAllowed ? LitmusVerdict::kForbidden : LitmusVerdict::kAllowed;
    if (litmusProblems(test).empty()) {
      check.problems.push_back("self-check control: " + test.name +
                               " with its verdict flipped passed the litmus comparison, which "
                               "therefore judges nothing");
    }
  }
  std::vector<int> fixed = schedulerTrace(checkedSeeds().front(), fibers);
  if (seedProblems([&fixed](std::uint64_t) { return fixed; }).empty()) {
    check.problems.push_back(
        "self-check control: a scheduler that ignores its seed passed the seed comparison, which "
        "therefore judges nothing");
  }
  check.elapsedNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  return check;
}

}  // namespace peerconf::harness::dataplane
