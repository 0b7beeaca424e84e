// Several buffers a run (`buffers:`, `buffers_alive:`) and the buffer-order, buffer-size and
// buffer-label faults: what the parser accepts and refuses (with the line and column of the node
// at fault), the rules that tie them to the faults and the outcome, the message every rank must
// raise, what each rank constructs (model/buffers.h), and the writer's and the codec's round trips.
#include "model/buffers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "model/record_json.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness {

using model::BuffersAlive;
using model::FaultSite;
using model::MessageKind;
using model::Point;
using model::Scenario;
using model::ScenarioError;
using scenario::parseScenario;
namespace {

using ::testing::HasSubstr;

// What parsing `text` as "b.yaml" fails with: "b.yaml:LINE:COL: message".
std::string errorOf(const std::string& text) {
  try {
    parseScenario(text, "b.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kTwoBuffers =
    "ranks: 4\n"
    "buffers:\n"
    "  - {label: kv-cache, size: 8KiB}\n"
    "  - {label: workspace, size: 8KiB}\n";

TEST(Buffers, WithoutTheKeyOneUnlabelledBufferOfBuffer) {
  const Scenario s =
      parseScenario("ranks: 2\nbuffer: 4KiB\nexpect: {outcome: success}\n", "b.yaml");
  EXPECT_TRUE(s.buffers.empty());
  const auto listed = model::listedBuffers(s);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].bytes, 4096u);
  EXPECT_EQ(listed[0].label, "");
  EXPECT_FALSE(model::plansBuffers(s));
  EXPECT_FALSE(model::bufferMismatch(s).has_value());
}

TEST(Buffers, ParsesTheListAndHowTheyLive) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "buffers_alive: one-at-a-time\n"
                                       "expect: {outcome: success}\n",
                                   "b.yaml");
  ASSERT_EQ(s.buffers.size(), 2u);
  EXPECT_EQ(s.buffers[0].label, "kv-cache");
  EXPECT_EQ(s.buffers[1].bytes, 8192u);
  EXPECT_EQ(s.buffers[1].mark.line, 4);
  EXPECT_EQ(s.buffersAlive, BuffersAlive::kOneAtATime);
  EXPECT_TRUE(model::plansBuffers(s));
  // Without the key they live together.
  EXPECT_EQ(parseScenario(std::string(kTwoBuffers) + "expect: {outcome: success}\n", "b.yaml")
                .buffersAlive,
            BuffersAlive::kTogether);
}

TEST(Buffers, BadKeysAreErrorsAtTheirNode) {
  EXPECT_THAT(
      errorOf("ranks: 2\nbuffer: 4KiB\nbuffers: [{size: 4KiB}]\nexpect: {outcome: success}\n"),
      HasSubstr("b.yaml:2:1: give either 'buffer'"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers_alive: together\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:2:1: 'buffers_alive' says how the buffers"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers: []\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:2:10: 'buffers' must be a list of 1 to 8 buffers"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers: [{label: x}]\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:2:11: a buffer needs 'size'"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers: [{size: 4KiB, lable: x}]\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:2:24: unknown key 'lable'"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers: [{size: 4KB}]\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:2:18: 'size' must be a positive size"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers: [{size: 4KiB, label: " + std::string(33, 'x') +
                      "}]\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:2:31: 'label' must be at most 32 printable ASCII characters"));
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) + "buffers_alive: sometimes\nexpect: {outcome: success}\n"),
      HasSubstr("b.yaml:5:16: unknown buffers_alive 'sometimes'"));
}

