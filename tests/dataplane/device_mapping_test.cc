// The data plane on GPUs, the parts that need no GPU: the `dataplane:` spec mapped onto the
// kernels' ProtocolRun, the device trace converted to the host's history and in-band findings (on
// a hand-built trace, and on a real protocol run on host threads recorded by both observers at
// once), the kernel outcome worded as the host words it, and C6/C7 failing a data plane asked for
// and not run. (What `--runtime gpu` rejects: runtime_check_test.cc; a build without kernels:
// device_none_test.cc.)
#include "dataplane/device_mapping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane/driver.h"
#include "dataplane/recorder.h"
#include "dataplane_test_support.h"
#include "gpu_kernels/trace.h"
#include "layout/engine.h"
#include "layout/exchange.h"
#include "layout/host_mem_ops.h"
#include "layout/protocol.h"
#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness::dataplane {

using checkers::checkBoundedWithDataPlane;
using model::DataplaneEvent;
using model::DataplaneEventKind;
using model::DataplaneOutcome;
using model::makeLayout;
using model::Result;
using model::Role;
using model::RunRecord;
using model::ScenarioError;
using model::Spec;
using model::Stop;
using model::Verdict;
using model::Workload;
using scenario::parseScenario;
namespace {

using namespace std::chrono_literals;
using gpu_kernels::ProtocolOutcome;
using gpu_kernels::TraceEvent;
using gpu_kernels::TraceKind;
using layout::PairCheck;
using testing::describe;
using testing::recordOf;

constexpr std::uint32_t kGen = 0x00c0ffee;

// --- spec -> ProtocolRun ----------------------------------------------------------------------

TEST(DeviceMapping, EveryKeyOfTheSpecReachesTheKernelRun) {
  Spec spec;
  spec.layout = "tag-before-payload";
  spec.workload = Workload::kAllReduce;
  spec.steps = 12345;
  spec.depth = 4;
  spec.payload = 9;
  spec.startEpoch = 4294967000u;
  spec.window = 300us;
  spec.history = 77;
  spec.stop = Stop{1, 900};
  // every 10 plus steps [3, 20, 3, 7]: 20 is covered by `every`, 3 is listed twice.
  spec.late.push_back({1, Role::kReader, 10, {3, 20, 3, 7}, 250us});
  spec.late.push_back({0, Role::kWriter, 0, {5}, 2s});
  const gpu_kernels::ProtocolRun run = toProtocolRun(spec, 3, 750ms);
  EXPECT_EQ(run.layout.kind, layout::LayoutKind::kTagBeforePayload);
  EXPECT_EQ(run.layout.ranks, 3);
  EXPECT_EQ(run.layout.depth, 4);
  EXPECT_EQ(run.layout.payloadWords, 9);
  EXPECT_EQ(run.layout.windowNs, 300'000u);
  EXPECT_EQ(run.workload, gpu_kernels::Workload::kAllReduce);
  EXPECT_EQ(run.steps, 12345u);
  EXPECT_EQ(run.startEpoch, 4294967000u);
  EXPECT_EQ(run.timeoutNs, 750'000'000u);
  EXPECT_EQ(run.stopRank, 1);
  EXPECT_EQ(run.stopStep, 900u);
  ASSERT_EQ(run.lateCount, 4);  // every 10, step 3, step 7; step 5 of rank 0
  EXPECT_EQ(run.late[0].rank, 1);
  EXPECT_TRUE(run.late[0].reader);
  EXPECT_EQ(run.late[0].every, 10u);
  EXPECT_EQ(run.late[0].delayNs, 250'000u);
  EXPECT_EQ(run.late[1].every, 0u);
  EXPECT_EQ(run.late[1].step, 3u);
  EXPECT_EQ(run.late[2].step, 7u);
  EXPECT_EQ(run.late[3].rank, 0);
  EXPECT_FALSE(run.late[3].reader);
  EXPECT_EQ(run.late[3].step, 5u);
  EXPECT_EQ(run.late[3].delayNs, 2'000'000'000u);  // past 32 bits of nanoseconds

  const gpu_kernels::Trace trace = traceRequest(spec, 3);
  EXPECT_EQ(trace.historySteps, 77u);
  // 2 peers: a push and a read each, plus the sum check; plus the first step's zeroing.
  EXPECT_EQ(trace.eventCapacity, 77u * 5 + 2);
  EXPECT_EQ(trace.noteCapacity, kDeviceTraceNotes);
}

// Every workload reaches the kernels as itself (the host's layout::Workload), the controls too;
// under two-in-flight the trace's steps are collectives, two a step, as the host's history's.
TEST(DeviceMapping, EveryWorkloadReachesTheKernelsAndTwoInFlightTracesTwoCollectivesAStep) {
  const std::pair<Workload, layout::Workload> workloads[] = {
      {Workload::kExchange, layout::Workload::kExchange},
      {Workload::kAllReduce, layout::Workload::kAllReduce},
      {Workload::kTwoInFlight, layout::Workload::kTwoInFlight},
      {Workload::kTwoInFlightSharedSlots, layout::Workload::kTwoInFlightSharedSlots},
      {Workload::kGraphReplay, layout::Workload::kGraphReplay},
      {Workload::kGraphReplayCapturedEpoch, layout::Workload::kGraphReplayCapturedEpoch}};
  for (const auto& [workload, kernels] : workloads) {
    Spec spec;
    spec.workload = workload;
    spec.steps = 500;
    spec.history = 40;
    EXPECT_TRUE(gpuUnsupported(spec, 3).empty()) << toString(workload);
    EXPECT_EQ(toProtocolRun(spec, 3, 1s).workload, kernels) << toString(workload);
    const gpu_kernels::Trace trace = traceRequest(spec, 3);
    Result described;
    describeRun(spec, 3, 1s, described);
    EXPECT_EQ(trace.historySteps, described.historySteps) << toString(workload);
  }
  Spec two;
  two.workload = Workload::kTwoInFlight;
  two.steps = 500;
  two.history = 40;
  const gpu_kernels::Trace trace = traceRequest(two, 3);
  EXPECT_EQ(trace.historySteps, 80u);
  // Each collective: a push and a read for each of 2 peers and the sum check; plus the zeroing.
  EXPECT_EQ(trace.eventCapacity, 80u * 5 + 2);
  // The history's bound counts both collectives of a step.
  two.steps = two.history = 300'000;
  const auto big = gpuUnsupported(two, 2);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].key, "history");
  EXPECT_NE(big[0].message.find("lower 'history' to 174762"), std::string::npos) << big[0].message;
}

// A death, hang or exit `at: dataplane` reaches the kernels as the stop of the rank it names
// (model::dataPlaneOf: each rank runs the scenario's data plane with its own stop); the other
// ranks' kernels stop nobody.
TEST(DeviceMapping, ADataplaneFaultIsTheKernelsStopOfItsRank) {
  const model::Scenario scenario = scenario::parseScenario(
      "ranks: 3\ndataplane: {steps: 500, timeout: 300ms}\n"
      "faults: [{site: hang, rank: 2, at: dataplane, step: 100}]\n"
      "expect: {outcome: reported}\n",
      "dp.yaml");
  const gpu_kernels::ProtocolRun stopped = toProtocolRun(model::dataPlaneOf(scenario, 2), 3, 1s);
  EXPECT_EQ(stopped.stopRank, 2);
  EXPECT_EQ(stopped.stopStep, 100u);
  const gpu_kernels::ProtocolRun survivor = toProtocolRun(model::dataPlaneOf(scenario, 0), 3, 1s);
  EXPECT_EQ(survivor.stopRank, -1);
}

TEST(DeviceMapping, TheKernelsLateEntriesFireExactlyWhereTheHostsDo) {
  Spec spec;
  spec.late.push_back({0, Role::kReader, 4, {0, 2, 4, 8, 9}, 1ms});
  const gpu_kernels::ProtocolRun run = toProtocolRun(spec, 2, 1s);
  for (std::uint64_t step = 0; step < 40; ++step) {
    std::uint64_t ns = 0;  // as the kernel's lateDelay adds them up
    for (int i = 0; i < run.lateCount; ++i) {
      const auto& l = run.late[i];
      if (step == l.step || (l.every != 0 && step != 0 && step % l.every == 0)) ns += l.delayNs;
    }
    EXPECT_EQ(ns, spec.late[0].firesAt(step) ? 1'000'000u : 0u) << "step " << step;
  }
}

TEST(DeviceMapping, WhatTheKernelsCannotRunIsNamedWithItsKey) {
  Spec ok;
  EXPECT_TRUE(gpuUnsupported(ok, 8).empty());

  const auto ranks = gpuUnsupported(ok, 9);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].key, "");
  EXPECT_NE(ranks[0].message.find("at most 8 ranks"), std::string::npos) << ranks[0].message;

