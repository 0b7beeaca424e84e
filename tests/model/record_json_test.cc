// JSON (de)serialization of run records: lossless round trips, leniency and strictness; the data
// plane's spec and results inside them (dataplane_result_json.h).
#include "model/record_json.h"

#include <gtest/gtest.h>

#include "model/dataplane_result_json.h"
#include "synthetic_run.h"

namespace peerconf::harness {

using model::dumpJson;
using model::Event;
using model::eventFromJson;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::LedgerRecord;
using model::MessageExpectation;
using model::MessageKind;
using model::Point;
using model::Prefill;
using model::Property;
using model::RankResult;
using model::rankResultFromJson;
using model::RankStatus;
using model::Role;
using model::RunRecord;
using model::runRecordFromJson;
using model::Scenario;
using model::Spec;
using model::specFromJson;
using model::Stop;
using model::toJson;
using model::Verdict;
using model::verdictFromJson;
using model::Workload;
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

void expectSame(const Event& a, const Event& b) {
  EXPECT_EQ(a.tNs, b.tNs);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.what, b.what);
  EXPECT_EQ(a.peer, b.peer);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.fault, b.fault);
  EXPECT_EQ(a.buffer, b.buffer);
}

void expectSame(const LedgerRecord& a, const LedgerRecord& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.ptr, b.ptr);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.ownerDevice, b.ownerDevice);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.error, b.error);
}

void expectSame(const RankResult& a, const RankResult& b) {
  SCOPED_TRACE("rank " + std::to_string(a.rank));
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.errorType, b.errorType);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.thisRank, b.thisRank);
  EXPECT_EQ(a.cause, b.cause);
  EXPECT_EQ(a.causeCode, b.causeCode);
  EXPECT_EQ(a.ownSlotIsLocal, b.ownSlotIsLocal);
  EXPECT_EQ(a.addressFindings, b.addressFindings);
  EXPECT_EQ(a.closeTwiceOk, b.closeTwiceOk);
  EXPECT_EQ(a.closeErrors, b.closeErrors);
  EXPECT_EQ(a.leftAfterClose, b.leftAfterClose);
  EXPECT_EQ(a.causeOp, b.causeOp);
  EXPECT_EQ(a.causePeer, b.causePeer);
  EXPECT_EQ(a.tableChecked, b.tableChecked);
  EXPECT_EQ(a.hostTable, b.hostTable);
  EXPECT_EQ(a.deviceTable, b.deviceTable);
  EXPECT_EQ(a.tableError, b.tableError);
  EXPECT_EQ(a.closeErrorType, b.closeErrorType);
  EXPECT_EQ(a.closeFailures, b.closeFailures);
  EXPECT_EQ(a.ledgerAtClose, b.ledgerAtClose);
  EXPECT_EQ(a.ledgerAfterDestroy, b.ledgerAfterDestroy);
  EXPECT_EQ(a.ledgerAvailable, b.ledgerAvailable);
  EXPECT_EQ(a.harnessReleases, b.harnessReleases);
  EXPECT_EQ(a.deviceLeftovers, b.deviceLeftovers);
  ASSERT_EQ(a.ledger.size(), b.ledger.size());
  for (std::size_t i = 0; i < a.ledger.size(); ++i) expectSame(a.ledger[i], b.ledger[i]);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) expectSame(a.events[i], b.events[i]);
  EXPECT_EQ(a.endNs, b.endNs);
}

void expectSame(const Fault& a, const Fault& b) {
  EXPECT_EQ(a.site, b.site);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.peer, b.peer);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.delay, b.delay);
  EXPECT_EQ(a.at, b.at);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.probability, b.probability);
  EXPECT_EQ(a.mark.line, b.mark.line);
  EXPECT_EQ(a.mark.column, b.mark.column);
}

void expectSame(const MessageExpectation& a, const MessageExpectation& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.text, b.text);
}