TEST(Buffers, FaultKeysAreCheckedWhereTheyAreWritten) {
  const std::string expect = "expect: {outcome: raise}\n";
  EXPECT_THAT(errorOf(std::string(kTwoBuffers) +
                      "faults: [{site: buffer-size, rank: 1, buffer: 2, size: 4KiB}]\n" + expect),
              HasSubstr("b.yaml:5:47: 'buffer' 2 is out of range: the scenario lists 2 buffer(s)"));
  EXPECT_THAT(errorOf(std::string(kTwoBuffers) +
                      "faults: [{site: buffer-size, rank: 1, size: 8KiB}]\n" + expect),
              HasSubstr("b.yaml:5:45: buffer 0 is listed with 8192 bytes already: this "
                        "buffer-size fault changes nothing"));
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) + "faults: [{site: buffer-size, rank: 1}]\n" + expect),
      HasSubstr("b.yaml:5:10: a buffer-size fault needs 'size'"));
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) +
              "faults: [{site: buffer-label, rank: 1, buffer: 1, label: workspace}]\n" + expect),
      HasSubstr("b.yaml:5:58: buffer 1 is listed with this label already"));
  EXPECT_THAT(errorOf(std::string(kTwoBuffers) +
                      "faults: [{site: buffer-order, rank: 1, size: 4KiB}]\n" + expect),
              HasSubstr("b.yaml:5:40: key 'size' is not valid for site 'buffer-order'"));
  // Reversing one buffer, or buffers alike, changes nothing: refused, not run as a no-op.
  EXPECT_THAT(errorOf("ranks: 2\nbuffer: 4KiB\nfaults: [{site: buffer-order, rank: 1}]\n" + expect),
              HasSubstr("b.yaml:3:17: a buffer-order fault reverses the order of 'buffers:', "
                        "which changes nothing here"));
  EXPECT_THAT(errorOf("ranks: 2\nbuffers: [{size: 4KiB, label: a}, {size: 4KiB, label: a}]\n"
                      "faults: [{site: buffer-order, rank: 1}]\n" +
                      expect),
              HasSubstr("b.yaml:3:17: a buffer-order fault reverses"));
  // A single rank exchanges nothing: nothing to compare.
  EXPECT_THAT(errorOf("ranks: 1\nfaults: [{site: buffer-size, rank: 0, size: 4KiB}]\n" + expect),
              HasSubstr("b.yaml:2:17: site 'buffer-size' never fires with 1 rank"));
}

