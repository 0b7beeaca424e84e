// Helpers for the data-plane tests: run N ranks of the host driver as threads over plain host
// buffers (filled with garbage, as memory that is never zeroed), and wrap their results in a
// RunRecord for the checkers.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dataplane/driver.h"
#include "model/dataplane_result.h"
#include "model/dataplane_spec.h"
#include "model/run_record.h"
#include "model/verdict.h"
#include "thread/run_ranks.h"

namespace peerconf::harness::dataplane::testing {

// A run of the driver on `ranks` threads; every buffer is `bytes` long (0: just what the layout
// needs) and starts with random words drawn from `seed`.
struct HostRun {
  std::vector<Result> results;
  std::vector<std::string> errors;  // a rank whose body threw
  std::chrono::nanoseconds wall{0};
};

inline HostRun runOnThreads(const Spec& spec, int ranks,
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
inline RunRecord recordOf(const std::vector<Result>& results) {
  RunRecord record;
  record.scenario.name = "dataplane-test";
  record.scenario.file = "dataplane-test.yaml";
  record.scenario.ranks = static_cast<int>(results.size());
  record.launcher = "threads";
  record.runtime = "mock";
  for (std::size_t r = 0; r < results.size(); ++r) {
    RankResult rank;
    rank.rank = static_cast<int>(r);
    rank.status = RankStatus::kOk;
    rank.dataPlane = results[r];
    record.ranks.push_back(std::move(rank));
  }
  return record;
}

// "status: summary" and every finding, for assertion messages.
inline std::string describe(const Verdict& verdict) {
  std::string text = std::string(verdict.status == Verdict::Status::kPass   ? "pass"
                                 : verdict.status == Verdict::Status::kFail ? "FAIL"
                                                                            : "n/a") +
                     ": " + verdict.summary;
  for (const auto& f : verdict.findings) {
    text += "\n  " + (f.rank >= 0 ? "rank " + std::to_string(f.rank) + ": " : "") + f.text;
  }
  return text;
}

inline bool anyFinding(const Verdict& verdict, const std::string& needle, int rank = -2) {
  for (const auto& f : verdict.findings) {
    if ((rank == -2 || f.rank == rank) && f.text.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace peerconf::harness::dataplane::testing
