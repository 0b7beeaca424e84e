// Unit tests of the data-plane layout and protocol (src/layout), and of the host driver running
// the reference layout with ranks as threads: clean runs, prefills, the epoch wrap, random
// delays, bounded waits and a rank that stops. The generation agreement: generation_test.cc.
#include "layout/protocol.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "checkers/history.h"
#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane_test_support.h"
#include "layout/allreduce.h"
#include "layout/exchange.h"
#include "layout/host_mem_ops.h"
#include "layout/layout.h"
#include "layout/payload.h"
#include "layout/workloads.h"
#include "sanitizer.h"

namespace peerconf::harness::dataplane {

using checkers::analyzeOverwrites;
using checkers::analyzeStale;
using checkers::checkBoundedWithDataPlane;
using model::DataplaneOutcome;
using model::Late;
using model::Prefill;
using model::Result;
using model::Role;
using model::RunRecord;
using model::Spec;
using model::Stop;
using model::Verdict;
using model::Workload;
namespace {

using layout::HostMemOps;
using layout::Layout;
using layout::LayoutKind;
using layout::PairCheck;
using layout::Word;
using testing::describe;
using testing::recordOf;
using testing::runOnThreads;
using namespace std::chrono_literals;

// ---- Layout ------------------------------------------------------------------------------------

TEST(DataPlaneLayout, RegionsDoNotOverlapAndFitTheirSize) {
  for (int ranks : {1, 2, 3, 8, 64}) {
    for (int depth : {1, 2, 4}) {
      for (int words : {1, 6, 7, 32}) {
        Layout layout;
        layout.ranks = ranks;
        layout.depth = depth;
        layout.payloadWords = words;
        ASSERT_EQ(layout.invalidReason(), nullptr);
        std::set<std::size_t> used;
        auto claim = [&](std::size_t first, std::size_t count) {
          for (std::size_t w = first; w < first + count; ++w) {
            ASSERT_LT(w, layout.words());
            ASSERT_TRUE(used.insert(w).second) << "word " << w << " used twice";
          }
        };
        claim(layout.abortWord(), 1);
        for (int r = 0; r < ranks; ++r) claim(layout.ackWord(r), 1);
        for (int slot = 0; slot < layout.slots(); ++slot) {
          for (int s = 0; s < ranks; ++s) {
            claim(layout.pairWord(slot, s), 1 + static_cast<std::size_t>(words));
            EXPECT_EQ(layout.pairWord(slot, s) % Layout::kLineWords, 0u);
          }
        }
      }
    }
  }
}

// The chunk-tagged layout: every chunk's tag and every payload word a word of its own inside
// the pair's stride, each tag after its chunk's payload, chunks covering the payload exactly.
TEST(DataPlaneLayout, ChunkTaggedPairsPlaceEveryTagAfterItsChunk) {
  for (int words : {1, 3, 6, 8, 32}) {
    Layout layout;
    layout.kind = LayoutKind::kChunkTagged;
    layout.ranks = 2;
    layout.payloadWords = words;
    ASSERT_EQ(layout.invalidReason(), nullptr);
    EXPECT_EQ(layout.chunks(),
              (words + layout::kChunkPayloadWords - 1) / layout::kChunkPayloadWords);
    EXPECT_EQ(layout.chunkBegin(0), 0);
    EXPECT_EQ(layout.chunkBegin(layout.chunks()), words);
    std::set<std::size_t> used;
    for (int c = 0; c < layout.chunks(); ++c) {
      const std::size_t tag = layout.chunkTagWord(c);
      EXPECT_LT(tag, layout.pairStrideWords());
      EXPECT_TRUE(used.insert(tag).second) << "chunk " << c << "'s tag";
      for (int i = layout.chunkBegin(c); i < layout.chunkBegin(c + 1); ++i) {
        EXPECT_LT(layout.payloadAt(i), tag) << "word " << i << " after its chunk's tag";
        EXPECT_TRUE(used.insert(layout.payloadAt(i)).second) << "word " << i;
      }
    }
    EXPECT_EQ(used.size(), static_cast<std::size_t>(words + layout.chunks()));
  }
  // The reference is one chunk, its tag first.
  Layout reference;
  EXPECT_EQ(reference.chunks(), 1);
  EXPECT_EQ(reference.chunkTagWord(0), 0u);
  EXPECT_EQ(reference.payloadAt(0), 1u);
}

TEST(DataPlaneLayout, SlotsCycleAcrossTheEpochWrap) {
  Layout layout;
  layout.depth = 2;
  EXPECT_EQ(layout.slotOf(0xfffffffeu), 0);
  EXPECT_EQ(layout.slotOf(0xffffffffu), 1);
  EXPECT_EQ(layout.slotOf(0u), 0);
  EXPECT_EQ(layout.slotOf(1u), 1);
  layout.kind = LayoutKind::kSingleBuffer;
  EXPECT_EQ(layout.slots(), 1);
  EXPECT_EQ(layout.slotOf(7u), 0);
}

TEST(DataPlaneLayout, RejectsDepthsThatAreNotPowersOfTwo) {
  Layout layout;
  layout.depth = 3;
  EXPECT_NE(layout.invalidReason(), nullptr);
  layout.depth = 0;
  EXPECT_NE(layout.invalidReason(), nullptr);
  layout.depth = 2;
  layout.payloadWords = 33;
  EXPECT_NE(layout.invalidReason(), nullptr);
}

TEST(DataPlaneLayout, TagsAndAcceptanceRules) {
  Layout reference;
  const Word now = reference.tag(7, 10);
  EXPECT_TRUE(reference.accepts(now, now));
  EXPECT_FALSE(reference.accepts(reference.tag(7, 8), now));   // an earlier epoch
  EXPECT_FALSE(reference.accepts(reference.tag(6, 10), now));  // another buffer
  EXPECT_FALSE(reference.accepts(reference.tag(7, 12), now));  // a later epoch

  Layout ge;
  ge.kind = LayoutKind::kEpochGe;
  EXPECT_TRUE(ge.accepts(ge.tag(7, 12), ge.tag(7, 10)));
  // The wrap: 0xfffffffe is two steps before 0, but >= takes it for step 0.
  EXPECT_TRUE(ge.accepts(ge.tag(7, 0xfffffffeu), ge.tag(7, 0)));

  // A signed 32-bit compare holds at the 2^32 wrap (-2 < 0) but not at 2^31: INT_MAX - 1 reads
  // as newer than INT_MIN. The reference's == refuses both.
  Layout signedGe;
  signedGe.kind = LayoutKind::kEpochSignedGe;
  EXPECT_TRUE(signedGe.accepts(signedGe.tag(7, 12), signedGe.tag(7, 10)));
  EXPECT_FALSE(signedGe.accepts(signedGe.tag(7, 0xfffffffeu), signedGe.tag(7, 0)));
  EXPECT_TRUE(signedGe.accepts(signedGe.tag(7, 0x7ffffffeu), signedGe.tag(7, 0x80000000u)));
  EXPECT_FALSE(signedGe.accepts(signedGe.tag(6, 0x7ffffffeu), signedGe.tag(7, 0x80000000u)));
  EXPECT_FALSE(reference.accepts(reference.tag(7, 0x7ffffffeu), reference.tag(7, 0x80000000u)));

  Layout noGeneration;
  noGeneration.kind = LayoutKind::kNoGeneration;
  EXPECT_EQ(noGeneration.tag(7, 10), noGeneration.tag(8, 10));

  // Acknowledgements compare by serial-number arithmetic, across the wrap, and by generation.
  EXPECT_TRUE(reference.acknowledges(reference.tag(7, 1), 7, 0xfffffffeu));
  EXPECT_FALSE(reference.acknowledges(reference.tag(7, 0xfffffffdu), 7, 0xfffffffeu));
  EXPECT_FALSE(reference.acknowledges(reference.tag(6, 20), 7, 10));
}

// ---- Payload checks ----------------------------------------------------------------------------

TEST(DataPlanePayload, ClassifiesGenuineOverwrittenAndStalePairs) {
  Layout layout;
  const std::uint32_t g = 0x1234;
  const std::uint32_t e = 40;
  auto words = [&](std::uint32_t gen, std::uint32_t epoch) {
    std::vector<Word> w;
    for (int i = 0; i < layout.payloadWords; ++i) {
      w.push_back(layout::payloadWord(gen, 1, 0, epoch, i));
    }
    return w;
  };
  const Word tag = layout.tag(g, e);
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, tag, tag, words(g, e).data()),
            PairCheck::kGenuine);
  // The tag changed while the payload was read.
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, tag, layout.tag(g, e + 2), words(g, e).data()),
            PairCheck::kOverwritten);
  // Payload words of the slot's next pair.
  auto torn = words(g, e);
  torn[3] = layout::payloadWord(g, 1, 0, e + 2, 3);
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, tag, tag, torn.data()),
            PairCheck::kOverwritten);
  // The slot's previous pair under this step's tag; another buffer's; zeros.
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, tag, tag, words(g, e - 2).data()),
            PairCheck::kStalePayload);
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, tag, tag, words(g + 1, e).data()),
            PairCheck::kStalePayload);
  std::vector<Word> zeros(static_cast<std::size_t>(layout.payloadWords), 0);
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, tag, tag, zeros.data()),
            PairCheck::kStalePayload);
  // A tag of an earlier step or of another buffer.
  const Word old = layout.tag(g, e - 2);
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, old, old, words(g, e - 2).data()),
            PairCheck::kStaleTag);
  const Word foreign = layout.tag(g + 1, e);
  EXPECT_EQ(layout::classifyPair(layout, g, 1, 0, e, foreign, foreign, words(g + 1, e).data()),
            PairCheck::kStaleTag);
}