TEST(Buffers, RulesTieTheFaultsToTheOutcome) {
  // Another fault beside them.
  EXPECT_THAT(errorOf(std::string(kTwoBuffers) +
                      "faults:\n  - {site: buffer-order, rank: 1}\n  - {site: open, rank: 2}\n"
                      "expect: {outcome: raise}\n"),
              HasSubstr("b.yaml:7:5: this open fault is aimed at no buffer"));
  // The same change on every rank: nobody differs from rank 0.
  EXPECT_THAT(errorOf("ranks: 2\nbuffer: 4KiB\n"
                      "faults: [{site: buffer-size, ranks: [0, 1], size: 8KiB}]\n"
                      "expect: {outcome: raise}\n"),
              HasSubstr("b.yaml:3:10: the buffer faults leave every rank constructing what rank 0 "
                        "constructs"));
  // A change past the construction where every rank raises never fires.
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) + "faults:\n  - {site: buffer-order, rank: 1}\n"
                                         "  - {site: buffer-size, rank: 2, buffer: 1, size: 4KiB}\n"
                                         "expect: {outcome: raise}\n"),
      HasSubstr("b.yaml:7:5: fault #1 (buffer-size, line 7) never fires on rank 2: it "
                "changes the rank's construction 1, but every rank raises "
                "BufferMismatchError at construction 0 first"));
  EXPECT_THAT(errorOf(std::string(kTwoBuffers) +
                      "faults: [{site: buffer-order, rank: 1}]\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:6:19: outcome 'success' is impossible: rank(s) [1] construct "
                        "another buffer than rank 0 at construction 0"));
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) + "faults: [{site: buffer-order, rank: 1}]\n"
                                         "expect: {outcome: raise, messages: {others: another}}\n"),
      HasSubstr("b.yaml:6:26: rank 0 cannot say 'another': every rank raises "
                "BufferMismatchError at its construction 0"));
  // Nor device_memory, whose implied faults are derived for one buffer.
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) + "device_memory: 1MiB\nexpect: {outcome: success}\n"),
      HasSubstr("b.yaml:1:1: 'device_memory' cannot go with several buffers"));
  // A data plane over several buffers takes no fault that fails a construction (for now).
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) + "faults: [{site: alloc, rank: 1, buffer: 1}]\n"
                                         "dataplane: {steps: 10}\nexpect: {outcome: raise}\n"),
      HasSubstr("b.yaml:5:10: this alloc fault fails buffer 1's construction, so no buffer's "
                "data plane runs (alive together, they run once every buffer is constructed)"));
  // One at a time, the rounds before it ran theirs: the run raises at buffer 1's construction.
  EXPECT_EQ(
      errorOf(std::string(kTwoBuffers) + "buffers_alive: one-at-a-time\n"
                                         "faults: [{site: alloc, rank: 1, buffer: 1}]\n"
                                         "dataplane: {steps: 10}\nexpect: {outcome: raise}\n"),
      "(no error)");
  // One that leaves it whole it does, and a stop at 'dataplane' aimed at the last buffer.
  EXPECT_EQ(
      errorOf(std::string(kTwoBuffers) + "faults: [{site: close, rank: 1, buffer: 0}]\n"
                                         "dataplane: {steps: 10}\nexpect: {outcome: success}\n"),
      "(no error)");
  EXPECT_EQ(errorOf(std::string(kTwoBuffers) +
                    "faults: [{site: death, rank: 1, at: dataplane, step: 5, buffer: 1}]\n"
                    "dataplane: {steps: 10}\nexpect: {outcome: reported, reported: [1]}\n"),
            "(no error)");
  // A registration mismatch in a later round of one at a time: the rounds before ran theirs.
  EXPECT_EQ(errorOf(std::string(kTwoBuffers) +
                    "buffers_alive: one-at-a-time\n"
                    "faults: [{site: buffer-size, rank: 1, buffer: 1, size: 16KiB}]\n"
                    "dataplane: {steps: 10}\nexpect: {outcome: raise}\n"),
            "(no error)");
  EXPECT_THAT(errorOf(std::string(kTwoBuffers) +
                      "faults: [{site: buffer-size, rank: 1, buffer: 1, size: 16KiB}]\n"
                      "dataplane: {steps: 10}\nexpect: {outcome: raise}\n"),
              HasSubstr("b.yaml:5:10: this buffer-size fault ends the registration rounds at its "
                        "construction, with the buffers alive together"));
  // Aimed at an earlier buffer, its peers would wait for it in the next one's data plane.
  EXPECT_THAT(
      errorOf(std::string(kTwoBuffers) +
              "faults: [{site: hang, rank: 1, at: dataplane, step: 5, buffer: 0}]\n"
              "dataplane: {steps: 10}\nexpect: {outcome: reported, reported: [1]}\n"),
      HasSubstr("b.yaml:5:10: this hang fault at 'dataplane' is aimed at buffer 0, whose data "
                "plane is not the last"));
}

// A data plane per buffer (scenarios/README.md, "A data plane per buffer"): the scenario's for
// each buffer, or the buffer's own, parsed and written back; and what validate refuses, where.
TEST(Buffers, EachBufferRunsTheScenariosDataPlaneOrItsOwn) {
  const Scenario s = parseScenario(
      "ranks: 2\n"
      "buffers:\n"
      "  - {label: kv-cache, size: 8KiB}\n"
      "  - {label: workspace, size: 8KiB, dataplane: {layout: single-buffer, steps: 20}}\n"
      "dataplane: {workload: allreduce, steps: 10}\n"
      "expect: {outcome: success}\n",
      "b.yaml");
  EXPECT_TRUE(model::dataPlanePerBuffer(s));
  EXPECT_EQ(model::dataPlaneOf(s, 0, 0).layout, "reference");
  EXPECT_EQ(model::dataPlaneOf(s, 0, 0).steps, 10u);
  EXPECT_EQ(model::dataPlaneOf(s, 1, 1).layout, "single-buffer");
  EXPECT_EQ(model::dataPlaneOf(s, 1, 1).steps, 20u);
  // Whole, not merged: the buffer's leaves out the workload, so it has the default's.
  EXPECT_EQ(model::dataPlaneOf(s, 1, 1).workload, model::Workload::kExchange);
  EXPECT_EQ(s.buffers[1].dataPlaneMark.line, 4);
  // The writer and the record's codec keep the buffer's own data plane.
  const Scenario back = parseScenario(scenario::writeScenario(s), "b.yaml");
  ASSERT_TRUE(back.buffers[1].dataPlane.has_value());
  EXPECT_EQ(back.buffers[1].dataPlane->layout, "single-buffer");
  EXPECT_FALSE(back.buffers[0].dataPlane.has_value());
  const Scenario decoded = model::scenarioFromJson(model::toJson(s));
  ASSERT_TRUE(decoded.buffers[1].dataPlane.has_value());
  EXPECT_EQ(decoded.buffers[1].dataPlane->steps, 20u);
  EXPECT_EQ(decoded.buffers[1].dataPlaneMark.line, 4);
}

