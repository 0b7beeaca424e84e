// The `dataplane:` section of a scenario (parseSpec): every key, the defaults, errors at the line
// and column of the node at fault, and the duration format.
#include "scenario/dataplane_yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "model/scenario.h"

namespace peerconf::harness::dataplane {

using model::Prefill;
using model::Role;
using model::ScenarioError;
using model::Spec;
using model::Workload;
using scenario::parseSpec;
using scenario::parseSpecDuration;
namespace {

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

TEST(DataPlaneYaml, ParsesEveryKey) {
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

TEST(DataPlaneYaml, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(parseError("steps: 10\nlayuot: reference\n"),
            "test.yaml:2:1: unknown key 'layuot' in 'dataplane'; expected one of: layout, "
            "workload, steps, depth, payload, start_epoch, timeout, window, history, prefill, "
            "late, stop, values");
  EXPECT_NE(parseError("layout: triple-buffer\n").find("test.yaml:1:9: unknown layout"),
            std::string::npos);
  // Depth is the layout's to take or refuse (its invalidReason), at the key its reason names:
  // the reference family indexes its slots by the epoch, so a power of two.
  EXPECT_NE(parseError("depth: 3\n")
                .find("test.yaml:1:8: layout reference cannot run this data "
                      "plane: depth must be a power of two, got 3"),
            std::string::npos);
  EXPECT_NE(parseError("layout: low-latency\nworkload: allreduce\ndepth: 4\n")
                .find("test.yaml:3:8: layout low-latency cannot run this data plane: low-latency "
                      "double-buffers: depth must be 2"),
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

TEST(DataPlaneYaml, Values) {
  EXPECT_EQ(parse("values: bf16\n").values.type, layout::ValueType::kBf16);
  const Spec spec = parse(R"(
steps: 20
payload: 2
values:
  type: fp16
  chosen:
    - {step: 3, value: -0.0}
    - {step: 5, rank: 1, element: 7, value: nan}
    - {step: 7, bits: 0x3c00}
    - {step: 9, value: 1.5}
)");
  ASSERT_EQ(spec.values.chosenCount, 4);
  EXPECT_EQ(spec.values.chosen[0].bits, 0x8000u);
  EXPECT_EQ(spec.values.chosen[0].rank, -1);
  EXPECT_EQ(spec.values.chosen[0].element, -1);
  EXPECT_EQ(spec.values.chosen[1].bits, 0x7e00u);
  EXPECT_EQ(spec.values.chosen[1].rank, 1);
  EXPECT_EQ(spec.values.chosen[1].element, 7);
  EXPECT_EQ(spec.values.chosen[2].bits, 0x3c00u);
  EXPECT_EQ(spec.values.chosen[3].bits, 0x3e00u);
  EXPECT_EQ(parse("values: {type: fp32, chosen: [{step: 0, value: -0.0}]}\n").values.chosen[0].bits,
            0x80000000u);
  EXPECT_EQ(parse("values: {type: fp64, chosen: [{step: 0, value: -inf}]}\n").values.chosen[0].bits,
            0xfff0000000000000u);
  // Errors at the node at fault.
  EXPECT_NE(parseError("values: fp8\n")
                .find("test.yaml:1:9: 'dataplane.values.type' must be one of: "
                      "hash, fp64, fp32, fp16, bf16, bytes"),
            std::string::npos);
  EXPECT_NE(parseError("values: {type: fp16, chosen: [{step: 1, value: 1.1}]}\n")
                .find("is not exactly a fp16 value"),
            std::string::npos);
  EXPECT_NE(parseError("values: {type: hash, chosen: [{step: 1, bits: 1}]}\n")
                .find("chosen values need a typed payload"),
            std::string::npos);
  EXPECT_NE(parseError("values: {type: fp16, chosen: [{step: 1, bits: 0x10000}]}\n")
                .find("16 bits for fp16"),
            std::string::npos);
  EXPECT_NE(parseError("steps: 5\nvalues: {type: fp32, chosen: [{step: 5, value: 0}]}\n")
                .find("test.yaml:2:31: a chosen value's step 5 never comes"),
            std::string::npos);
  EXPECT_NE(
      parseError("payload: 1\nvalues: {type: fp32, chosen: [{step: 0, element: 2, value: 0}]}\n")
          .find("element 2 is past the payload's 2 fp32 elements"),
      std::string::npos);
  EXPECT_NE(parseError("values: {type: bytes, chosen: [{step: 0, value: 1}]}\n")
                .find("raw bytes take 'bits'"),
            std::string::npos);
}

TEST(DataPlaneYaml, Durations) {
  EXPECT_EQ(parseSpecDuration("500us"), std::chrono::microseconds(500));
  EXPECT_EQ(parseSpecDuration("2ms"), std::chrono::microseconds(2000));
  EXPECT_EQ(parseSpecDuration("1.5s"), std::chrono::microseconds(1500000));
  EXPECT_EQ(parseSpecDuration("30"), std::chrono::microseconds(30000));
  EXPECT_FALSE(parseSpecDuration("0ms"));
  EXPECT_FALSE(parseSpecDuration("-1ms"));
  EXPECT_FALSE(parseSpecDuration("1.0005us"));
  EXPECT_FALSE(parseSpecDuration("fast"));
}

TEST(DataPlaneYaml, WorkloadsAndTheLayoutsThatCannotRunThem) {
  EXPECT_EQ(parse("workload: two-in-flight\n").workload, Workload::kTwoInFlight);
  EXPECT_EQ(parse("workload: two-in-flight-shared-slots\n").workload,
            Workload::kTwoInFlightSharedSlots);
  EXPECT_EQ(parse("workload: graph-replay\n").workload, Workload::kGraphReplay);
  EXPECT_EQ(parse("workload: graph-replay-captured-epoch\n").workload,
            Workload::kGraphReplayCapturedEpoch);
  EXPECT_EQ(parse("layout: low-latency\nworkload: graph-replay\n").workload,
            Workload::kGraphReplay);
  EXPECT_NE(parseError("workload: three-in-flight\n")
                .find("test.yaml:1:11: 'dataplane.workload' must be exchange, allreduce, "
                      "two-in-flight, graph-replay"),
            std::string::npos);
  // B's push would wait for the acknowledgement of A's unread pair in the one slot: at `depth`.
  EXPECT_NE(parseError("workload: two-in-flight\ndepth: 1\n")
                .find("test.yaml:2:8: layout reference cannot run this data plane: two "
                      "collectives in flight need depth >= 2, got 1"),
            std::string::npos);
  // The low-latency layout's flow control is the workload's reads: at `workload`, saying why.
  EXPECT_NE(parseError("layout: low-latency\nworkload: two-in-flight\n")
                .find("test.yaml:2:11: layout low-latency cannot run this data plane: it does not "
                      "run the two-in-flight workload: its only flow control is the workload's "
                      "own reads"),
            std::string::npos);
  // A chosen value's step counts collectives under two-in-flight (two a step).
  EXPECT_NO_THROW(
      parse("workload: two-in-flight\nsteps: 10\n"
            "values: {type: fp32, chosen: [{step: 19, value: -0.0}]}\n"));
  EXPECT_NE(parseError("workload: two-in-flight\nsteps: 10\n"
                       "values: {type: fp32, chosen: [{step: 20, value: -0.0}]}\n")
                .find("never comes: the run has 20 collectives"),
            std::string::npos);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
