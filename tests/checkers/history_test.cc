// The C6/C7 checkers (and the C8 extension) on synthetic histories: a clean one passes; a planted
// overwrite, stale acceptance, untrusted acknowledgement or early zeroing fails, naming rank,
// slot and epoch. Also the JSON of the data-plane results and the `dataplane:` spec parser.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "checkers/bounded.h"
#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane_test_support.h"
#include "layout/layout.h"
#include "layout/payload.h"
#include "model/dataplane_result_json.h"
#include "model/record_json.h"
#include "scenario/dataplane_yaml.h"

namespace peerconf::harness::dataplane {
namespace {

using layout::Layout;
using testing::anyFinding;
using testing::describe;
using testing::recordOf;

constexpr std::uint32_t kGen = 0x00c0ffee;

// A clean two-rank exchange of `steps` steps on the reference layout, as the recorder would
// have written it: pushes 10 us apart, each read 5 us after its push.
std::vector<Result> cleanHistory(std::uint64_t steps = 8) {
  Layout layout;
  std::vector<Result> results(2);
  for (int r = 0; r < 2; ++r) {
    Result& res = results[static_cast<std::size_t>(r)];
    res.layout = "reference";
    res.workload = "exchange";
    res.ranks = 2;
    res.depth = 2;
    res.slots = 2;
    res.payloadWords = 6;
    res.generation = kGen;
    res.stepsPlanned = steps;
    res.stepsDone = steps;
    res.outcome = Outcome::kCompleted;
    res.historySteps = steps;
    res.pairsRead = steps;
    res.pairsGenuine = steps;
    res.clockDomain = 42;
  }
  for (std::uint64_t step = 0; step < steps; ++step) {
    const auto epoch = static_cast<std::uint32_t>(step);
    const std::int64_t t = 1'000'000 + static_cast<std::int64_t>(step) * 100'000;
    for (int s = 0; s < 2; ++s) {
      Event push;
      push.kind = EventKind::kPush;
      push.peer = 1 - s;
      push.slot = layout.slotOf(epoch);
      push.step = step;
      push.epoch = epoch;
      push.tag = layout.tag(kGen, epoch);
      push.aux = step >= 2 ? layout.tag(kGen, epoch - 1) : 0;  // the reader is one step behind
      push.t2Ns = t + s * 1000;
      push.tNs = push.t2Ns + 100;
      results[static_cast<std::size_t>(s)].history.push_back(push);
    }
    for (int d = 0; d < 2; ++d) {
      Event read;
      read.kind = EventKind::kRead;
      read.peer = 1 - d;
      read.slot = layout.slotOf(epoch);
      read.step = step;
      read.epoch = epoch;
      read.tag = layout.tag(kGen, epoch);
      read.aux = read.tag;
      read.tNs = t + 50'000;
      results[static_cast<std::size_t>(d)].history.push_back(read);
    }
  }
  return results;
}

Event* find(Result& result, EventKind kind, std::uint64_t step) {
  for (Event& e : result.history) {
    if (e.kind == kind && e.step == step) return &e;
  }
  return nullptr;
}

TEST(DataPlaneCheckers, ACleanHistoryPasses) {
  const RunRecord record = recordOf(cleanHistory());
  const Verdict c6 = checkers::checkNoOverwrite(record);
  const Verdict c7 = checkers::checkNoStale(record);
  EXPECT_EQ(c6.status, Verdict::Status::kPass) << describe(c6);
  EXPECT_EQ(c7.status, Verdict::Status::kPass) << describe(c7);
  EXPECT_EQ(c6.property, Property::kC6NoOverwrite);
  EXPECT_EQ(c7.property, Property::kC7NoStale);
  EXPECT_NE(c6.summary.find("12 pushes replayed"), std::string::npos) << c6.summary;
  EXPECT_NE(c7.summary.find("16 reads replayed"), std::string::npos) << c7.summary;
}

TEST(DataPlaneCheckers, NotApplicableWithoutADataPlane) {
  RunRecord record = recordOf(cleanHistory());
  for (auto& r : record.ranks) r.dataPlane.reset();
  EXPECT_EQ(checkers::checkNoOverwrite(record).status, Verdict::Status::kNotApplicable);
  EXPECT_EQ(checkers::checkNoStale(record).status, Verdict::Status::kNotApplicable);
  // A rank that reports a data plane it skipped: asked for and not run, which fails.
  for (auto& r : record.ranks) r.dataPlane = Result{};
  EXPECT_TRUE(checkers::checkNoOverwrite(record).failed());
  EXPECT_TRUE(checkers::checkNoStale(record).failed());
}

TEST(DataPlaneCheckers, APlantedOverwriteFailsC6NamingRankSlotAndEpoch) {
  auto results = cleanHistory();
  Layout layout;
  // Rank 0 pushes epoch 5 having seen rank 1 acknowledge only epoch 2: the pair of epoch 3 in
  // slot 1 was still unread.
  find(results[0], EventKind::kPush, 5)->aux = layout.tag(kGen, 2);
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6,
                         "rank 0 pushed its pair of epoch 5 (step 5) into slot (1, source 0) "
                         "of rank 1's buffer while its pair of epoch 3 there was unread",
                         0))
      << describe(c6);
  EXPECT_EQ(checkers::checkNoStale(recordOf(results)).status, Verdict::Status::kPass);
}

