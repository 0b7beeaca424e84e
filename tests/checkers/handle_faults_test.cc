// C2 on a handle-stale fault, on real runs (ranks as threads, the mocked runtime): the suite's
// stale-handle file passes, its refused open naming an allocation the peer freed; and the run a
// garbage handle makes in its place (a corrupted one, judged as if the stale fault had fired: the
// run of mutant fg-stale-wrong-half, whose stale handle is taken from the wrong bytes) fails C2,
// although the same rank raises "this" for the same peer with the same code (negative control).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "checkers/checkers.h"
#include "checkers/messages.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "model/scenario.h"
#include "scenario/load.h"

namespace peerconf::harness {

using launch::ClockMode;
using launch::LaunchOptions;
using launch::runThreads;
using model::Event;
using model::EventKind;
using model::FaultSite;
using model::LedgerRecord;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;

namespace {

RunRecord runOnThreads(const Scenario& scenario) {
  LaunchOptions options;
  options.clock = ClockMode::kSim;
  return runThreads(scenario, scenario.seed, options);
}

std::string describe(const Verdict& verdict) {
  std::string text = verdict.summary;
  for (const auto& f : verdict.findings)
    text += "\n  rank " + std::to_string(f.rank) + ": " + f.text;
  return text;
}

bool anyFinding(const Verdict& verdict, int rank, const std::string& text) {
  return std::any_of(verdict.findings.begin(), verdict.findings.end(), [&](const auto& f) {
    return f.rank == rank && f.text.find(text) != std::string::npos;
  });
}

// The refused opens of `rank`'s ledger.
std::vector<LedgerRecord> refusedOpens(const RunRecord& record, int rank) {
  std::vector<LedgerRecord> out;
  for (const LedgerRecord& e : record.ranks.at(static_cast<std::size_t>(rank)).ledger) {
    if (e.op == "open" && e.error != 0) out.push_back(e);
  }
  return out;
}

TEST(HandleFaultsTest, AStaleHandleIsRefusedAsAnAllocationThePeerFreed) {
  const RunRecord record = runOnThreads(scenario::loadScenario(
      std::string(PEERCONF_SCENARIOS_DIR) + "/handles/handle-stale-one-peer.yaml"));
  const Verdict c2 = checkers::checkMessages(record);
  EXPECT_EQ(c2.status, Verdict::Status::kPass) << describe(c2);
  const std::vector<LedgerRecord> refused = refusedOpens(record, 0);
  ASSERT_EQ(refused.size(), 1u);
  const auto& peer = record.ranks.at(3).ledger;
  EXPECT_TRUE(std::any_of(peer.begin(), peer.end(),
                          [&](const LedgerRecord& e) {
                            return e.op == "free" && e.generation == refused[0].generation &&
                                   e.ownerDevice == refused[0].ownerDevice;
                          }))
      << "rank 0's runtime refused allocation " << refused[0].generation << " of device "
      << refused[0].ownerDevice << ", which peer 3 never freed";
}

TEST(HandleFaultsTest, AGarbageHandleUnderAStaleFaultFailsC2) {
  const Scenario corrupt = scenario::parseScenario(
      "ranks: 4\n"
      "deadline: 1s\n"
      "faults:\n"
      "  - {site: handle-corrupt, rank: 0, peer: 3}\n"
      "expect:\n"
      "  outcome: raise\n",
      "garbage-as-stale.yaml");
  RunRecord record = runOnThreads(corrupt);
  ASSERT_EQ(checkers::checkMessages(record).status, Verdict::Status::kPass);
  ASSERT_EQ(record.ranks.at(0).status, RankStatus::kRaised);
  // The runtime could not decode the handle: its refused open names no allocation.
  const std::vector<LedgerRecord> refused = refusedOpens(record, 0);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].ownerDevice, -1);
  EXPECT_EQ(refused[0].generation, 0u);

  // The same run, judged as if the stale fault had fired (what the mutant's run shows).
  record.scenario.faults[0].site = FaultSite::kHandleStale;
  for (Event& e : record.ranks.at(0).events) {
    if (e.kind == EventKind::kFault && e.what == "handle-corrupt") e.what = "handle-stale";
  }
  const Verdict c2 = checkers::checkMessages(record);
  EXPECT_EQ(c2.status, Verdict::Status::kFail) << describe(c2);
  EXPECT_TRUE(anyFinding(c2, 0,
                         "the handle-stale fault for peer 3 fired, but no open this rank's "
                         "runtime refused named an allocation peer 3 freed"))
      << describe(c2);
  EXPECT_TRUE(anyFinding(c2, 0, "a handle it could not decode")) << describe(c2);
}

}  // namespace
}  // namespace peerconf::harness
