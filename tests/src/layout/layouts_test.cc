// The layout registry (layouts.cc, engine.h, register.h): the built-in layouts first, in their
// order, with their controls marked; a team's layout registered from outside is found by name and
// runs through its engine on host threads, its records reaching the observer. The team layout
// here is the worked example's (ci/examples/protocol-layout/counter_flags.h), so that every
// sanitizer build runs it too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "../../../ci/examples/protocol-layout/counter_flags.h"
#include "layout/engine.h"
#include "layout/layout_names.h"
#include "layout/register.h"

namespace peerconf::layout {
namespace {

TEST(Layouts, TheBuiltInLayoutsComeFirstWithTheirControlsMarked) {
  const std::vector<std::string> builtins = layoutNames();
  const std::vector<std::string> names = registeredLayoutNames();
  ASSERT_GE(names.size(), builtins.size());
  EXPECT_TRUE(std::equal(builtins.begin(), builtins.end(), names.begin()));
  ASSERT_NE(findLayout("reference"), nullptr);
  EXPECT_FALSE(findLayout("reference")->control);
  EXPECT_FALSE(findLayout("chunk-tagged")->control);
  EXPECT_TRUE(findLayout("single-buffer")->control);
  ASSERT_NE(findLayout("abort-any-generation"), nullptr);
  EXPECT_TRUE(findLayout("abort-any-generation")->control);
  for (const char* name : {"abort-bit-in-tag", "rearm-after-publish", "last-rank-clears-at-start",
                           "low-latency-first-word"}) {
    ASSERT_NE(findLayout(name), nullptr) << name;
    EXPECT_TRUE(findLayout(name)->control) << name;
  }
  EXPECT_EQ(findLayout("no-such-layout"), nullptr);
  Shape shape;
  EXPECT_EQ(findLayout("reference")->engine->bytes(shape),
            Layout::of(LayoutKind::kReference, shape).bytes());
  shape.depth = 3;
  EXPECT_NE(findLayout("reference")->engine->invalidReason(shape, Workload::kExchange), "");
}

// Counts what the layout records.
struct Counting final : HostObserver {
  int pushes = 0;
  int genuine = 0;
  int other = 0;
  void pushing(int, std::uint64_t, std::uint32_t, int, Word) override {}
  void payloadStored(int, std::uint64_t) override {}
  void tagStoring(int, std::uint64_t) override {}
  void pushed(int, std::uint64_t, std::uint32_t, int, Word) override { ++pushes; }
  void readPair(int, std::uint64_t, std::uint32_t, int, const Taken&, PairCheck check) override {
    (check == PairCheck::kGenuine ? genuine : other)++;
  }
  void overwriteSeen(int, std::uint64_t, std::uint32_t, int, Word) override { ++other; }
  void acknowledged(int, std::uint64_t, std::uint32_t, Word) override {}
  void zeroed(int, std::uint64_t, std::uint32_t, int, Word) override {}
  void rearming(int, int, int, std::uint64_t, std::uint32_t, Word) override {}
  void rearmed(int, int, int, std::uint64_t, std::uint32_t) override {}
  void reduced(std::uint64_t, std::uint32_t, bool right) override { other += right ? 0 : 1; }
};

TEST(Layouts, ATeamLayoutRegisteredFromOutsideRunsThroughItsEngine) {
  for (const myteam::CounterFlagsEntry& e : myteam::kCounterFlagsEntries) {
    registerLayout(e.name, e.what, myteam::CounterFlags{{}, e.kind}, e.control);
  }
  const Registered* found = findLayout("myteam/counter-flags");
  ASSERT_NE(found, nullptr);
  EXPECT_FALSE(found->control);
  EXPECT_TRUE(findLayout("myteam/counter-flags-relaxed-flag")->control);
  const std::vector<std::string> names = registeredLayoutNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "myteam/counter-flags"), names.end());

  const Engine& engine = *found->engine;
  Shape shape;
  shape.depth = 4;
  EXPECT_EQ(engine.invalidReason(shape, Workload::kAllReduce),
            "counter-flags double-buffers: depth must be 2");
  shape.depth = 2;
  ASSERT_EQ(engine.invalidReason(shape, Workload::kAllReduce), "");
  std::vector<std::vector<Word>> memory(2, std::vector<Word>(engine.bytes(shape) / sizeof(Word)));
  // An earlier life's flags for the very epochs this run uses: the init hook wipes them.
  for (int r = 0; r < 2; ++r) {
    for (std::uint32_t e = 0; e < 2; ++e) {
      engine.writeEarlierPair(shape, memory[r].data(), 1 - r, kAnyReader, 0x77, e);
    }
  }
  std::vector<Word*> buffers = {memory[0].data(), memory[1].data()};
  std::vector<Counting> observers(2);
  std::vector<Tally> tallies(2);
  for (int r = 0; r < 2; ++r) {
    engine.initOwn(Context{shape, r, 0x1234, buffers.data(), 2'000'000'000ULL}, 0);
  }
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      const auto session = engine.open(Context{shape, r, 0x1234, buffers.data(), 2'000'000'000ULL},
                                       observers[r], Workload::kAllReduce);
      for (std::uint64_t step = 0; step < 500; ++step) {
        const auto epoch = static_cast<std::uint32_t>(step);
        ASSERT_TRUE(session->pushPhase(step, epoch).ok());
        ASSERT_TRUE(session->readPhase(step, epoch, tallies[r]).ok());
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(observers[r].pushes, 500);
    EXPECT_EQ(observers[r].genuine, 500);
    EXPECT_EQ(observers[r].other, 0);
    EXPECT_EQ(tallies[r].genuine, 500u);
  }
}

}  // namespace
}  // namespace peerconf::layout