TEST(DataPlanePayload, WordsDependOnEveryField) {
  const Word base = layout::payloadWord(5, 1, 2, 3, 4);
  EXPECT_NE(base, layout::payloadWord(6, 1, 2, 3, 4));
  EXPECT_NE(base, layout::payloadWord(5, 0, 2, 3, 4));
  EXPECT_NE(base, layout::payloadWord(5, 1, 0, 3, 4));
  EXPECT_NE(base, layout::payloadWord(5, 1, 2, 4, 4));
  EXPECT_NE(base, layout::payloadWord(5, 1, 2, 3, 5));
  EXPECT_NE(layout::payloadWord(0, 0, 0, 0, 0), 0u);
}

// ---- Protocol, one thread ----------------------------------------------------------------------

struct TwoBuffers {
  explicit TwoBuffers(const Layout& layout)
      : a(layout.words(), 0), b(layout.words(), 0), ptrs{a.data(), b.data()} {}
  std::vector<Word> a;
  std::vector<Word> b;
  Word* ptrs[2];
};

TEST(DataPlaneProtocol, AWriterWaitsForTheAcknowledgementOfTheSlotsPreviousPair) {
  Layout layout;
  TwoBuffers mem(layout);
  layout::NullObserver observer;
  layout::Protocol<HostMemOps> writer(layout, 0, 9, mem.ptrs, 20'000'000, observer);
  Word payload[Layout::kMaxPayloadWords] = {};
  EXPECT_TRUE(writer.push(1, 0, 100, payload).ok());  // steps < depth: nothing to wait for
  EXPECT_TRUE(writer.push(1, 1, 101, payload).ok());
  const auto blocked = writer.push(1, 2, 102, payload);
  EXPECT_EQ(blocked.status, layout::Status::kTimeout);
  EXPECT_EQ(blocked.what, layout::WaitFor::kAck);
  EXPECT_EQ(blocked.rank, 0);
  EXPECT_EQ(blocked.peer, 1);
  EXPECT_EQ(blocked.slot, 0);
  EXPECT_EQ(blocked.epoch, 102u);
  // An acknowledgement of another buffer (same epoch) does not count...
  mem.a[layout.ackWord(1)] = layout.tag(8, 100);
  EXPECT_EQ(writer.push(1, 2, 102, payload).status, layout::Status::kTimeout);
  // ...this buffer's does.
  mem.a[layout.ackWord(1)] = layout.tag(9, 100);
  EXPECT_TRUE(writer.push(1, 2, 102, payload).ok());
}