TEST(DataPlaneCheckers, TrustingAnAcknowledgementTheReaderNeverWroteFailsC6) {
  auto results = cleanHistory();
  Layout layout;
  // Rank 0 trusts an acknowledgement of epoch 6 at step 5: rank 1 had not read epoch 6 (nor
  // written that acknowledgement) — memory left by someone else.
  find(results[0], EventKind::kPush, 5)->aux = layout.tag(kGen, 6);
  auto& reads = results[1].history;
  reads.erase(
      std::remove_if(reads.begin(), reads.end(),
                     [](const Event& e) { return e.kind == EventKind::kRead && e.epoch == 6; }),
      reads.end());
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6, "never wrote", 0)) << describe(c6);
}

TEST(DataPlaneCheckers, ZeroingAPairBeforeReadingItFailsC6) {
  auto results = cleanHistory();
  Layout layout;
  Event zero;
  zero.kind = EventKind::kZero;
  zero.peer = 0;
  zero.slot = 0;
  zero.step = 0;
  zero.tag = layout.tag(kGen, 0);  // rank 0's pair of epoch 0, not yet read
  results[1].history.insert(results[1].history.begin(), zero);
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6,
                         "rank 1 zeroed slot (0, source 0) of its buffer over rank 0's pair "
                         "of epoch 0 before reading it",
                         1))
      << describe(c6);
  // Zeroing stale memory (no pair of this run) is harmless.
  results[1].history.front().tag = layout.tag(kGen + 1, 0);
  EXPECT_EQ(checkers::checkNoOverwrite(recordOf(results)).status, Verdict::Status::kPass);
}

TEST(DataPlaneCheckers, APlantedStaleAcceptanceFailsC7NamingRankSlotAndEpoch) {
  auto results = cleanHistory();
  Layout layout;
  Event* read = find(results[1], EventKind::kRead, 4);
  read->tag = layout.tag(kGen, 2);  // the slot's previous pair taken for epoch 4
  read->aux = read->tag;
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7,
                         "rank 1 took tag(gen 0x00c0ffee, epoch 2) as rank 0's pair of epoch 4 "
                         "(step 4) at slot (0, source 0)",
                         1))
      << describe(c7);
}

