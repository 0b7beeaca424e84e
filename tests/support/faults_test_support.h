// Helpers shared by the faults tests: scenarios built in code (no parser), a gMock RankControl,
// an EventLog per rank, and a barrier group for ranks as threads.
#pragma once

#include <gmock/gmock.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "faults/fault_plan.h"
#include "faults/faulty_backend.h"
#include "faults/rank_control.h"
#include "group.h"
#include "model/event_log.h"
#include "model/scenario.h"

namespace peerconf::faults::testing {

// A fault of `site` on `ranks`; the other fields are set by the test.
inline harness::model::Fault fault(harness::model::FaultSite site, std::vector<int> ranks) {
  harness::model::Fault f;
  f.site = site;
  f.ranks = std::move(ranks);
  return f;
}

inline harness::model::Scenario scenario(int ranks, std::vector<harness::model::Fault> faults,
                                         std::uint64_t seed = 1) {
  harness::model::Scenario s;
  s.name = "test";
  s.ranks = ranks;
  s.bufferBytes = 4096;
  s.seed = seed;
  s.faults = std::move(faults);
  return s;
}

// What a launcher's die() throws in these tests.
struct Died {
  int rank;
  harness::model::Point at;
};

// die() is [[noreturn]]: the mock records the call through onDie(), then throws Died.
class MockRankControl : public RankControl {
 public:
  MOCK_METHOD(void, onDie, (int rank, harness::model::Point at));
  MOCK_METHOD(void, hang, (int rank, harness::model::Point at), (override));
  [[noreturn]] void die(int rank, harness::model::Point at) override {
    onDie(rank, at);
    throw Died{rank, at};
  }
  // exit() likewise, through onExit().
  MOCK_METHOD(void, onExit, (int rank, harness::model::Point at, int code));
  [[noreturn]] void exit(int rank, harness::model::Point at, int code) override {
    onExit(rank, at, code);
    throw Died{rank, at};
  }
};

// One rank's plan, log and faults.
struct RankUnderTest {
  harness::model::EventLog log;
  std::unique_ptr<RankFaults> faults;

  RankUnderTest(const FaultPlan& plan, int rank)
      : log(rank, harness::model::EventLog::Clock::now()), faults(plan.forRank(rank, log)) {}

  // The kFault events recorded so far.
  std::vector<harness::model::Event> faultEvents() const {
    std::vector<harness::model::Event> out;
    for (const auto& e : log.events()) {
      if (e.kind == harness::model::EventKind::kFault) out.push_back(e);
    }
    return out;
  }
};

// Ranks as threads meeting at a barrier: enough of a group for handshakes where every rank
// reaches every collective.
class BarrierWorld {
 public:
  explicit BarrierWorld(int n) : n_(n), sync_(n), bytes_(n), ints_(n) {}
  int size() const { return n_; }
  std::vector<std::vector<std::byte>> allGather(int rank, std::span<const std::byte> bytes) {
    bytes_[static_cast<std::size_t>(rank)].assign(bytes.begin(), bytes.end());
    sync_.arrive_and_wait();
    std::vector<std::vector<std::byte>> out = bytes_;
    sync_.arrive_and_wait();
    return out;
  }
  int allReduceMin(int rank, int value) {
    ints_[static_cast<std::size_t>(rank)] = value;
    sync_.arrive_and_wait();
    const int out = *std::min_element(ints_.begin(), ints_.end());
    sync_.arrive_and_wait();
    return out;
  }

 private:
  int n_;
  std::barrier<> sync_;
  std::vector<std::vector<std::byte>> bytes_;
  std::vector<int> ints_;
};

class BarrierGroup : public Group {
 public:
  BarrierGroup(BarrierWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }
  int allReduceMin(int value) override { return world_.allReduceMin(rank_, value); }
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override {
    return world_.allGather(rank_, bytes);
  }

 private:
  BarrierWorld& world_;
  int rank_;
};

// The decorator's own copies into what it allocates (poison) and exports (the signature), told
// apart from the core's by what they copy; any other copy stays unexpected.
template <typename Mock>
void allowPoisonAndSignatures(Mock& inner) {
  const auto own = [](const void* src) {
    std::uint64_t first = 0;
    std::memcpy(&first, src, sizeof first);
    return first == kPoisonWord || first == kSignatureMark;
  };
  EXPECT_CALL(inner, copyToDevice(::testing::_, ::testing::Truly(own), ::testing::_))
      .Times(::testing::AnyNumber());
}

}  // namespace peerconf::faults::testing