TEST(DataPlaneProtocol, NoGenerationTrustsAnEarlierBuffersAcknowledgement) {
  Layout layout;
  layout.kind = LayoutKind::kNoGeneration;
  TwoBuffers mem(layout);
  layout::NullObserver observer;
  layout::Protocol<HostMemOps> writer(layout, 0, 9, mem.ptrs, 20'000'000, observer);
  Word payload[Layout::kMaxPayloadWords] = {};
  mem.a[layout.ackWord(1)] = layout.tag(8, 100);  // left by an earlier buffer
  EXPECT_TRUE(writer.push(1, 2, 102, payload).ok());
}

TEST(DataPlaneProtocol, AReaderRejectsStaleTagsAndReportsATimeoutNamingRankSlotAndEpoch) {
  Layout layout;
  TwoBuffers mem(layout);
  layout::NullObserver observer;
  layout::Protocol<HostMemOps> reader(layout, 1, 9, mem.ptrs, 20'000'000, observer);
  // Earlier epoch of this buffer, and this epoch of another buffer, in the awaited slot.
  for (Word stale : {layout.tag(9, 48), layout.tag(3, 50)}) {
    mem.b[layout.pairWord(layout.slotOf(50), 0)] = stale;
    Word out[Layout::kMaxPayloadWords];
    layout::Taken taken;
    const auto wait = reader.read(0, 7, 50, out, taken);
    EXPECT_EQ(wait.status, layout::Status::kTimeout);
    EXPECT_EQ(wait.what, layout::WaitFor::kPair);
    EXPECT_EQ(wait.rank, 1);
    EXPECT_EQ(wait.peer, 0);
    EXPECT_EQ(wait.slot, 0);
    EXPECT_EQ(wait.epoch, 50u);
    EXPECT_EQ(wait.step, 7u);
    EXPECT_EQ(wait.seen, stale);
  }
}