  Spec lates;
  for (int i = 0; i < 17; ++i) lates.late.push_back({0, Role::kReader, 0, {std::uint64_t(i)}, 1ms});
  const auto late = gpuUnsupported(lates, 2);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].key, "late");
  EXPECT_NE(late[0].message.find("at most 16 late entries"), std::string::npos) << late[0].message;
  EXPECT_THROW(toProtocolRun(lates, 2, 1s), std::invalid_argument);

  Spec history;
  history.steps = 1'000'000;
  history.history = 1'000'000;
  const auto big = gpuUnsupported(history, 2);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].key, "history");
  EXPECT_NE(big[0].message.find("lower 'history' to 524287"), std::string::npos) << big[0].message;
  history.history = 524287;
  EXPECT_TRUE(gpuUnsupported(history, 2).empty());
}

// --- device trace -> host history and findings -------------------------------------------------

TraceEvent traced(TraceKind kind, int peer, int slot, std::uint64_t step, std::uint32_t epoch,
                  std::uint64_t tag, std::uint64_t aux = 0, std::uint8_t check = 0) {
  TraceEvent e = gpu_kernels::traceEvent(kind, peer, slot, step, epoch, tag);
  e.aux = aux;
  e.check = check;
  e.tNs = 1000 + step;
  e.t2Ns = 2000 + step;
  return e;
}

