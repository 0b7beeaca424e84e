// ClockedMemOps (clocked_mem_ops.h): on the real clock every store is visible at once; on
// simulated time every access goes through the run's SimMemory (weak memory, issue 28 item 3): a
// rank reads its own stores, another rank may read a word's older value unless a release it
// acquired ordered it, scopes narrower than system order nothing against another rank, and the
// same seed gives the same values. (The model itself, against the published litmus outcomes:
// tests/src/sim_memory_test.cc.)
#include "layout/clocked_mem_ops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "sim_clock.h"

namespace peerconf::harness::dataplane {
namespace {

using Mem = layout::ClockedMemOps;
using layout::Order;
using layout::Scope;
using layout::Word;
using Mo = layout::Access<Mem>;

// Runs `body` as the only participant of a simulated clock seeded `seed`.
template <typename Body>
void onSimulatedTime(std::uint64_t seed, Body&& body) {
  SimClock clock(1, seed);
  clock.attach(0);
  {
    ThreadClockScope scope(clock);
    body();
  }
  clock.detach();
}

// Runs `bodies[i]` as participant i of a simulated clock seeded `seed`, each on its own thread.
void onSimulatedRanks(std::uint64_t seed, const std::vector<std::function<void()>>& bodies) {
  SimClock clock(static_cast<int>(bodies.size()), seed);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    threads.emplace_back([&, i] {
      clock.attach(static_cast<int>(i));
      {
        ThreadClockScope scope(clock);
        bodies[i]();
      }
      clock.detach();
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(ClockedMemOps, OnTheRealClockARelaxedStoreIsVisibleAtOnce) {
  Word word = 0;
  Mem::storeRelaxed(&word, 7);
  EXPECT_EQ(__atomic_load_n(&word, __ATOMIC_RELAXED), 7u);
  Mem::storeReleaseAt(&word, 5, Scope::kDevice);
  EXPECT_EQ(__atomic_load_n(&word, __ATOMIC_RELAXED), 5u);
}

TEST(ClockedMemOps, OnSimulatedTimeARankReadsItsOwnStoresAndMemoryHoldsTheNewest) {
  onSimulatedTime(1, [] {
    Word word = 0;
    for (Word v = 1; v <= 20; ++v) {
      Mo::store<Order::kRelaxed>(&word, v);
      EXPECT_EQ(Mo::load<Order::kRelaxed>(&word), v) << "its own rank never reads older";
      EXPECT_EQ(__atomic_load_n(&word, __ATOMIC_RELAXED), v);
    }
  });
}

// Message passing over two ranks: 4 payload words then a flag, the reader waits for the flag and
// reads the payload. Returns how many of `seeds` runs read a payload word older than the flag's.
// Each order and scope is a template argument, as a layout writes them.
template <Order Store, Scope StoreScope, Order Load, Scope LoadScope>
int staleRuns(int seeds) {
  int stale = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::vector<Word> payload(4, 0);
    Word flag = 0;
    bool old = false;
    onSimulatedRanks(static_cast<std::uint64_t>(seed),
                     {[&] {
                        for (Word& w : payload) Mo::store<Order::kRelaxed>(&w, 1);
                        Mo::store<Store, StoreScope>(&flag, 1);
                      },
                      [&] {
                        while (Mo::load<Load, LoadScope>(&flag) != 1) Mem::pause(1, &flag, 0);
                        for (Word& w : payload) old = old || Mo::load<Order::kRelaxed>(&w) != 1;
                      }});
    if (old) ++stale;
  }
  return stale;
}

TEST(ClockedMemOps, AReleaseTheReaderAcquiresOrdersThePayloadOnSimulatedTime) {
  EXPECT_EQ((staleRuns<Order::kRelease, Scope::kSystem, Order::kAcquire, Scope::kSystem>(64)), 0);
  EXPECT_EQ((staleRuns<Order::kSeqCst, Scope::kSystem, Order::kSeqCst, Scope::kSystem>(16)), 0);
}

// The negative controls of the test above: each missing piece shows old payloads on some seed.
TEST(ClockedMemOps, ARelaxedFlagADeviceScopeOrAMissingAcquireLetsOldPayloadsThrough) {
  EXPECT_GT((staleRuns<Order::kRelaxed, Scope::kSystem, Order::kAcquire, Scope::kSystem>(64)), 0)
      << "flag stored relaxed";
  EXPECT_GT((staleRuns<Order::kRelease, Scope::kSystem, Order::kRelaxed, Scope::kSystem>(64)), 0)
      << "reader without acquire";
  EXPECT_GT((staleRuns<Order::kRelease, Scope::kDevice, Order::kAcquire, Scope::kSystem>(64)), 0)
      << "release of device scope";
  EXPECT_GT((staleRuns<Order::kRelease, Scope::kSystem, Order::kAcquire, Scope::kDevice>(64)), 0)
      << "acquire of device scope";
}

TEST(ClockedMemOps, TheSameSeedReadsTheSameValues) {
  auto run = [](std::uint64_t seed) {
    std::vector<Word> seen;
    std::vector<Word> words(6, 0);
    Word flag = 0;
    onSimulatedRanks(seed, {[&] {
                              for (Word round = 1; round <= 3; ++round) {
                                for (Word& w : words) Mo::store<Order::kRelaxed>(&w, round);
                                Mo::store<Order::kRelaxed>(&flag, round);
                              }
                            },
                            [&] {
                              while (Mo::load<Order::kRelaxed>(&flag) != 3) Mem::pause(1, &flag, 0);
                              for (Word& w : words) seen.push_back(Mo::load<Order::kRelaxed>(&w));
                            }});
    return seen;
  };
  bool older = false;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const std::vector<Word> first = run(seed);
    EXPECT_EQ(run(seed), first) << "seed " << seed << " replays";
    for (const Word w : first) older = older || w != 3;
  }
  EXPECT_TRUE(older) << "some seed reads an older value";
}

// drain(): this rank's side of a barrier. Afterwards no rank reads what it wrote older.
TEST(ClockedMemOps, AfterDrainNoRankReadsOlder) {
  for (std::uint64_t seed = 1; seed <= 32; ++seed) {
    std::vector<Word> words(4, 0);
    Word flag = 0;
    bool old = false;
    onSimulatedRanks(seed, {[&] {
                              for (Word& w : words) Mo::store<Order::kRelaxed>(&w, 1);
                              Mem::drain();
                              Mo::store<Order::kRelaxed>(&flag, 1);
                            },
                            [&] {
                              while (Mo::load<Order::kRelaxed>(&flag) != 1) Mem::pause(1, &flag, 0);
                              for (Word& w : words) old = old || Mo::load<Order::kRelaxed>(&w) != 1;
                            }});
    EXPECT_FALSE(old) << "seed " << seed;
  }
}

// Scopes (mem_ops.h): Access<M> hands an acquire, a release or a fence narrower than system scope
// to M's scoped operation when M has one (ClockedMemOps: on simulated time it orders nothing for
// the other ranks, other devices), and to the system-scope operation otherwise (stronger). A MemOps
// that records what it was asked shows the dispatch.
struct Recording {
  static inline std::vector<std::string> calls;
  static Word loadAcquire(const Word* w) {
    calls.emplace_back("loadAcquire");
    return *w;
  }
  static Word loadRelaxed(const Word* w) {
    calls.emplace_back("loadRelaxed");
    return *w;
  }
  static void storeRelease(Word* w, Word v) {
    calls.emplace_back("storeRelease");
    *w = v;
  }
  static void storeRelaxed(Word* w, Word v) {
    calls.emplace_back("storeRelaxed");
    *w = v;
  }
  static void fenceAcquire() { calls.emplace_back("fenceAcquire"); }
  static void fenceRelease() { calls.emplace_back("fenceRelease"); }
  static void fenceSeqCst() { calls.emplace_back("fenceSeqCst"); }
  static void pause(std::uint32_t, const Word*, Word) {}
  static std::uint64_t nowNs() { return 0; }
};
struct ScopedRecording : Recording {
  static Word loadAcquireAt(const Word* w, layout::Scope s) {
    calls.emplace_back(std::string("loadAcquireAt ") + layout::scopeName(s));
    return *w;
  }
  static void fenceAcquireAt(layout::Scope s) {
    calls.emplace_back(std::string("fenceAcquireAt ") + layout::scopeName(s));
  }
  static void storeReleaseAt(Word* w, Word v, layout::Scope s) {
    calls.emplace_back(std::string("storeReleaseAt ") + layout::scopeName(s));
    *w = v;
  }
  static void fenceReleaseAt(layout::Scope s) {
    calls.emplace_back(std::string("fenceReleaseAt ") + layout::scopeName(s));
  }
  static void fenceSeqCstAt(layout::Scope s) {
    calls.emplace_back(std::string("fenceSeqCstAt ") + layout::scopeName(s));
  }
};

TEST(ClockedMemOps, AScopeNarrowerThanSystemGoesToTheScopedOperationWhereThereIsOne) {
  Word w = 0;
  Recording::calls.clear();
  layout::Access<ScopedRecording>::fence<Order::kRelease, Scope::kDevice>();
  layout::Access<ScopedRecording>::fence<Order::kSeqCst, Scope::kBlock>();
  layout::Access<ScopedRecording>::store<Order::kRelease, Scope::kDevice>(&w, 1);
  layout::Access<ScopedRecording>::fence<Order::kRelease, Scope::kSystem>();
  layout::Access<ScopedRecording>::store<Order::kRelease>(&w, 2);
  layout::Access<ScopedRecording>::fence<Order::kAcquire, Scope::kDevice>();
  (void)layout::Access<ScopedRecording>::load<Order::kAcquire, Scope::kBlock>(&w);
  layout::Access<ScopedRecording>::fence<Order::kAcquire>();
  EXPECT_EQ(Recording::calls, (std::vector<std::string>{
                                  "fenceReleaseAt device", "fenceSeqCstAt block",
                                  "storeReleaseAt device", "fenceRelease", "storeRelease",
                                  "fenceAcquireAt device", "loadAcquireAt block", "fenceAcquire"}));
  // Without scoped operations, every scope runs at system scope.
  Recording::calls.clear();
  layout::Access<Recording>::fence<Order::kRelease, Scope::kDevice>();
  layout::Access<Recording>::store<Order::kRelease, Scope::kBlock>(&w, 3);
  EXPECT_EQ(Recording::calls, (std::vector<std::string>{"fenceRelease", "storeRelease"}));
  EXPECT_EQ(w, 3u);

  EXPECT_STREQ(layout::orderName(layout::Order::kAcqRel), "acq_rel");
  EXPECT_STREQ(layout::scopeName(layout::Scope::kSystem), "system");
}

}  // namespace
}  // namespace peerconf::harness::dataplane