TEST(DataPlaneProtocol, AReaderSeesALaterPairAsAnOverwrite) {
  Layout layout;
  TwoBuffers mem(layout);
  layout::NullObserver observer;
  layout::Protocol<HostMemOps> reader(layout, 1, 9, mem.ptrs, 20'000'000, observer);
  mem.b[layout.pairWord(layout.slotOf(50), 0)] = layout.tag(9, 52);
  Word out[Layout::kMaxPayloadWords];
  layout::Taken taken;
  EXPECT_EQ(reader.read(0, 7, 50, out, taken).status, layout::Status::kOverwritten);
}

TEST(DataPlaneProtocol, AbortWakesAWaitAndNamesTheRankThatGaveUp) {
  Layout layout;
  TwoBuffers mem(layout);
  layout::NullObserver observer;
  layout::Protocol<HostMemOps> quitter(layout, 0, 9, mem.ptrs, 20'000'000'000, observer);
  layout::Protocol<HostMemOps> waiter(layout, 1, 9, mem.ptrs, 20'000'000'000, observer);
  quitter.abort();
  Word out[Layout::kMaxPayloadWords];
  layout::Taken taken;
  const auto wait = waiter.read(0, 0, 5, out, taken);
  EXPECT_EQ(wait.status, layout::Status::kAborted);
  EXPECT_EQ(wait.abortedBy, 0);
  // An abort word of another generation is ignored.
  layout::Protocol<HostMemOps> later(layout, 1, 10, mem.ptrs, 20'000'000, observer);
  EXPECT_EQ(later.abortedBy(), -1);
}

// ---- The reference layout, ranks as threads ----------------------------------------------------

struct Checked {
  Verdict c6;
  Verdict c7;
  Verdict c8;
};

Checked check(const testing::HostRun& run) {
  const RunRecord record = recordOf(run.results);
  return {checkers::checkNoOverwrite(record), checkers::checkNoStale(record),
          checkBoundedWithDataPlane(record)};
}

void expectClean(const testing::HostRun& run, std::uint64_t steps) {
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  for (const Result& r : run.results) {
    SCOPED_TRACE("rank with generation " + std::to_string(r.generation));
    EXPECT_EQ(r.outcome, DataplaneOutcome::kCompleted) << r.detail;
    EXPECT_EQ(r.stepsDone, steps);
    EXPECT_EQ(r.pairsRead, r.pairsGenuine);
    EXPECT_EQ(r.overwrites, 0u);
    EXPECT_EQ(r.stale, 0u);
    EXPECT_EQ(r.wrongResults, 0u);
    EXPECT_TRUE(r.findings.empty()) << r.findings.front().text;
  }
  const Checked v = check(run);
  EXPECT_EQ(v.c6.status, Verdict::Status::kPass) << describe(v.c6);
  EXPECT_EQ(v.c7.status, Verdict::Status::kPass) << describe(v.c7);
  EXPECT_EQ(v.c8.status, Verdict::Status::kPass) << describe(v.c8);
  // The replay really replayed: every push after the first `depth` and every read.
  const RunRecord record = recordOf(run.results);
  const auto c6 = analyzeOverwrites(record);
  const auto c7 = analyzeStale(record);
  const auto ranks = static_cast<std::uint64_t>(run.results.size());
  const std::uint64_t replayedSteps = std::min(steps, run.results.front().historySteps);
  const auto depth = static_cast<std::uint64_t>(run.results.front().depth);
  EXPECT_EQ(c7.eventsReplayed, replayedSteps * ranks * (ranks - 1));
  EXPECT_EQ(c6.eventsReplayed,
            (replayedSteps > depth ? replayedSteps - depth : 0) * ranks * (ranks - 1));
}

class DataPlaneReferenceClean : public ::testing::TestWithParam<std::tuple<int, Workload>> {};

TEST_P(DataPlaneReferenceClean, EveryPairGenuineAndTheHistoryReplaysClean) {
  const auto [ranks, workload] = GetParam();
  Spec spec;
  spec.workload = workload;
  // Under a sanitizer a tenth of the steps: every step is the same protocol round, and ASan or
  // TSan meets a defect of it in the first hundreds; 20000 instrumented steps cost most of the
  // executable's CPU in CI.
  spec.steps = (ranks <= 2 ? 20000 : 2000) / peerconf::testing::kSanitizerSlowdown;
  spec.history = spec.steps;
  const auto run = runOnThreads(spec, ranks);
  expectClean(run, spec.steps);
  for (const Result& r : run.results) {
    EXPECT_EQ(r.pairsRead, spec.steps * static_cast<std::uint64_t>(ranks - 1));
  }
}

INSTANTIATE_TEST_SUITE_P(RanksAndWorkloads, DataPlaneReferenceClean,
                         ::testing::Combine(::testing::Values(2, 3, 4, 8),
                                            ::testing::Values(Workload::kExchange,
                                                              Workload::kAllReduce)));

TEST(DataPlaneReference, CleanOverStalePrefillsAndAcrossTheEpochWrap) {
  for (Prefill prefill : {Prefill::kNone, Prefill::kStaleEpochs, Prefill::kEarlierBuffer}) {
    for (std::uint32_t start : {0u, 0xfffffff0u}) {
      SCOPED_TRACE(toString(prefill) + " from epoch " + std::to_string(start));
      Spec spec;
      spec.prefill = prefill;
      spec.startEpoch = start;
      spec.steps = 600;
      spec.late.push_back({1, Role::kWriter, 0, {0, 1, 17}, 3ms});  // readers see the prefill
      const auto run = runOnThreads(spec, 3);
      expectClean(run, spec.steps);
    }
  }
}

TEST(DataPlaneReference, CleanUnderRandomDelays) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 random(seed);
    Spec spec;
    const int ranks = 2 + static_cast<int>(random() % 3);
    spec.steps = 400;
    spec.depth = (random() % 2) == 0 ? 2 : 4;
    spec.workload = (random() % 2) == 0 ? Workload::kExchange : Workload::kAllReduce;
    spec.startEpoch = static_cast<std::uint32_t>(0xffffff00u + random() % 0x200);
    for (int i = 0; i < 6; ++i) {
      Late late;
      late.rank = static_cast<int>(random() % static_cast<std::uint64_t>(ranks));
      late.role = (random() % 2) == 0 ? Role::kReader : Role::kWriter;
      late.steps = {random() % spec.steps, random() % spec.steps};
      late.every = (random() % 3) == 0 ? 50 + random() % 50 : 0;
      late.delay = std::chrono::microseconds(100 + random() % 3000);
      spec.late.push_back(late);
    }
    const auto run = runOnThreads(spec, ranks, 2000ms, seed);
    expectClean(run, spec.steps);
  }
}