TEST(DeviceTrace, AHandBuiltTraceBecomesTheHostsHistoryAndFindings) {
  layout::Layout l;
  l.ranks = 2;
  TraceEvent read = traced(TraceKind::kRead, 1, 0, 0, 10, l.tag(kGen, 10), l.tag(kGen, 10),
                           static_cast<std::uint8_t>(PairCheck::kStalePayload));
  read.expected = l.tag(kGen, 10);
  const std::vector<TraceEvent> events = {
      traced(TraceKind::kPush, 1, 0, 0, 10, l.tag(kGen, 10), 0),
      traced(TraceKind::kZero, 1, 0, 0, 10, l.tag(kGen, 10)),
      read,
      traced(TraceKind::kReduced, -1, -1, 0, 10, 0, 0, 0),
      traced(TraceKind::kOverwriteSeen, 1, 1, 1, 11, l.tag(kGen, 13)),
      traced(TraceKind::kPush, 1, 0, 5, 15, l.tag(kGen, 15)),  // past the history: dropped
  };
  const std::vector<TraceEvent> notes = {
      events[2], events[3], events[4],
      traced(TraceKind::kReduced, -1, -1, 40, 50, 0, 0, 0),  // wrong with every pair genuine
  };
  Result result;
  result.generation = kGen;
  result.historySteps = 2;
  gpu_kernels::TraceCounts counts;
  counts.events = events.size();
  counts.notes = notes.size();
  applyTrace(&l, 0, counts, events, notes, result);

  // Each read and overwrite seen is followed by the acknowledgement the host adds for it.
  ASSERT_EQ(result.history.size(), 7u);
  EXPECT_EQ(result.history[3].kind, DataplaneEventKind::kAck);
  EXPECT_EQ(result.history[3].tag, l.tag(kGen, 10));
  EXPECT_EQ(result.history[6].kind, DataplaneEventKind::kAck);
  std::erase_if(result.history,
                [](const DataplaneEvent& e) { return e.kind == DataplaneEventKind::kAck; });
  ASSERT_EQ(result.history.size(), 5u);
  const DataplaneEvent& push = result.history[0];
  EXPECT_EQ(push.kind, DataplaneEventKind::kPush);
  EXPECT_EQ(push.peer, 1);
  EXPECT_EQ(push.slot, 0);
  EXPECT_EQ(push.epoch, 10u);
  EXPECT_EQ(push.tag, l.tag(kGen, 10));
  EXPECT_EQ(push.tNs, 1000);
  EXPECT_EQ(push.t2Ns, 2000);
  EXPECT_EQ(result.history[1].kind, DataplaneEventKind::kZero);
  EXPECT_EQ(result.history[2].kind, DataplaneEventKind::kRead);
  EXPECT_EQ(result.history[2].aux, l.tag(kGen, 10));
  EXPECT_EQ(result.history[2].check, static_cast<std::uint8_t>(PairCheck::kStalePayload));
  EXPECT_EQ(result.history[2].want, l.tag(kGen, 10));  // the layout's expectation, as traced
  EXPECT_EQ(result.history[3].kind, DataplaneEventKind::kReduced);
  EXPECT_EQ(result.history[4].kind, DataplaneEventKind::kOverwriteSeen);
  EXPECT_EQ(result.history[4].tag, l.tag(kGen, 13));

  // The findings are the host Recorder's, word for word: fed the same calls directly.
  Result host;
  Recorder recorder(0, 0, host);
  recorder.readPair(1, 0, 10, 0, layout::Taken{l.tag(kGen, 10), l.tag(kGen, 10), l.tag(kGen, 10)},
                    PairCheck::kStalePayload);
  recorder.reduced(0, 10, false);  // explained by the stale pair of its step: no finding
  recorder.overwriteSeen(1, 1, 11, 1, l.tag(kGen, 13));
  recorder.reduced(40, 50, false);
  ASSERT_EQ(host.findings.size(), 3u);
  ASSERT_EQ(result.findings.size(), host.findings.size());
  for (std::size_t i = 0; i < host.findings.size(); ++i) {
    EXPECT_EQ(result.findings[i].text, host.findings[i].text);
    EXPECT_EQ(result.findings[i].violation, host.findings[i].violation);
    EXPECT_EQ(result.findings[i].step, host.findings[i].step);
  }
  EXPECT_TRUE(result.detail.empty()) << result.detail;

  // A trace whose arrays overflowed says so.
  Result full;
  full.historySteps = 2;
  counts.events = events.size() + 7;
  applyTrace(&l, 0, counts, events, {}, full);
  EXPECT_NE(full.detail.find("lost 7 history events"), std::string::npos) << full.detail;
}