// The certain timeouts of the data planes that run, each named by its buffer: a late writer in
// round 1 is one; in a round that a failing construction keeps from running, none.
TEST(Buffers, CertainTimeoutsAreThoseOfTheDataPlanesThatRun) {
  const std::string late =
      "ranks: 3\nbuffers:\n  - {size: 8KiB}\n"
      "  - size: 8KiB\n"
      "    dataplane:\n"
      "      steps: 50\n"
      "      timeout: 200ms\n"
      "      late: [{rank: 1, role: writer, steps: [10], delay: 500ms}]\n"
      "buffers_alive: one-at-a-time\n"
      "dataplane: {steps: 50}\n";
  const auto timeouts = model::certainDataPlaneTimeouts(
      parseScenario(late + "expect: {outcome: success}\n", "b.yaml"));
  ASSERT_EQ(timeouts.size(), 1u);
  EXPECT_EQ(timeouts[0].buffer, std::optional<std::size_t>(1));
  EXPECT_EQ(timeouts[0].slow.step, 10u);
  EXPECT_EQ(timeouts[0].slow.ranks, std::vector<int>{1});
  const Scenario failing = parseScenario(
      late + "faults: [{site: open, rank: 0, peer: 2, buffer: 1}]\nexpect: {outcome: raise}\n",
      "b.yaml");
  EXPECT_EQ(model::dataPlanesRun(failing), 1u);
  EXPECT_TRUE(model::certainDataPlaneTimeouts(failing).empty());
}

TEST(Buffers, ABuffersOwnDataPlaneIsRefusedWhereNoneCanRun) {
  // Without the scenario's dataplane: every buffer runs one (for now).
  EXPECT_THAT(errorOf("ranks: 2\nbuffers:\n  - {size: 8KiB}\n"
                      "  - {size: 8KiB, dataplane: {steps: 10}}\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:4:18: a buffer's 'dataplane' replaces the scenario's "
                        "'dataplane:' for that buffer, and this scenario has none"));
  // With one buffer.
  EXPECT_THAT(errorOf("ranks: 2\nbuffers:\n  - {size: 8KiB, dataplane: {steps: 10}}\n"
                      "dataplane: {steps: 10}\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:3:18: a buffer's 'dataplane' chooses among several buffers'"));
  // A stop in a buffer's data plane ends that data plane only: accepted, and judged as the one
  // buffer's is (a late delay that times the peers out for certain cannot go with it).
  EXPECT_EQ(errorOf(std::string(kTwoBuffers) + "dataplane: {steps: 10, stop: {rank: 1, step: 5}}\n"
                                               "expect: {outcome: success}\n"),
            "(no error)");
  EXPECT_THAT(errorOf("ranks: 2\nbuffers:\n  - {size: 8KiB}\n"
                      "  - size: 8KiB\n"
                      "    dataplane:\n"
                      "      steps: 10\n"
                      "      timeout: 100ms\n"
                      "      stop: {rank: 0, step: 8}\n"
                      "      late: [{rank: 1, role: writer, steps: [3], delay: 300ms}]\n"
                      "dataplane: {steps: 10}\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:9:57: a late delay that times the peers out for certain"));
  // A delay between half and 1.5 waits on buffer 1's own data plane: the one-buffer rule.
  EXPECT_THAT(errorOf("ranks: 2\nbuffers:\n  - {size: 8KiB}\n"
                      "  - size: 8KiB\n"
                      "    dataplane:\n"
                      "      steps: 10\n"
                      "      timeout: 100ms\n"
                      "      late: [{rank: 1, role: writer, steps: [3], delay: 100ms}]\n"
                      "dataplane: {steps: 10}\nexpect: {outcome: success}\n"),
              HasSubstr("b.yaml:8:57: a late delay of 100 ms is between half and 1.5 times"));
}

