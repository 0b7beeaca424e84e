// The litmus suite of simulated time's weak memory (issue 28 item 3): MP, SB, LB, IRIW, WRC and
// 2+2W (and CoRR), each with and without fences and scopes, run through the very path the data
// plane takes (Access<ClockedMemOps> on a clock whose SimMemory it is), every interleaving and
// every choice of the memory enumerated. The set of outcomes the simulator produces is compared,
// test by test, with the published model's allowed set: RC11 (Lahav, Vafeiadis, Kang, Hur,
// Dreyer, "Repairing sequential consistency in C/C++11", PLDI 2017) for the orders, the PTX model
// (Lustig, Sahasrabuddhe, Giroux, "A formal analysis of the NVIDIA PTX memory consistency model",
// ASPLOS 2019) where a scope narrower than system decides it. Every thread is a rank on its own
// GPU. The allowed set is the test's sequentially consistent outcomes (enumerated here on plain
// memory) plus its weak outcome where the model allows it. What the simulator cannot produce is
// listed by test: LB's weak outcome, which PTX allows and RC11 forbids, needs a load to read a
// store its own thread's later events lead to (speculation).
#include "sim_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "clock.h"
#include "layout/clocked_mem_ops.h"

namespace peerconf::sim_memory_litmus {
namespace {

using layout::Order;
using layout::Scope;
using layout::Word;
using Outcome = std::vector<Word>;

struct LitmusOp {
  enum Kind { kLoad, kStore, kFence } kind = kLoad;
  int var = 0;
  Word value = 0;  // a store's
  int reg = -1;    // a load's
  Order order = Order::kRelaxed;
  Scope scope = Scope::kSystem;
};

LitmusOp st(int var, Word value, Order order = Order::kRelaxed, Scope scope = Scope::kSystem) {
  return LitmusOp{LitmusOp::kStore, var, value, -1, order, scope};
}
LitmusOp ld(int reg, int var, Order order = Order::kRelaxed, Scope scope = Scope::kSystem) {
  return LitmusOp{LitmusOp::kLoad, var, 0, reg, order, scope};
}
LitmusOp fence(Order order, Scope scope = Scope::kSystem) {
  return LitmusOp{LitmusOp::kFence, 0, 0, -1, order, scope};
}

enum class Verdict { kAllowed, kForbidden };

struct Litmus {
  std::string name;
  std::vector<std::vector<LitmusOp>> threads;
  int registers = 0;
  bool finalMemory = false;  // the outcome ends with x and y as memory holds them at the end
  Outcome weak;              // the outcome the test is about
  Verdict model = Verdict::kForbidden;
  std::string why;                // the model and the rule that decides it
  bool needsSpeculation = false;  // allowed by PTX, not producible by an executing simulator
};

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
void runOp(const LitmusOp& op, Word* memory, Outcome& registers) {
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
void runScoped(const LitmusOp& op, Word* memory, Outcome& registers) {
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

void run(const LitmusOp& op, Word* memory, Outcome& registers) {
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
Outcome execute(const Litmus& test, SimMemory::Choices& choices, bool sequential) {
  Word memory[2] = {0, 0};
  Outcome registers(static_cast<std::size_t>(test.registers), 0);
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

struct Outcomes {
  std::set<Outcome> seen;
  std::uint64_t executions = 0;
};

Outcomes enumerate(const Litmus& test, bool sequential) {
  Outcomes out;
  std::vector<int> prefix;
  for (;;) {
    Enumerator choices(prefix);
    out.seen.insert(execute(test, choices, sequential));
    ++out.executions;
    if (!choices.next(prefix)) return out;
  }
}

std::string text(const Outcome& o) {
  std::string s;
  for (const Word w : o) s += (s.empty() ? "" : ",") + std::to_string(w);
  return "(" + s + ")";
}

std::vector<Litmus> suite() {
  const Order rlx = Order::kRelaxed;
  const Order acq = Order::kAcquire;
  const Order rel = Order::kRelease;
  const Order sc = Order::kSeqCst;
  const Scope dev = Scope::kDevice;
  const Scope sys = Scope::kSystem;
  const Verdict yes = Verdict::kAllowed;
  const Verdict no = Verdict::kForbidden;
  std::vector<Litmus> tests;
  auto mp = [&](std::string name, std::vector<LitmusOp> writer, std::vector<LitmusOp> reader,
                Verdict v, std::string why) {
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

  auto sb = [&](std::string name, std::vector<LitmusOp> t0, std::vector<LitmusOp> t1, Verdict v,
                std::string why) {
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

  auto lb = [&](std::string name, std::vector<LitmusOp> t0, std::vector<LitmusOp> t1, Verdict v,
                std::string why, bool speculation) {
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

  auto iriw = [&](std::string name, Order load, std::vector<LitmusOp> between, Scope scope,
                  Verdict v, std::string why) {
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

  auto wrc = [&](std::string name, Order release, Order acquire, Verdict v, std::string why) {
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

  auto w22 = [&](std::string name, Order order, std::vector<LitmusOp> between, Verdict v,
                 std::string why) {
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

// Every test: the simulator's outcomes are the model's allowed set, no more and no fewer, save
// what the test lists as needing speculation.
TEST(SimMemoryLitmus, EveryTestProducesExactlyTheModelsAllowedOutcomes) {
  for (const Litmus& test : suite()) {
    SCOPED_TRACE(test.name);
    const Outcomes sequential = enumerate(test, true);
    std::set<Outcome> allowed = sequential.seen;
    ASSERT_EQ(allowed.count(test.weak), 0u) << "the weak outcome must not be sequential";
    if (test.model == Verdict::kAllowed) allowed.insert(test.weak);
    const Outcomes simulated = enumerate(test, false);
    const bool weakSeen = simulated.seen.count(test.weak) != 0;
    std::cout << "  " << test.name << ": weak " << text(test.weak) << " "
              << (test.model == Verdict::kAllowed ? "allowed" : "forbidden") << " (" << test.why
              << "), simulator " << (weakSeen ? "produces it" : "does not")
              << (test.needsSpeculation ? " [PTX allows it: needs speculation]" : "") << "; "
              << simulated.seen.size() << " outcomes in " << simulated.executions
              << " executions\n";
    for (const Outcome& o : simulated.seen) {
      EXPECT_TRUE(allowed.count(o) != 0) << "produced an outcome the model forbids: " << text(o);
    }
    for (const Outcome& o : allowed) {
      EXPECT_TRUE(simulated.seen.count(o) != 0) << "never produced an allowed outcome: " << text(o);
    }
  }
}

// The comparison can fail: a model that took every release as a no-op would produce MP+rel+acq's
// weak outcome; here a test whose verdict is flipped must fail the comparison.
TEST(SimMemoryLitmus, AFlippedVerdictIsCaught) {
  for (const Litmus& original : suite()) {
    if (original.name != "MP+rel+acq" && original.name != "SB") continue;
    Litmus test = original;
    test.model = test.model == Verdict::kAllowed ? Verdict::kForbidden : Verdict::kAllowed;
    std::set<Outcome> allowed = enumerate(test, true).seen;
    if (test.model == Verdict::kAllowed) allowed.insert(test.weak);
    EXPECT_NE(enumerate(test, false).seen, allowed) << test.name;
  }
}

}  // namespace
}  // namespace peerconf::sim_memory_litmus