// A registered layout's kernel traces its own acknowledgements (TraceLog::recordAcks) and each
// read's expected word: the history takes both as they came, and the host adds no acknowledgement
// of the reference family's.
TEST(DeviceTrace, ARegisteredLayoutsTraceKeepsItsOwnAcknowledgementsAndExpectations) {
  std::vector<TraceEvent> events(8);
  const std::vector<TraceEvent> none;
  gpu_kernels::TraceLog log{events.data(), 8, nullptr, 0, 4, /*recordAcks=*/true};
  gpu_kernels::TraceRecorder<layout::HostMemOps> trace(log);
  const layout::Word flag = (layout::Word{1} << 63) | 10u;  // a team's own tag, no generation
  trace.readPair(1, 0, 10, 0, layout::Taken{flag, flag, flag, false}, PairCheck::kGenuine);
  trace.acknowledged(1, 0, 10, 77);
  trace.readPair(1, 1, 11, 1, layout::Taken{flag, flag, flag + 1, true}, PairCheck::kStaleTag);
  ASSERT_EQ(trace.counts().events, 3u);
  ASSERT_EQ(trace.counts().notes, 1u);  // no room: counted, not kept
  events.resize(3);

  Result result;
  result.generation = kGen;
  result.historySteps = 4;
  applyTrace(nullptr, 0, trace.counts(), events, none, result);
  ASSERT_EQ(result.history.size(), 3u);
  EXPECT_EQ(result.history[0].kind, DataplaneEventKind::kRead);
  EXPECT_EQ(result.history[0].want, flag);
  EXPECT_EQ(result.history[1].kind, DataplaneEventKind::kAck);
  EXPECT_EQ(result.history[1].peer, 1);
  EXPECT_EQ(result.history[1].epoch, 10u);
  EXPECT_EQ(result.history[1].tag, 77u);
  EXPECT_EQ(result.history[2].want, flag + 1);
  EXPECT_NE(result.detail.find("lost 1 failed checks"), std::string::npos) << result.detail;

  // Without recordAcks (the reference family's runs) the kernel keeps no acknowledgement.
  std::vector<TraceEvent> plain(8);
  gpu_kernels::TraceLog off{plain.data(), 8, nullptr, 0, 4};
  gpu_kernels::TraceRecorder<layout::HostMemOps> untraced(off);
  untraced.acknowledged(1, 0, 10, 77);
  EXPECT_EQ(untraced.counts().events, 0u);
}