TEST(DataPlaneReference, ARankThatStopsIsReportedWithinTheDeadlineNeverAHang) {
  Spec spec;
  spec.steps = 1000;
  spec.stop = Stop{2, 100};
  const auto timeout = 300ms;
  const auto run = runOnThreads(spec, 4, timeout);
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  EXPECT_LT(run.wall, 3 * timeout + 2s);
  EXPECT_EQ(run.results[2].outcome, DataplaneOutcome::kStopped);
  EXPECT_EQ(run.results[2].stepsDone, 100u);
  int namedTheStoppedRank = 0;
  for (int r : {0, 1, 3}) {
    const Result& result = run.results[static_cast<std::size_t>(r)];
    SCOPED_TRACE("rank " + std::to_string(r) + ": " + result.detail);
    EXPECT_TRUE(result.outcome == DataplaneOutcome::kTimeout ||
                result.outcome == DataplaneOutcome::kAborted);
    if (result.outcome == DataplaneOutcome::kTimeout) {
      EXPECT_NE(result.detail.find("rank " + std::to_string(r) + " timed out"), std::string::npos);
      EXPECT_NE(result.detail.find("epoch"), std::string::npos);
      EXPECT_NE(result.detail.find("slot"), std::string::npos);
      if (result.waitPeer == 2) ++namedTheStoppedRank;
    }
  }
  EXPECT_GE(namedTheStoppedRank, 1);
  const Checked v = check(run);
  EXPECT_EQ(v.c6.status, Verdict::Status::kPass) << describe(v.c6);
  EXPECT_EQ(v.c7.status, Verdict::Status::kPass) << describe(v.c7);
  EXPECT_EQ(v.c8.status, Verdict::Status::kPass) << describe(v.c8);
}