TEST(Buffers, EveryRankDefaultsToTheMismatchNamingRanksSizesAndLabels) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "faults: [{site: buffer-order, rank: 2}]\n"
                                       "expect: {outcome: raise}\n",
                                   "b.yaml");
  ASSERT_EQ(s.expect.messages.size(), 4u);
  for (const auto& [rank, message] : s.expect.messages) {
    EXPECT_EQ(message.kind, MessageKind::kText) << rank;
    EXPECT_EQ(message.text,
              "peer memory handshake failed: the TP ranks registered different buffers: rank 2 "
              "registered 'workspace' (8192 bytes) where rank 0 registered 'kv-cache' (8192 "
              "bytes)")
        << rank;
  }
}

TEST(Buffers, ConstructionsApplyTheRanksFaultsAndFireWhereTheyChangeSomething) {
  // [x, y, z, x] reversed is [x, z, y, x]: the order fault fires at construction 1, where rank 1
  // first constructs another buffer than the list has there.
  Scenario s = parseScenario(
      "ranks: 3\n"
      "buffers: [{label: x, size: 1KiB}, {label: y, size: 2KiB}, {label: z, size: 2KiB},"
      " {label: x, size: 1KiB}]\n"
      "faults: [{site: buffer-order, rank: 1}]\n"
      "expect: {outcome: raise}\n",
      "b.yaml");
  // Added in code: a file would be refused (it never fires, see RulesTieTheFaultsToTheOutcome).
  model::Fault size;
  size.site = FaultSite::kBufferSize;
  size.ranks = {2};
  size.buffer = 3;
  size.size = 4096;
  s.faults.push_back(size);
  const auto one = model::constructionsOf(s, 1);
  ASSERT_EQ(one.size(), 4u);
  EXPECT_EQ(one[1].label, "z");
  EXPECT_EQ(one[1].listed, 2u);
  EXPECT_TRUE(one[0].faults.empty());
  EXPECT_EQ(one[1].faults, std::vector<std::size_t>{0});
  const auto two = model::constructionsOf(s, 2);
  EXPECT_EQ(two[3].bytes, 4096u);
  EXPECT_EQ(two[3].faults, std::vector<std::size_t>{1});
  EXPECT_TRUE(model::constructionsOf(s, 0)[1].faults.empty());
  // Rank 1 differs first, at construction 1; rank 2's change at 3 is never reached.
  const auto mismatch = model::bufferMismatch(s);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->at, 1u);
  EXPECT_EQ(mismatch->ranks, std::vector<int>{1});
  EXPECT_THAT(mismatch->message,
              HasSubstr("rank 1 registered 'z' (2048 bytes) where rank 0 registered 'y' (2048 "
                        "bytes)"));
}

TEST(Buffers, SeveralRanksDifferingFromRankZeroAreEachNamed) {
  const Scenario s = parseScenario(
      "ranks: 3\nbuffer: 4KiB\nfaults: [{site: buffer-size, rank: 0, size: 8KiB}]\n"
      "expect: {outcome: raise}\n",
      "b.yaml");
  const auto mismatch = model::bufferMismatch(s);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->ranks, (std::vector<int>{1, 2}));
  EXPECT_THAT(mismatch->message,
              HasSubstr("rank 1 registered an unlabelled buffer (4096 bytes) where rank 0 "
                        "registered an unlabelled buffer (8192 bytes); rank 2 registered"));
}

TEST(Buffers, WriterAndCodecRoundTrip) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "buffers_alive: one-at-a-time\n"
                                       "faults:\n"
                                       "  - {site: buffer-label, rank: 3, buffer: 0, label: \"\"}\n"
                                       "expect: {outcome: raise}\n",
                                   "b.yaml");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].site, FaultSite::kBufferLabel);
  EXPECT_EQ(s.faults[0].label, "");
  std::string why;
  const Scenario written = parseScenario(scenario::writeScenario(s), "b.yaml");
  EXPECT_TRUE(scenario::sameScenario(s, written, &why)) << why;
  const Scenario decoded = model::scenarioFromJson(model::toJson(s));
  EXPECT_TRUE(scenario::sameScenario(s, decoded, &why)) << why;
  EXPECT_EQ(decoded.buffers[1].label, "workspace");
  EXPECT_EQ(decoded.buffersAlive, BuffersAlive::kOneAtATime);
}