void expectSame(const Scenario& a, const Scenario& b) {
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.bufferBytes, b.bufferBytes);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.deadline, b.deadline);
  ASSERT_EQ(a.faults.size(), b.faults.size());
  for (std::size_t i = 0; i < a.faults.size(); ++i) expectSame(a.faults[i], b.faults[i]);
  EXPECT_EQ(a.expect.outcome, b.expect.outcome);
  ASSERT_EQ(a.expect.messages.size(), b.expect.messages.size());
  for (const auto& [rank, message] : a.expect.messages) {
    ASSERT_EQ(b.expect.messages.count(rank), 1u);
    expectSame(message, b.expect.messages.at(rank));
  }
  ASSERT_EQ(a.expect.others.has_value(), b.expect.others.has_value());
  if (a.expect.others) expectSame(*a.expect.others, *b.expect.others);
  EXPECT_EQ(a.expect.reported, b.expect.reported);
  EXPECT_EQ(a.expect.within, b.expect.within);
  EXPECT_EQ(a.expect.violations, b.expect.violations);
  EXPECT_EQ(a.mark.line, b.mark.line);
  EXPECT_EQ(a.mark.column, b.mark.column);
}

void expectSame(const RunRecord& a, const RunRecord& b) {
  expectSame(a.scenario, b.scenario);
  EXPECT_EQ(a.launcher, b.launcher);
  EXPECT_EQ(a.runtime, b.runtime);
  EXPECT_EQ(a.seed, b.seed);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t i = 0; i < a.ranks.size(); ++i) expectSame(a.ranks[i], b.ranks[i]);
  EXPECT_EQ(a.wallNs, b.wallNs);
  EXPECT_EQ(a.firedSites, b.firedSites);
  EXPECT_EQ(a.harnessErrors, b.harnessErrors);
}

// A record where every field differs from its default, extremes included.
RunRecord everyFieldSet() {
  RunRecord record = checkers::testing::openFailureRun(3, 1, 2);
  Scenario& s = record.scenario;
  s.description = "open of peer 2 fails on rank 1 — «unicode» too";
  s.bufferBytes = 1ull << 40;
  s.seed = 0xFFFFFFFFFFFFFFFFull;
  s.deadline = 2500ms;
  s.mark = {3, 1};
  Fault delay;
  delay.site = FaultSite::kDelay;
  delay.ranks = {0, 2};
  delay.delay = 150ms;
  delay.at = Point::kAgree;
  delay.count = 3;
  delay.probability = 0.25;
  delay.mark = {12, 5};
  s.faults.push_back(delay);
  Fault stale;
  stale.site = FaultSite::kHandleStale;
  stale.ranks = {2};
  stale.peer = 0;
  s.faults.push_back(stale);
  s.expect.messages[0] = {MessageKind::kText, "needle"};
  s.expect.messages[2] = {MessageKind::kGroup, {}};
  s.expect.reported = {7};
  s.expect.within = 9000ms;
  s.expect.violations = {"C6", "C7"};
  record.launcher = "mpi";
  record.runtime = "gpu";
  record.seed = 0xFFFFFFFFFFFFFFFEull;
  record.wallNs = 0x7FFFFFFFFFFFFFFFll;
  record.firedSites = {"open", "delay"};
  record.harnessErrors = {"rank 9 sent an unreadable result: \"quoted\"\n newline"};
  RankResult& r = record.ranks[0];
  r.ownSlotIsLocal = false;
  r.addressFindings = {"a", "b"};
  r.closeTwiceOk = false;
  r.closeErrors = {"close failed"};
  r.leftAfterClose = {"addressesDevice() is still 0x40"};
  r.harnessReleases = {"closed mapping of peer 1 at 0x10"};
  r.deviceLeftovers = {"free device memory fell by 2097152 bytes"};
  r.causeCode = -3;
  r.causeOp = "open";
  r.causePeer = 7;
  r.tableChecked = true;
  r.hostTable = {1, -2, 0x7FFFFFFFFFFFFFFFll};
  r.deviceTable = {1, 3};
  r.tableError = "could not read";
  r.closeErrorType = "CloseError";
  r.closeFailures = {"close-handle failed on rank 0 (peer 1): x (1)"};
  r.ledgerAtClose = 42;
  r.ledgerAfterDestroy = 43;
  r.ledger.push_back({"open", 0xFFFFFFFFFFFFFFFFull, 0, -1, 0xFFFFFFFFFFFFFFFFull, 700});
  r.events.push_back({-5, 0, EventKind::kOutcome, "dead", 4, "with \t tab and \"quotes\""});
  r.events.push_back({6, 0, EventKind::kFault, "open", 1, "aimed", 2, 1});  // fault #2, buffer 1
  record.ranks[2].ledgerAvailable = false;
  record.ranks[2].status = RankStatus::kMissing;
  return record;
}