// The GPU path of a registered layout: without kernels registered for it, `--runtime gpu` refuses
// it, naming how a team registers them; with a launch registered, nothing is refused.
TEST(DeviceMapping, ARegisteredLayoutRunsOnGpusOnlyWithItsKernelsRegistered) {
  Spec spec;
  layout::registerEngine("test/gpu-layout", "a test's", false,
                         layout::findLayout("reference")->engine);
  spec.layout = "test/gpu-layout";
  const auto refused = gpuUnsupported(spec, 2);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].key, "layout");
  EXPECT_NE(refused[0].message.find("registerLayoutKernels"), std::string::npos)
      << refused[0].message;
  layout::registerGpuLaunch("test/gpu-layout", [](void*, const void*) { return 0; });
  EXPECT_TRUE(gpuUnsupported(spec, 2).empty());
  const gpu_kernels::Trace request = traceRequest(spec, 2);
  EXPECT_TRUE(request.recordAcks);
  const gpu_kernels::ProtocolRun run = toProtocolRun(spec, 2, std::chrono::milliseconds(100));
  EXPECT_EQ(run.layout.ranks, 2);
  EXPECT_THROW(layout::registerGpuLaunch("test/not-registered", {}), std::invalid_argument);
}

// Forwards every protocol call to the host's Recorder and to the device trace's recorder: one run,
// both records.
struct Both {
  Recorder& host;
  gpu_kernels::TraceRecorder<layout::HostMemOps>& trace;
  void pushing(int d, std::uint64_t s, std::uint32_t e, int k, layout::Word a) {
    host.pushing(d, s, e, k, a);
    trace.pushing(d, s, e, k, a);
  }
  void payloadStored(int d, std::uint64_t s) {
    host.payloadStored(d, s);
    trace.payloadStored(d, s);
  }
  void tagStoring(int d, std::uint64_t s) {
    host.tagStoring(d, s);
    trace.tagStoring(d, s);
  }
  void pushed(int d, std::uint64_t s, std::uint32_t e, int k, layout::Word t) {
    host.pushed(d, s, e, k, t);
    trace.pushed(d, s, e, k, t);
  }
  void readPair(int src, std::uint64_t s, std::uint32_t e, int k, const layout::Taken& t,
                PairCheck c) {
    host.readPair(src, s, e, k, t, c);
    trace.readPair(src, s, e, k, t, c);
  }
  void acknowledged(int src, std::uint64_t s, std::uint32_t e, layout::Word w) {
    host.acknowledged(src, s, e, w);
    trace.acknowledged(src, s, e, w);
  }
  void overwriteSeen(int src, std::uint64_t s, std::uint32_t e, int k, layout::Word t) {
    host.overwriteSeen(src, s, e, k, t);
    trace.overwriteSeen(src, s, e, k, t);
  }
  void zeroed(int src, std::uint64_t s, std::uint32_t e, int k, layout::Word t) {
    host.zeroed(src, s, e, k, t);
    trace.zeroed(src, s, e, k, t);
  }
  void rearming(int o, int src, int k, std::uint64_t s, std::uint32_t e, layout::Word a) {
    host.rearming(o, src, k, s, e, a);
    trace.rearming(o, src, k, s, e, a);
  }
  void rearmed(int o, int src, int k, std::uint64_t s, std::uint32_t e) {
    host.rearmed(o, src, k, s, e);
    trace.rearmed(o, src, k, s, e);
  }
  void reduced(std::uint64_t s, std::uint32_t e, bool r) {
    host.reduced(s, e, r);
    trace.reduced(s, e, r);
  }
};