// The aimed construction: one buffer of `buffer:` (the aimed one's size), its faults still
// naming their buffer (aimText), and deriving it again changes nothing.
TEST(Buffers, TheAimedConstructionKeepsTheAimForNamesAndDerivesAsItself) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "buffers_alive: one-at-a-time\n"
                                       "faults: [{site: hang, rank: 1, at: exchange, buffer: 1}]\n"
                                       "expect: {outcome: reported}\n",
                                   "b.yaml");
  const Scenario aimed = model::aimedConstruction(s);
  EXPECT_TRUE(aimed.buffers.empty());
  EXPECT_EQ(aimed.bufferBytes, 8192U);
  EXPECT_EQ(aimed.buffersAlive, BuffersAlive::kTogether);
  EXPECT_EQ(model::aimText(aimed.faults[0]), ", buffer 1");
  const Scenario again = model::aimedConstruction(aimed);
  EXPECT_EQ(again.bufferBytes, aimed.bufferBytes);
  EXPECT_TRUE(again.buffers.empty());
  model::Fault plain;
  EXPECT_EQ(model::aimText(plain), "");
}

// Faults aimed at several buffers: how each construction ends, which one the oracle derives (the
// first that may fail or fails, else the last aimed), the faults past a failing one, and the
// aimed construction, whose faults of other buffers name no rank (their indices kept).
TEST(Buffers, TheFirstConstructionThatMayFailIsTheDerivedOne) {
  const Scenario s = parseScenario(std::string(kTwoBuffers) +
                                       "  - {label: scratch, size: 4KiB}\n"
                                       "deadline: 300ms\n"
                                       "faults:\n"
                                       "  - {site: delay, rank: 1, at: open, delay: 100ms, "
                                       "buffer: 0}\n"
                                       "  - {site: alloc, rank: 2, buffer: 1}\n"
                                       "  - {site: open, rank: 3, peer: 0, buffer: 2}\n"
                                       "expect: {outcome: raise}\n",
                                   "b.yaml");
  EXPECT_EQ(model::aimedBuffers(s), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(model::constructionEnd(s, 0), model::ConstructionEnd::kSucceeds);
  EXPECT_EQ(model::constructionEnd(s, 1), model::ConstructionEnd::kFails);
  EXPECT_EQ(model::aimedBuffer(s), 1U);
  EXPECT_EQ(model::failingConstructionBefore(s, 2), 1U);
  EXPECT_EQ(model::failingConstructionBefore(s, 1), std::nullopt);
  const Scenario aimed = model::aimedConstruction(s);
  ASSERT_EQ(aimed.faults.size(), 3U);
  EXPECT_TRUE(aimed.faults[0].ranks.empty());
  EXPECT_EQ(aimed.faults[1].ranks, std::vector<int>{2});
  EXPECT_TRUE(aimed.faults[2].ranks.empty());
  EXPECT_EQ(aimed.bufferBytes, 8192U);
  EXPECT_EQ(model::aimedBuffer(aimed), 1U);  // derives as itself

  // A delay not shorter than the deadline, or a death before the close, fails the construction;
  // a chance failure may; a release fault or a stop at the close does not.
  const auto endOf = [&s](FaultSite site, Point at, double probability) {
    Scenario one = s;
    model::Fault fault;
    fault.site = site;
    fault.ranks = {1};
    fault.at = at;
    fault.delay = std::chrono::milliseconds(300);  // the deadline
    fault.probability = probability;
    fault.onBuffer = 0;
    one.faults = {fault};
    return model::constructionEnd(one, 0);
  };
  EXPECT_EQ(endOf(FaultSite::kDelay, Point::kAgree, 1.0), model::ConstructionEnd::kFails);
  EXPECT_EQ(endOf(FaultSite::kDelay, Point::kClose, 1.0), model::ConstructionEnd::kSucceeds);
  EXPECT_EQ(endOf(FaultSite::kHang, Point::kAlloc, 1.0), model::ConstructionEnd::kFails);
  EXPECT_EQ(endOf(FaultSite::kDeath, Point::kClose, 1.0), model::ConstructionEnd::kSucceeds);
  EXPECT_EQ(endOf(FaultSite::kOpen, Point::kAgree, 0.5), model::ConstructionEnd::kMayFail);
  EXPECT_EQ(endOf(FaultSite::kFree, Point::kAgree, 1.0), model::ConstructionEnd::kSucceeds);
  // Nothing fails: the last aimed construction is the derived one.
  Scenario none = s;
  none.faults = {s.faults[0], s.faults[0]};
  none.faults[1].onBuffer = 2;
  EXPECT_EQ(model::aimedBuffer(none), 2U);
}

// ---- buffer-count: a rank that registers another number of buffers ----

namespace count {

constexpr const char* kThree =
    "ranks: 4\n"
    "buffers:\n"
    "  - {label: kv-cache, size: 4KiB}\n"
    "  - {label: workspace, size: 8KiB}\n"
    "  - {label: scratch, size: 4KiB}\n";

}  // namespace count

TEST(BufferCount, FewerIsTheFirstOfTheListMoreRepeatsTheLast) {
  Scenario s = parseScenario(std::string(count::kThree) +
                                 "faults: [{site: buffer-count, rank: 1, count: 1}]\n"
                                 "expect: {outcome: raise}\n",
                             "b.yaml");
  EXPECT_EQ(s.faults[0].registers, 1u);
  EXPECT_EQ(s.faults[0].count, 0);  // no firing limit
  const auto one = model::constructionsOf(s, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].label, "kv-cache");
  EXPECT_EQ(model::constructionsOf(s, 0).size(), 3u);
  auto mismatch = model::countMismatch(s);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->at, 1u);
  EXPECT_EQ(mismatch->waiting, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(mismatch->returning, std::vector<int>{1});
  EXPECT_FALSE(model::bufferMismatch(s).has_value());  // the common constructions agree
  EXPECT_THAT(model::countFaultText(s, 1),
              HasSubstr("rank 1 registers 1 buffer where the list has 3: it never makes its "
                        "construction 1 ('workspace' (8192 bytes) on the others)"));

  s.faults[0].registers = 5;
  const auto five = model::constructionsOf(s, 1);
  ASSERT_EQ(five.size(), 5u);
  EXPECT_EQ(five[4].label, "scratch");
  EXPECT_EQ(five[3].faults, std::vector<std::size_t>{0});  // fires at the first extra one
  EXPECT_TRUE(five[4].faults.empty());
  mismatch = model::countMismatch(s);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->at, 3u);
  EXPECT_EQ(mismatch->waiting, std::vector<int>{1});
  EXPECT_EQ(mismatch->returning, (std::vector<int>{0, 2, 3}));
}