TEST(RecordJson, RunRecordRoundTripIsLossless) {
  const RunRecord original = everyFieldSet();
  const json j = toJson(original);
  const RunRecord back = runRecordFromJson(json::parse(j.dump()));
  expectSame(original, back);
  EXPECT_EQ(toJson(back), j);
}

// A suite's reused child (isolation.h's ChildWorker) runs the scenario it is sent as JSON: a
// foreign-exception fault's call and an entry-corrupt fault's part must survive the trip (without
// them scenarios/group/foreign-exception-at-exchange.yaml ran as a throw from open).
TEST(RecordJson, EveryFaultKeyAScenarioCanSetSurvivesTheScenarioRoundTrip) {
  Scenario scenario;
  scenario.name = "faults";
  scenario.ranks = 3;
  Fault thrown;
  thrown.site = FaultSite::kForeignException;
  thrown.ranks = {1};
  thrown.call = faults::SeamCall::kExchange;
  Fault corrupt;
  corrupt.site = FaultSite::kEntryCorrupt;
  corrupt.ranks = {2};
  corrupt.part = faults::EntryPart::kTail;
  scenario.faults = {thrown, corrupt};
  const Scenario back = model::scenarioFromJson(json::parse(toJson(scenario).dump()));
  ASSERT_EQ(back.faults.size(), 2u);
  EXPECT_EQ(back.faults[0].call, faults::SeamCall::kExchange);
  EXPECT_EQ(back.faults[1].part, faults::EntryPart::kTail);
  EXPECT_EQ(toJson(back), toJson(scenario));
}

// The child runs the scenario it is sent: a shared GPU's placement and memory must survive too
// (without ranks_per_gpu the child would give every rank a GPU of its own).
TEST(RecordJson, DeviceMemoryAndRanksPerGpuSurviveTheScenarioRoundTrip) {
  Scenario scenario;
  scenario.ranks = 4;
  scenario.deviceMemory = {{0, 131136}, {1, 131136}, {2, 131136}, {3, 131136}};
  scenario.ranksPerGpu = 2;
  const Scenario back = model::scenarioFromJson(json::parse(toJson(scenario).dump()));
  EXPECT_EQ(back.deviceMemory, scenario.deviceMemory);
  EXPECT_EQ(back.ranksPerGpu, 2);
}

TEST(RecordJson, RankResultAndEventRoundTrips) {
  const RunRecord record = checkers::testing::hangRun(3, 1);
  for (const RankResult& rank : record.ranks) {
    expectSame(rank, rankResultFromJson(json::parse(toJson(rank).dump())));
    for (const Event& event : rank.events) expectSame(event, eventFromJson(toJson(event)));
  }
  for (auto status : {RankStatus::kOk, RankStatus::kRaised, RankStatus::kDead, RankStatus::kHung,
                      RankStatus::kMissing}) {
    RankResult result;
    result.status = status;
    EXPECT_EQ(rankResultFromJson(toJson(result)).status, status);
  }
}