// A step of `spec`'s workload on `proto`, through layout/workloads.h as the host's session and
// the kernels' KernelWorkload (gpu_kernels/layout_kernel.h) call it.
template <class P>
layout::Wait stepOf(const Spec& spec, P& proto, std::uint64_t step, std::uint32_t epoch, bool read,
                    layout::Tally& tally, layout::ReplayEpoch& replay) {
  const bool shared = spec.workload == Workload::kTwoInFlightSharedSlots;
  switch (spec.workload) {
    case Workload::kExchange:
      break;
    case Workload::kAllReduce:
      return read ? layout::AllReduceOf<P>::readPhase(proto, step, epoch, tally)
                  : layout::AllReduceOf<P>::pushPhase(proto, step, epoch);
    case Workload::kTwoInFlight:
    case Workload::kTwoInFlightSharedSlots:
      return read ? layout::TwoInFlightOf<P>::readPhase(proto, step, epoch, tally, shared)
                  : layout::TwoInFlightOf<P>::pushPhase(proto, step, epoch, shared);
    case Workload::kGraphReplay:
    case Workload::kGraphReplayCapturedEpoch:
      return read ? layout::GraphReplayOf<P>::readPhase(proto, step, epoch, tally, replay)
                  : layout::GraphReplayOf<P>::pushPhase(proto, step, epoch, replay);
  }
  return read ? layout::ExchangeOf<P>::readPhase(proto, step, epoch, tally)
              : layout::ExchangeOf<P>::pushPhase(proto, step, epoch);
}