TEST(DataPlaneCheckers, APairTakenBeforeItsWriterStoredItFailsC7) {
  auto results = cleanHistory();
  // Right tag, but taken 1 ms before rank 0 stored it: an earlier buffer's pair with this
  // epoch (the no-generation control), or a tag published before its payload.
  find(results[1], EventKind::kRead, 3)->tNs =
      find(results[0], EventKind::kPush, 3)->tNs - 1'000'000;
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7, "before rank 0 stored that tag", 1)) << describe(c7);

  auto torn = cleanHistory();
  Event* push = find(torn[0], EventKind::kPush, 3);
  push->t2Ns = push->tNs + 2'000'000;  // payload complete 2 ms after the tag
  const Verdict c7torn = checkers::checkNoStale(recordOf(torn));
  ASSERT_TRUE(c7torn.failed()) << describe(c7torn);
  EXPECT_TRUE(anyFinding(c7torn, "still storing its payload", 1)) << describe(c7torn);

  // Clocks of different hosts are not compared.
  for (auto& r : results) r.clockDomain = &r == &results[0] ? 1 : 2;
  EXPECT_EQ(checkers::checkNoStale(recordOf(results)).status, Verdict::Status::kPass);
}

TEST(DataPlaneCheckers, APairItsWriterNeverPushedFailsC7) {
  auto results = cleanHistory();
  auto& pushes = results[0].history;
  pushes.erase(
      std::remove_if(pushes.begin(), pushes.end(),
                     [](const Event& e) { return e.kind == EventKind::kPush && e.step == 6; }),
      pushes.end());
  const Verdict c7 = checkers::checkNoStale(recordOf(results));
  ASSERT_TRUE(c7.failed()) << describe(c7);
  EXPECT_TRUE(anyFinding(c7, "never pushed for that step", 1)) << describe(c7);
}

TEST(DataPlaneCheckers, InBandFindingsFailTheirPropertyEvenWithoutHistory) {
  auto results = cleanHistory();
  for (auto& r : results) {
    r.history.clear();
    r.historySteps = 0;
  }
  results[1].overwrites = 1;
  results[1].findings.push_back({Violation::kOverwrite, 1, 0, 1, 7, 7,
                                 "waiting for rank 0's pair "
                                 "of epoch 7 (step 7) at slot (1, source 0), found ..."});
  const RunRecord record = recordOf(results);
  const Verdict c6 = checkers::checkNoOverwrite(record);
  ASSERT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(anyFinding(c6, "in-band: waiting for rank 0's pair of epoch 7", 1)) << describe(c6);
  EXPECT_EQ(checkers::checkNoStale(record).status, Verdict::Status::kPass);
}

TEST(DataPlaneCheckers, HistoriesOfDifferentDataPlanesAreNotReplayed) {
  auto results = cleanHistory();
  results[1].generation = kGen + 1;
  const Verdict c6 = checkers::checkNoOverwrite(recordOf(results));
  EXPECT_TRUE(anyFinding(c6, "history not replayed")) << describe(c6);
}

// ---- C8 with the data plane --------------------------------------------------------------------

RunRecord outcomes(std::vector<Outcome> list, int waitPeer = -1) {
  std::vector<Result> results(list.size());
  for (std::size_t r = 0; r < list.size(); ++r) {
    results[r].outcome = list[r];
    results[r].waitPeer = waitPeer;
    results[r].detail = "rank " + std::to_string(r) + " " + toString(list[r]);
  }
  RunRecord record = recordOf(results);
  record.scenario.deadline = std::chrono::milliseconds(1000);
  record.wallNs = 1'000'000;
  return record;
}

TEST(DataPlaneLiveness, AStopReportedByATimeoutPasses) {
  const Verdict v = checkBoundedWithDataPlane(
      outcomes({Outcome::kTimeout, Outcome::kStopped, Outcome::kAborted}, 1));
  EXPECT_EQ(v.status, Verdict::Status::kPass) << describe(v);
  EXPECT_EQ(v.property, Property::kC8Bounded);
}