TEST(BufferCount, DefaultsTheWaitingRanksToGroupAndTheOthersToOk) {
  const Scenario s = parseScenario(std::string(count::kThree) +
                                       "faults: [{site: buffer-count, rank: 2, count: 0}]\n"
                                       "expect: {outcome: raise}\n",
                                   "b.yaml");
  ASSERT_EQ(s.expect.messages.size(), 4u);
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kOk);
  for (int rank : {0, 1, 3}) EXPECT_EQ(s.expect.messages.at(rank).kind, MessageKind::kGroup);
}

TEST(BufferCount, RefusesAtTheNodeWhatCannotBeDerived) {
  const std::string raise = "expect: {outcome: raise}\n";
  // A count equal to the list's: a no-op, at the count's value.
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults: [{site: buffer-count, rank: 1, count: 3}]\n" + raise),
              HasSubstr("b.yaml:6:47: the scenario lists 3 buffer(s) already: this buffer-count "
                        "fault changes nothing (a no-op)"));
  EXPECT_THAT(
      errorOf(std::string(count::kThree) + "faults: [{site: buffer-count, rank: 1}]\n" + raise),
      HasSubstr("b.yaml:6:10: a buffer-count fault needs 'count'"));
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults: [{site: buffer-count, rank: 1, count: -1}]\n" + raise),
              HasSubstr("b.yaml:6:47: a buffer-count fault's 'count' is how many buffers"));
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults: [{site: buffer-count, rank: 1, count: 1, buffer: 0}]\n" + raise),
              HasSubstr("key 'buffer' is not valid for site 'buffer-count'"));
  // With another buffer fault (here on the same rank).
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults:\n  - {site: buffer-count, rank: 1, count: 1}\n"
                      "  - {site: buffer-size, rank: 1, buffer: 0, size: 8KiB}\n" +
                      raise),
              HasSubstr("b.yaml:8:5: this buffer-size fault cannot go with a buffer-count fault "
                        "(line 7)"));
  // Two counts on one rank; the same count on every rank.
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults:\n  - {site: buffer-count, rank: 1, count: 1}\n"
                      "  - {site: buffer-count, rank: 1, count: 2}\n" +
                      raise),
              HasSubstr("b.yaml:8:5: rank 1 has a buffer-count fault already (line 7)"));
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults: [{site: buffer-count, ranks: [0, 1, 2, 3], count: 1}]\n" + raise),
              HasSubstr("b.yaml:6:10: every rank registers 1 buffer(s): no rank registers another "
                        "number than another"));
  // Rank 2 would skip construction 2, but rank 1's constructions end every rank's at 1.
  EXPECT_THAT(errorOf(std::string(count::kThree) +
                      "faults:\n  - {site: buffer-count, rank: 1, count: 1}\n"
                      "  - {site: buffer-count, rank: 2, count: 2}\n" +
                      raise),
              HasSubstr("b.yaml:8:5: fault #1 (buffer-count, line 8) never fires"));
  // The outcome, and the messages only a count makes.
  EXPECT_THAT(
      errorOf(std::string(count::kThree) + "faults: [{site: buffer-count, rank: 1, count: 1}]\n"
                                           "expect: {outcome: success}\n"),
      HasSubstr("b.yaml:7:19: outcome 'success' is impossible"));
  EXPECT_THAT(
      errorOf(std::string(count::kThree) + "faults: [{site: buffer-count, rank: 1, count: 1}]\n"
                                           "expect:\n  outcome: raise\n  messages: {1: group}\n"),
      HasSubstr("rank 1 cannot say 'group': it registers 1 buffer(s) and never makes "
                "construction 1"));
  EXPECT_THAT(
      errorOf(std::string(count::kThree) + "faults: [{site: buffer-count, rank: 1, count: 1}]\n"
                                           "expect:\n  outcome: raise\n  messages: {0: ok}\n"),
      HasSubstr("rank 0 cannot say 'ok': it makes construction 1"));
  EXPECT_THAT(
      errorOf(std::string(count::kThree) + "faults: [{site: buffer-order, rank: 1}]\n"
                                           "expect:\n  outcome: raise\n  messages: {1: ok}\n"),
      HasSubstr("rank 1 cannot say 'ok': 'ok' is a rank that raises nothing"));
  EXPECT_THAT(errorOf("ranks: 1\nbuffers: [{size: 4KiB}, {size: 8KiB}]\n"
                      "faults: [{site: buffer-count, rank: 0, count: 1}]\n" +
                      raise),
              HasSubstr("site 'buffer-count' never fires with 1 rank"));
}

TEST(BufferCount, WriterAndCodecRoundTrip) {
  const Scenario s = parseScenario(std::string(count::kThree) +
                                       "faults: [{site: buffer-count, rank: 3, count: 5}]\n"
                                       "expect: {outcome: raise, messages: {3: group, "
                                       "others: ok}}\n",
                                   "b.yaml");
  std::string why;
  const Scenario written = parseScenario(scenario::writeScenario(s), "b.yaml");
  EXPECT_TRUE(scenario::sameScenario(s, written, &why)) << why;
  EXPECT_EQ(written.faults[0].registers, 5u);
  EXPECT_EQ(written.expect.others->kind, MessageKind::kOk);
  const Scenario decoded = model::scenarioFromJson(model::toJson(s));
  EXPECT_TRUE(scenario::sameScenario(s, decoded, &why)) << why;
  EXPECT_EQ(decoded.faults[0].registers, 5u);
}

}  // namespace
}  // namespace peerconf::harness