// Two ranks on host threads run `spec`'s layout and workload through layout::Protocol with both
// observers; returns, per rank, the host's Result and the one converted from the trace (the
// history's steps as traceRequest asks the kernels for them: collectives under two-in-flight).
std::vector<std::pair<Result, Result>> runBoth(const Spec& spec, std::uint64_t lateReaderEvery) {
  const layout::Layout l = makeLayout(spec, 2);
  std::vector<std::vector<layout::Word>> memory(2, std::vector<layout::Word>(l.words(), 0));
  std::vector<layout::Word*> buffers = {memory[0].data(), memory[1].data()};
  std::vector<std::pair<Result, Result>> out(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      auto& [host, converted] = out[static_cast<std::size_t>(rank)];
      host.generation = converted.generation = kGen;
      const std::uint64_t historySteps = traceRequest(spec, 2).historySteps;
      host.historySteps = converted.historySteps = historySteps;
      std::vector<TraceEvent> events(4096);
      std::vector<TraceEvent> notes(kDeviceTraceNotes);
      gpu_kernels::TraceLog log{events.data(), 4096, notes.data(), kDeviceTraceNotes, historySteps};
      Recorder recorder(rank, historySteps, host);
      gpu_kernels::TraceRecorder<layout::HostMemOps> trace(log);
      Both both{recorder, trace};
      layout::Protocol<layout::HostMemOps, Both> proto(l, rank, kGen, buffers.data(),
                                                       2'000'000'000ULL, both);
      layout::Tally tally;
      layout::ReplayEpoch replay;
      replay.capturedEpoch = spec.workload == Workload::kGraphReplayCapturedEpoch;
      for (std::uint64_t step = 0; step < spec.steps; ++step) {
        const auto epoch = static_cast<std::uint32_t>(spec.startEpoch + step);
        ASSERT_TRUE(stepOf(spec, proto, step, epoch, false, tally, replay).ok());
        if (rank == 1 && lateReaderEvery > 0 && step % lateReaderEvery == 0) {
          std::this_thread::sleep_for(2ms);
        }
        ASSERT_TRUE(stepOf(spec, proto, step, epoch, true, tally, replay).ok());
      }
      events.resize(std::min<std::size_t>(trace.counts().events, events.size()));
      notes.resize(std::min<std::size_t>(trace.counts().notes, notes.size()));
      applyTrace(&l, rank, trace.counts(), events, notes, converted);
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

void expectSameRecord(const Result& host, const Result& converted) {
  ASSERT_EQ(host.history.size(), converted.history.size());
  std::vector<long long> apart;  // |host time - trace time| of each event
  for (std::size_t i = 0; i < host.history.size(); ++i) {
    const DataplaneEvent& a = host.history[i];
    const DataplaneEvent& b = converted.history[i];
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.peer, b.peer) << i;
    EXPECT_EQ(a.slot, b.slot) << i;
    EXPECT_EQ(a.step, b.step) << i;
    EXPECT_EQ(a.epoch, b.epoch) << i;
    EXPECT_EQ(a.tag, b.tag) << i;
    EXPECT_EQ(a.aux, b.aux) << i;
    EXPECT_EQ(a.check, b.check) << i;
    apart.push_back(std::llabs(a.tNs - b.tNs));
  }
  // Each observer reads the clock itself, one right after the other: the same moment, on the same
  // base and unit. A preemption between the two reads can part a few events by milliseconds (5.6
  // ms seen under TSan on a loaded box), so the typical event is judged (the median: under 1 ms;
  // another base or unit moves every event) and every event only against a gross bound.
  if (!apart.empty()) {
    std::vector<long long> sorted = apart;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    EXPECT_LT(sorted[sorted.size() / 2], 1'000'000) << "median distance, ns";
    EXPECT_LT(*std::max_element(apart.begin(), apart.end()), 1'000'000'000) << "largest, ns";
  }
  ASSERT_EQ(host.findings.size(), converted.findings.size());
  for (std::size_t i = 0; i < host.findings.size(); ++i) {
    EXPECT_EQ(host.findings[i].text, converted.findings[i].text) << i;
  }
}

TEST(DeviceTrace, OneProtocolRunRecordedBothWaysGivesTheSameHistoryAndFindings) {
  // zero-then-push: zero events, stale payloads found in-band.
  Spec zero;
  zero.layout = "zero-then-push";
  zero.steps = 20;
  zero.history = 10;
  auto both = runBoth(zero, 0);
  for (const auto& [host, converted] : both) expectSameRecord(host, converted);
  EXPECT_FALSE(both[1].first.findings.empty());

  // single-buffer with a late reader: overwrites seen in-band, pushes over unread pairs.
  Spec single;
  single.layout = "single-buffer";
  single.steps = 60;
  single.history = 60;
  both = runBoth(single, 10);
  for (const auto& [host, converted] : both) expectSameRecord(host, converted);
  EXPECT_FALSE(both[1].first.findings.empty());
}

// The workloads beyond the exchange, as the kernels run them: two-in-flight records two
// collectives a step (steps 2s and 2s + 1, the history twice as many steps), graph-replay the
// replay's epoch; their controls' in-band findings come back from the notes worded as the host's.
TEST(DeviceTrace, TwoInFlightAndGraphReplayRecordedBothWaysGiveTheSameHistoryAndFindings) {
  for (const Workload workload : {Workload::kTwoInFlight, Workload::kGraphReplay}) {
    Spec clean;
    clean.workload = workload;
    clean.steps = 30;
    clean.history = 10;
    const auto both = runBoth(clean, 5);
    for (const auto& [host, converted] : both) {
      expectSameRecord(host, converted);
      EXPECT_TRUE(host.findings.empty()) << toString(workload);
      const auto last = std::max_element(
          host.history.begin(), host.history.end(),
          [](const DataplaneEvent& a, const DataplaneEvent& b) { return a.step < b.step; });
      ASSERT_NE(last, host.history.end());
      EXPECT_EQ(last->step, clean.history * model::collectivesPerStep(workload) - 1)
          << toString(workload);
    }
  }
  for (const Workload control :
       {Workload::kTwoInFlightSharedSlots, Workload::kGraphReplayCapturedEpoch}) {
    Spec broken;
    broken.workload = control;
    broken.steps = 40;
    broken.history = 40;
    const auto both = runBoth(broken, 10);
    std::size_t findings = 0;
    for (const auto& [host, converted] : both) {
      expectSameRecord(host, converted);
      findings += host.findings.size();
    }
    EXPECT_GT(findings, 0u) << toString(control);
  }
}

// --- kernel outcome -> Result -------------------------------------------------------------------

TEST(DeviceOutcome, ATimeoutNamesRankPeerSlotAndEpochAsOnTheHost) {
  Spec spec;
  ProtocolOutcome o;
  o.end = ProtocolOutcome::End::kWait;
  o.wait.status = layout::Status::kTimeout;
  o.wait.what = layout::WaitFor::kPair;
  o.wait.rank = 0;
  o.wait.peer = 1;
  o.wait.slot = 1;
  o.wait.epoch = 7;
  o.wait.step = 7;
  o.stepsDone = 7;
  o.tally.pairs = 7;
  o.tally.genuine = 7;
  Result result;
  applyOutcome(o, spec, 0, 500ms, 30s, result);
  EXPECT_EQ(result.outcome, DataplaneOutcome::kTimeout);
  EXPECT_EQ(result.waitPeer, 1);
  EXPECT_EQ(result.waitSlot, 1);
  EXPECT_EQ(result.waitEpoch, 7u);
  EXPECT_EQ(result.pairsGenuine, 7u);
  EXPECT_NE(result.detail.find("rank 0 timed out after 500 ms waiting for rank 1's pair of epoch "
                               "7 (step 7) at slot (1, source 1) of rank 0's buffer"),
            std::string::npos)
      << result.detail;

  ProtocolOutcome aborted = o;
  aborted.wait.status = layout::Status::kAborted;
  aborted.wait.abortedBy = 1;
  Result other;
  applyOutcome(aborted, spec, 0, 500ms, 30s, other);
  EXPECT_EQ(other.outcome, DataplaneOutcome::kAborted);
  EXPECT_EQ(other.abortedBy, 1);

  ProtocolOutcome stopped;
  stopped.end = ProtocolOutcome::End::kStopped;
  spec.stop = Stop{1, 40};
  Result stop;
  applyOutcome(stopped, spec, 1, 500ms, 30s, stop);
  EXPECT_EQ(stop.outcome, DataplaneOutcome::kStopped);
  EXPECT_EQ(stop.detail, "rank 1 stopped at step 40 as planned");
}

TEST(DeviceOutcome, AKernelPastTheHostBoundFailsC8) {
  Spec spec;
  spec.steps = 100;
  ProtocolOutcome o;
  o.end = ProtocolOutcome::End::kHostAborted;
  o.stepsDone = 12;
  std::vector<Result> results(2);
  for (int r = 0; r < 2; ++r) {
    describeRun(spec, 2, 1s, results[static_cast<std::size_t>(r)]);
    applyOutcome(o, spec, r, 1s, 9s, results[static_cast<std::size_t>(r)]);
  }
  EXPECT_EQ(results[0].outcome, DataplaneOutcome::kTimeout);
  EXPECT_NE(results[0].detail.find("ran past the host's bound of 9000 ms (step 12 of 100)"),
            std::string::npos)
      << results[0].detail;
  // Even beside a planted stop (timeouts are then expected), a host-bound end is a C8 problem.
  results[1].outcome = DataplaneOutcome::kStopped;
  results[1].detail = stopDetail(1, 3);
  RunRecord record = recordOf(results);
  const Verdict c8 = checkBoundedWithDataPlane(record);
  EXPECT_TRUE(c8.failed()) << describe(c8);
  EXPECT_TRUE(testing::anyFinding(c8, "ran past the host's bound", 0)) << describe(c8);
}

// --- what is judged when the data plane did not run ---------------------------------------------

TEST(DeviceDataPlane, ADataPlaneAskedForAndNotRunFailsC6AndC7) {
  Spec spec;
  std::vector<Result> results(2);
  for (auto& r : results) {
    r.outcome = DataplaneOutcome::kError;
    r.detail = "this build has no GPU data-plane kernels";
  }
  RunRecord record = recordOf(results);
  record.scenario.dataPlane = spec;
  for (const Verdict& v : {checkers::checkNoOverwrite(record), checkers::checkNoStale(record),
                           checkBoundedWithDataPlane(record)}) {
    EXPECT_TRUE(v.failed()) << describe(v);
    EXPECT_TRUE(testing::anyFinding(v, "this build has no GPU data-plane kernels", 0))
        << describe(v);
  }
  // No rank reached the data plane at all (a handshake that failed): still a failure.
  for (auto& r : record.ranks) r.dataPlane.reset();
  const Verdict c6 = checkers::checkNoOverwrite(record);
  EXPECT_TRUE(c6.failed()) << describe(c6);
  EXPECT_TRUE(testing::anyFinding(c6, "no data plane ran", 1)) << describe(c6);
  // Only a scenario without a data plane is not applicable.
  record.scenario.dataPlane.reset();
  EXPECT_EQ(checkers::checkNoStale(record).status, Verdict::Status::kNotApplicable);
}

// --- validation under --runtime gpu -------------------------------------------------------------

TEST(DeviceValidation, ADataPlaneNeedsAScenarioThatExpectsSuccess) {
  try {
    parseScenario(
        "ranks: 2\nfaults:\n  - {site: open, rank: 1}\ndataplane:\n  steps: 10\nexpect:\n  "
        "outcome: raise\n",
        "raise.yaml");
    FAIL() << "a data plane after a handshake that raises validated";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("a 'dataplane' runs only after a handshake that "
                                         "succeeded on every rank"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace peerconf::harness::dataplane