TEST(DataPlaneReference, AnUnplannedTimeoutFailsC8) {
  // Rank 1's reads are late by more than the wait deadline: its writer gives up.
  Spec spec;
  spec.steps = 50;
  spec.late.push_back({1, Role::kReader, 0, {20}, 400ms});
  const auto run = runOnThreads(spec, 2, 100ms);
  const Checked v = check(run);
  EXPECT_EQ(v.c8.status, Verdict::Status::kFail) << describe(v.c8);
  EXPECT_TRUE(testing::anyFinding(v.c8, "timed out")) << describe(v.c8);
  EXPECT_EQ(v.c6.status, Verdict::Status::kPass) << describe(v.c6);
}

TEST(DataPlaneReference, ALayoutThatDoesNotFitIsAnErrorOnEveryRankWithoutGroupCalls) {
  Spec spec;
  spec.steps = 10;
  const auto run = runOnThreads(spec, 2, 100ms, 1, 64);
  for (const Result& r : run.results) {
    EXPECT_EQ(r.outcome, DataplaneOutcome::kError);
    EXPECT_NE(r.detail.find("needs"), std::string::npos) << r.detail;
  }
}

// ---- Two collectives in flight, and a replayed graph (workloads.h) ----------------------------

// Every rank completed every step with every pair genuine, and the history replays clean.
void expectCleanRun(const testing::HostRun& run, std::uint64_t pairsPerRank) {
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  for (const Result& r : run.results) {
    EXPECT_EQ(r.outcome, DataplaneOutcome::kCompleted) << r.detail;
    EXPECT_EQ(r.pairsRead, pairsPerRank);
    EXPECT_EQ(r.pairsGenuine, pairsPerRank);
    EXPECT_EQ(r.wrongResults, 0u);
    EXPECT_TRUE(r.findings.empty()) << r.findings.front().text;
  }
  const Checked v = check(run);
  EXPECT_EQ(v.c6.status, Verdict::Status::kPass) << describe(v.c6);
  EXPECT_EQ(v.c7.status, Verdict::Status::kPass) << describe(v.c7);
  EXPECT_EQ(v.c8.status, Verdict::Status::kPass) << describe(v.c8);
}

TEST(DataPlaneTwoInFlight, EachCollectiveOnItsOwnEpochsRunsCleanAndTheHistoryCountsCollectives) {
  for (const char* layout : {"reference", "chunk-tagged"}) {
    for (const int ranks : {2, 3, 4}) {
      SCOPED_TRACE(std::string(layout) + ", " + std::to_string(ranks) + " ranks");
      Spec spec;
      spec.layout = layout;
      spec.workload = Workload::kTwoInFlight;
      spec.steps = 300;
      spec.startEpoch = 0xffffff00u;  // across the wrap
      spec.late.push_back({1, Role::kReader, 37, {}, 2ms});
      spec.late.push_back({0, Role::kWriter, 0, {0, 5}, 2ms});
      const auto run = runOnThreads(spec, ranks);
      expectCleanRun(run, 2 * spec.steps * static_cast<std::uint64_t>(ranks - 1));
      // The history counts collectives: A of step s is 2s, B 2s + 1, every one replayed.
      const RunRecord record = recordOf(run.results);
      EXPECT_EQ(run.results.front().historySteps, 2 * spec.steps);
      EXPECT_EQ(analyzeStale(record).eventsReplayed,
                2 * spec.steps * static_cast<std::uint64_t>(ranks * (ranks - 1)));
      EXPECT_EQ(run.results.front().stepsDone, spec.steps);
    }
  }
}