TEST(RecordJson, VerdictRoundTrip) {
  Verdict verdict;
  verdict.property = Property::kC7NoStale;
  verdict.status = Verdict::Status::kNotApplicable;
  verdict.summary = "s";
  verdict.findings = {{-1, "run"}, {3, "rank three"}};
  verdict.reproduce = "peerconf run x.yaml --seed 1 --launcher threads";
  verdict.expectedViolation = true;
  const Verdict back = verdictFromJson(toJson(verdict));
  EXPECT_EQ(back.property, verdict.property);
  EXPECT_EQ(back.status, verdict.status);
  EXPECT_EQ(back.summary, verdict.summary);
  ASSERT_EQ(back.findings.size(), 2u);
  EXPECT_EQ(back.findings[1].rank, 3);
  EXPECT_EQ(back.findings[1].text, "rank three");
  EXPECT_EQ(back.reproduce, verdict.reproduce);
  EXPECT_TRUE(back.expectedViolation);
}

TEST(RecordJson, AbsentKeysKeepDefaultsUnknownNamesThrow) {
  const RankResult minimal = rankResultFromJson(json{{"rank", 2}, {"status", "hung"}});
  EXPECT_EQ(minimal.rank, 2);
  EXPECT_EQ(minimal.status, RankStatus::kHung);
  EXPECT_TRUE(minimal.closeTwiceOk);
  EXPECT_TRUE(minimal.events.empty());
  EXPECT_THROW(rankResultFromJson(json{{"status", "sleeping"}}), std::invalid_argument);
  EXPECT_THROW(eventFromJson(json{{"kind", "jump"}}), std::invalid_argument);
  EXPECT_THROW(eventFromJson(json{{"t", "soon"}}), json::exception);
}

TEST(RecordJson, InvalidUtf8IsReplacedSoDumpNeverThrows) {
  RankResult result;
  result.message = "runtime said \xff\xfe";
  result.events.push_back({1, 0, EventKind::kThrow, "openMemHandle", 1, "bad \xc3"});
  const json j = toJson(result);
  EXPECT_NO_THROW((void)j.dump());
  EXPECT_EQ(rankResultFromJson(json::parse(j.dump())).message,
            "runtime said \xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(dumpJson(json("\xff")), "\"\xef\xbf\xbd\"");
}

// ---- The data plane ---------------------------------------------------------------------------

TEST(DataPlaneJson, ResultsSurviveTheRankResultRoundTrip) {
  model::Result result;
  result.layout = "reference";
  result.workload = "exchange";
  result.ranks = 2;
  result.generation = 0x00c0ffee;
  result.stepsPlanned = 3;
  result.stepsDone = 2;
  result.clockDomain = 42;
  for (std::uint64_t step = 0; step < 3; ++step) {
    model::DataplaneEvent push;
    push.kind = model::DataplaneEventKind::kPush;
    push.peer = 1;
    push.slot = static_cast<int>(step % 2);
    push.step = step;
    push.epoch = static_cast<std::uint32_t>(step);
    push.tag = 0x00c0ffee00000000ULL + step;
    push.tNs = 1000 * static_cast<std::int64_t>(step);
    push.t2Ns = push.tNs + 100;
    result.history.push_back(push);
  }
  result.findings.push_back({model::Violation::kStale, 0, 1, 1, 1, 1, "a stale pair"});
  result.outcome = model::DataplaneOutcome::kTimeout;
  result.waitWhat = "pair";
  result.waitPeer = 1;
  result.history.front().tag = ~0ULL;  // 64-bit values survive
  RankResult rank;
  rank.status = RankStatus::kOk;
  rank.dataPlane = result;
  const RankResult back = rankResultFromJson(toJson(rank));
  ASSERT_TRUE(back.dataPlane.has_value());
  EXPECT_EQ(model::toJson(*back.dataPlane), model::toJson(result));
  EXPECT_EQ(back.dataPlane->history.front().tag, ~0ULL);
  EXPECT_EQ(back.dataPlane->outcome, model::DataplaneOutcome::kTimeout);
  EXPECT_EQ(back.dataPlane->findings.at(0).violation, model::Violation::kStale);
  rank.dataPlane.reset();
  EXPECT_FALSE(rankResultFromJson(toJson(rank)).dataPlane.has_value());
}

TEST(DataPlaneJson, SpecRoundTrip) {
  using model::Prefill;
  using model::Role;
  using model::Spec;
  using model::Stop;
  using model::Workload;
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

}  // namespace
}  // namespace peerconf::harness