TEST(DataPlaneLiveness, UnplannedTimeoutsAbortsAndErrorsFail) {
  for (Outcome bad : {Outcome::kTimeout, Outcome::kAborted, Outcome::kError}) {
    const Verdict v = checkBoundedWithDataPlane(outcomes({Outcome::kCompleted, bad}, 0));
    EXPECT_TRUE(v.failed()) << describe(v);
    EXPECT_TRUE(anyFinding(v, toString(bad), 1)) << describe(v);
  }
}

TEST(DataPlaneLiveness, AStopNobodyReportedFails) {
  const Verdict v = checkBoundedWithDataPlane(
      outcomes({Outcome::kAborted, Outcome::kStopped, Outcome::kTimeout}, 0));
  EXPECT_TRUE(v.failed()) << describe(v);
  EXPECT_TRUE(anyFinding(v, "no other rank's wait timed out on them")) << describe(v);
}

TEST(DataPlaneLiveness, WithoutADataPlaneItIsTheBuiltInC8) {
  RunRecord record = outcomes({Outcome::kCompleted, Outcome::kCompleted});
  for (auto& r : record.ranks) r.dataPlane.reset();
  const Verdict ours = checkBoundedWithDataPlane(record);
  const Verdict builtin = checkers::checkBounded(record);
  EXPECT_EQ(ours.status, builtin.status);
  EXPECT_EQ(ours.summary, builtin.summary);
  EXPECT_EQ(ours.findings.size(), builtin.findings.size());
}

// ---- JSON --------------------------------------------------------------------------------------

TEST(DataPlaneJson, ResultsSurviveTheRankResultRoundTrip) {
  auto results = cleanHistory(3);
  results[0].findings.push_back({Violation::kStale, 0, 1, 1, 1, 1, "a stale pair"});
  results[0].outcome = Outcome::kTimeout;
  results[0].waitWhat = "pair";
  results[0].waitPeer = 1;
  results[0].history.front().tag = ~0ULL;  // 64-bit values survive
  const RunRecord record = recordOf(results);
  const RankResult back = rankResultFromJson(toJson(record.ranks[0]));
  ASSERT_TRUE(back.dataPlane.has_value());
  EXPECT_EQ(toJson(*back.dataPlane), toJson(results[0]));
  EXPECT_EQ(back.dataPlane->history.front().tag, ~0ULL);
  EXPECT_EQ(back.dataPlane->outcome, Outcome::kTimeout);
  EXPECT_EQ(back.dataPlane->findings.at(0).violation, Violation::kStale);
  RankResult without = record.ranks[1];
  without.dataPlane.reset();
  EXPECT_FALSE(rankResultFromJson(toJson(without)).dataPlane.has_value());
}

TEST(DataPlaneJson, SpecRoundTrip) {
  Spec spec;
  spec.layout = "epoch-ge";
  spec.workload = Workload::kAllReduce;
  spec.startEpoch = 0xfffffffeu;
  spec.timeout = std::chrono::milliseconds(300);
  spec.prefill = Prefill::kEarlierBuffer;
  spec.late.push_back({1, Role::kWriter, 5, {2, 3}, std::chrono::microseconds(1500)});
  spec.stop = Stop{1, 9};
  EXPECT_EQ(toJson(specFromJson(toJson(spec))), toJson(spec));
}

// ---- The `dataplane:` section ------------------------------------------------------------------

Spec parse(const std::string& yaml, int ranks = 4) {
  return parseSpec(YAML::Load(yaml), ranks, "test.yaml");
}

