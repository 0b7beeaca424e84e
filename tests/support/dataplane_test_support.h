// Helpers for the data-plane tests: run N ranks of the host driver as threads over plain host
// buffers (filled with garbage, as memory that is never zeroed), a clean synthetic history, and
// wrap their results in a RunRecord for the checkers.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/driver.h"
#include "layout/layout.h"
#include "model/dataplane_result.h"
#include "model/dataplane_spec.h"
#include "model/run_record.h"
#include "model/verdict.h"
#include "thread/run_ranks.h"

namespace peerconf::harness::dataplane::testing {

// A run of the driver on `ranks` threads; every buffer is `bytes` long (0: just what the layout
// needs) and starts with random words drawn from `seed`.
struct HostRun {
  std::vector<model::Result> results;
  std::vector<std::string> errors;  // a rank whose body threw
  std::chrono::nanoseconds wall{0};
};

inline HostRun runOnThreads(const model::Spec& spec, int ranks,
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(2000),
                            std::uint64_t seed = 1, std::size_t bytes = 0) {
  const layout::Layout shape = makeLayout(spec, ranks);
  const std::size_t words = bytes == 0 ? shape.words() : bytes / sizeof(layout::Word);
  std::vector<std::vector<layout::Word>> memory(static_cast<std::size_t>(ranks),
                                                std::vector<layout::Word>(words));
  std::mt19937_64 random(seed);
  for (auto& buffer : memory) {
    for (auto& word : buffer) word = random();
  }
  std::vector<layout::Word*> buffers;
  for (auto& buffer : memory) buffers.push_back(buffer.data());

  HostRun run;
  run.results.resize(static_cast<std::size_t>(ranks));
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes =
      thread::runRanks(ranks, timeout * 4 + std::chrono::seconds(5), [&](int rank, Group& group) {
        RankMemory view;
        view.rank = rank;
        view.buffers = buffers;
        view.bytes = words * sizeof(layout::Word);
        run.results[static_cast<std::size_t>(rank)] = runRank(spec, view, &group, timeout);
      });
  run.wall = std::chrono::steady_clock::now() - start;
  for (const auto& outcome : outcomes) {
    if (!outcome.ok()) run.errors.push_back(outcome.message);
  }
  return run;
}

// The results as a RunRecord of a successful handshake (what the checkers read).
inline model::RunRecord recordOf(const std::vector<model::Result>& results) {
  model::RunRecord record;
  record.scenario.name = "dataplane-test";
  record.scenario.file = "dataplane-test.yaml";
  record.scenario.ranks = static_cast<int>(results.size());
  record.launcher = "threads";
  record.runtime = "mock";
  for (std::size_t r = 0; r < results.size(); ++r) {
    model::RankResult rank;
    rank.rank = static_cast<int>(r);
    rank.status = model::RankStatus::kOk;
    rank.dataPlane = results[r];
    record.ranks.push_back(std::move(rank));
  }
  return record;
}

// The generation of cleanHistory()'s data plane.
inline constexpr std::uint32_t kCleanGeneration = 0x00c0ffee;

// A clean two-rank exchange of `steps` steps on the reference layout, as the recorder would
// have written it: pushes 10 us apart, each read 5 us after its push (the C6/C7 tests break it in
// one place).
inline std::vector<model::Result> cleanHistory(std::uint64_t steps = 8) {
  const layout::Layout layout;
  const std::uint32_t gen = kCleanGeneration;
  std::vector<model::Result> results(2);
  for (model::Result& res : results) {
    res.layout = "reference";
    res.workload = "exchange";
    res.ranks = 2;
    res.depth = 2;
    res.slots = 2;
    res.payloadWords = 6;
    res.generation = gen;
    res.stepsPlanned = steps;
    res.stepsDone = steps;
    res.outcome = model::DataplaneOutcome::kCompleted;
    res.historySteps = steps;
    res.pairsRead = steps;
    res.pairsGenuine = steps;
    res.clockDomain = 42;
  }
  for (std::uint64_t step = 0; step < steps; ++step) {
    const auto epoch = static_cast<std::uint32_t>(step);
    const std::int64_t t = 1'000'000 + static_cast<std::int64_t>(step) * 100'000;
    for (int s = 0; s < 2; ++s) {
      model::DataplaneEvent push;
      push.kind = model::DataplaneEventKind::kPush;
      push.peer = 1 - s;
      push.slot = layout.slotOf(epoch);
      push.step = step;
      push.epoch = epoch;
      push.tag = layout.tag(gen, epoch);
      push.aux = step >= 2 ? layout.tag(gen, epoch - 1) : 0;  // the reader is one step behind
      push.t2Ns = t + s * 1000;
      push.tNs = push.t2Ns + 100;
      results[static_cast<std::size_t>(s)].history.push_back(push);
    }
    for (int d = 0; d < 2; ++d) {
      model::DataplaneEvent read;
      read.kind = model::DataplaneEventKind::kRead;
      read.peer = 1 - d;
      read.slot = layout.slotOf(epoch);
      read.step = step;
      read.epoch = epoch;
      read.tag = layout.tag(gen, epoch);
      read.aux = read.tag;
      read.want = read.tag;
      read.tNs = t + 50'000;
      results[static_cast<std::size_t>(d)].history.push_back(read);
      model::DataplaneEvent ack = read;  // released at once, with the step's tag
      ack.kind = model::DataplaneEventKind::kAck;
      ack.slot = -1;
      ack.aux = 0;
      ack.want = 0;
      ack.tNs = read.tNs + 10;
      results[static_cast<std::size_t>(d)].history.push_back(ack);
    }
  }
  return results;
}

// The first event of `kind` at `step` in `result`'s history, or nullptr.
inline model::DataplaneEvent* findEvent(model::Result& result, model::DataplaneEventKind kind,
                                        std::uint64_t step) {
  for (model::DataplaneEvent& e : result.history) {
    if (e.kind == kind && e.step == step) return &e;
  }
  return nullptr;
}

// "status: summary" and every finding, for assertion messages.
inline std::string describe(const model::Verdict& verdict) {
  std::string text = std::string(verdict.status == model::Verdict::Status::kPass   ? "pass"
                                 : verdict.status == model::Verdict::Status::kFail ? "FAIL"
                                                                                   : "n/a") +
                     ": " + verdict.summary;
  for (const auto& f : verdict.findings) {
    text += "\n  " + (f.rank >= 0 ? "rank " + std::to_string(f.rank) + ": " : "") + f.text;
  }
  return text;
}

inline bool anyFinding(const model::Verdict& verdict, const std::string& needle, int rank = -2) {
  for (const auto& f : verdict.findings) {
    if ((rank == -2 || f.rank == rank) && f.text.find(needle) != std::string::npos) return true;
  }
  return false;
}

// What a data-plane checker says of the clean history's record without any data plane (a checker
// must answer: not applicable) and with every rank reporting an empty one (asked for and not
// run: it must fail).
template <typename Check>
std::pair<model::Verdict, model::Verdict> withoutAndSkipped(Check check) {
  model::RunRecord record = recordOf(cleanHistory());
  for (auto& r : record.ranks) r.dataPlane.reset();
  model::Verdict without = check(record);
  for (auto& r : record.ranks) r.dataPlane = model::Result{};
  return {std::move(without), check(record)};
}

}  // namespace peerconf::harness::dataplane::testing