TEST(DataPlaneTwoInFlight, EpochsAndSlotsOfTheTwoCollectives) {
  using TwoInFlight = layout::TwoInFlightOf<int>;  // the arithmetic needs no rank
  // Step 5 of a run from epoch 0xfffffffe: the driver hands epoch 3 (wrapped).
  const std::uint32_t epoch = 0xfffffffeu + 5;
  EXPECT_EQ(TwoInFlight::epochOf(5, epoch, 0, false), 0xfffffffeu + 10);
  EXPECT_EQ(TwoInFlight::epochOf(5, epoch, 1, false), 0xfffffffeu + 11);
  EXPECT_EQ(TwoInFlight::epochOf(5, epoch, 1, true), 0xfffffffeu + 10);  // the control: A's
  EXPECT_EQ(TwoInFlight::stepOf(5, 0), 10u);
  EXPECT_EQ(TwoInFlight::stepOf(5, 1), 11u);
  EXPECT_NE(TwoInFlight::fieldOf(0), TwoInFlight::fieldOf(1));
}

TEST(DataPlaneTwoInFlight, SharedSlotsFailC6AndC7) {
  Spec spec;
  spec.workload = Workload::kTwoInFlightSharedSlots;
  spec.steps = 200;
  // A late reader: by its read, every writer pushed A and then B into the one slot.
  spec.late.push_back({1, Role::kReader, 20, {}, 3ms});
  const auto run = runOnThreads(spec, 3);
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  const Checked v = check(run);
  EXPECT_EQ(v.c6.status, Verdict::Status::kFail) << describe(v.c6);
  EXPECT_TRUE(testing::anyFinding(v.c6, "there was unread")) << describe(v.c6);
  EXPECT_EQ(v.c7.status, Verdict::Status::kFail) << describe(v.c7);
  EXPECT_TRUE(testing::anyFinding(v.c7, "over a payload that is not this step's"))
      << describe(v.c7);
}

TEST(DataPlaneGraphReplay, TheReplayEpochComesFromTheCounterOrFromTheCapture) {
  layout::ReplayEpoch counter;
  EXPECT_EQ(counter.current(7), 7u);  // the first replay captures
  counter.advance();
  EXPECT_EQ(counter.current(99), 8u);  // the host's later epochs do not reach the kernel
  layout::ReplayEpoch captured;
  captured.capturedEpoch = true;
  EXPECT_EQ(captured.current(0xffffffffu), 0xffffffffu);
  captured.advance();
  EXPECT_EQ(captured.current(0), 0xffffffffu);
}

TEST(DataPlaneGraphReplay, TheCountersEpochRunsCleanAcrossTheWrap) {
  for (const char* layout : {"reference", "chunk-tagged"}) {
    SCOPED_TRACE(layout);
    Spec spec;
    spec.layout = layout;
    spec.workload = Workload::kGraphReplay;
    spec.steps = 400;
    spec.startEpoch = 0xffffff00u;
    spec.prefill = Prefill::kStaleEpochs;
    spec.late.push_back({2, Role::kWriter, 0, {0, 3}, 2ms});
    const auto run = runOnThreads(spec, 3);
    expectCleanRun(run, spec.steps * 2);
  }
}

TEST(DataPlaneGraphReplay, TheEpochFixedAtCaptureFailsC7) {
  Spec spec;
  spec.workload = Workload::kGraphReplayCapturedEpoch;
  spec.steps = 100;
  // A late writer: its readers find its previous replay's pair under the one epoch's tag.
  spec.late.push_back({1, Role::kWriter, 0, {3, 40}, 3ms});
  const auto run = runOnThreads(spec, 2);
  ASSERT_TRUE(run.errors.empty()) << run.errors.front();
  const Checked v = check(run);
  EXPECT_EQ(v.c7.status, Verdict::Status::kFail) << describe(v.c7);
  EXPECT_TRUE(testing::anyFinding(v.c7, "over a payload that is not this step's"))
      << describe(v.c7);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