std::string parseError(const std::string& yaml, int ranks = 4) {
  try {
    parse(yaml, ranks);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DataPlaneSpec, ParsesEveryKey) {
  const Spec spec = parse(R"(
layout: single-buffer
workload: allreduce
steps: 500
depth: 4
payload: 8
start_epoch: 4294967290
timeout: 300ms
window: 1500us
history: 100
prefill: earlier-buffer
late:
  - {rank: 1, role: reader, every: 50, delay: 2ms}
  - {rank: 3, role: writer, steps: [2, 7], delay: 0.5ms}
stop: {rank: 2, step: 40}
)");
  EXPECT_EQ(spec.layout, "single-buffer");
  EXPECT_EQ(spec.workload, Workload::kAllReduce);
  EXPECT_EQ(spec.steps, 500u);
  EXPECT_EQ(spec.depth, 4);
  EXPECT_EQ(spec.payload, 8);
  EXPECT_EQ(spec.startEpoch, 4294967290u);
  EXPECT_EQ(spec.timeout, std::chrono::milliseconds(300));
  EXPECT_EQ(spec.window, std::chrono::microseconds(1500));
  EXPECT_EQ(spec.history, 100u);
  EXPECT_EQ(spec.prefill, Prefill::kEarlierBuffer);
  ASSERT_EQ(spec.late.size(), 2u);
  EXPECT_EQ(spec.late[0].every, 50u);
  EXPECT_EQ(spec.late[1].role, Role::kWriter);
  EXPECT_EQ(spec.late[1].steps, (std::vector<std::uint64_t>{2, 7}));
  EXPECT_EQ(spec.late[1].delay, std::chrono::microseconds(500));
  ASSERT_TRUE(spec.stop.has_value());
  EXPECT_EQ(spec.stop->rank, 2);
  EXPECT_EQ(spec.stop->step, 40u);
  // Defaults; a single late mapping.
  const Spec small = parse("late: {rank: 0, role: writer, steps: [0], delay: 30}\n");
  EXPECT_EQ(small.layout, "reference");
  EXPECT_EQ(small.steps, 1000u);
  EXPECT_EQ(small.late.at(0).delay, std::chrono::milliseconds(30));
}

TEST(DataPlaneSpec, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(parseError("steps: 10\nlayuot: reference\n"),
            "test.yaml:2:1: unknown key 'layuot' in 'dataplane'; expected one of: layout, "
            "workload, steps, depth, payload, start_epoch, timeout, window, history, prefill, "
            "late, stop");
  EXPECT_NE(parseError("layout: triple-buffer\n").find("test.yaml:1:9: unknown layout"),
            std::string::npos);
  EXPECT_NE(
      parseError("depth: 3\n").find("test.yaml:1:8: 'dataplane.depth' must be a power of two"),
      std::string::npos);
  EXPECT_NE(parseError("steps: 10\nstop: {rank: 1, step: 10}\n").find("never comes"),
            std::string::npos);
  EXPECT_NE(parseError("late: {rank: 4, role: reader, every: 2, delay: 1ms}\n")
                .find("'dataplane.late.rank' must be an integer from 0 to 3"),
            std::string::npos);
  EXPECT_NE(parseError("late: {rank: 1, role: reader, delay: 1ms}\n").find("'every'"),
            std::string::npos);
  EXPECT_NE(parseError("timeout: 1.5ms\n").find("whole milliseconds"), std::string::npos);
  EXPECT_NE(parseError("steps: 10\n", 1).find("at least 2 ranks"), std::string::npos);
  EXPECT_NE(parseError("layout: single-buffer\ndepth: 1\n").find("depth >= 2"), std::string::npos);
  EXPECT_NE(parseError("[1, 2]\n").find("must be a mapping"), std::string::npos);
}

TEST(DataPlaneSpec, Durations) {
  EXPECT_EQ(parseSpecDuration("500us"), std::chrono::microseconds(500));
  EXPECT_EQ(parseSpecDuration("2ms"), std::chrono::microseconds(2000));
  EXPECT_EQ(parseSpecDuration("1.5s"), std::chrono::microseconds(1500000));
  EXPECT_EQ(parseSpecDuration("30"), std::chrono::microseconds(30000));
  EXPECT_FALSE(parseSpecDuration("0ms"));
  EXPECT_FALSE(parseSpecDuration("-1ms"));
  EXPECT_FALSE(parseSpecDuration("1.0005us"));
  EXPECT_FALSE(parseSpecDuration("fast"));
}

}  // namespace
}  // namespace peerconf::harness::dataplane
