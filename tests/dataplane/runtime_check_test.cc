// What a runtime cannot run of a scenario's `dataplane:` (runtime_check.h): nothing for the mocked
// runtime or a scenario without a data plane; under `--runtime gpu` the kernels' limits, each an
// error at the key at fault.
#include "dataplane/runtime_check.h"

#include <gtest/gtest.h>

#include <string>

#include "scenario/load.h"

namespace peerconf::harness::dataplane {

using model::Scenario;
using model::ScenarioError;
using model::Spec;
using scenario::parseScenario;
namespace {

std::string gpuError(const std::string& text) {
  const Scenario scenario = parseScenario(text, "gpu.yaml");
  checkDataPlaneRuntime(scenario, Runtime::kMock);  // the mocked runtime runs anything valid
  try {
    checkDataPlaneRuntime(scenario, Runtime::kGpu);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

// A weak-memory control written for simulated time (`clock: sim`) is no error under --runtime gpu:
// a GPU run is an MPI run on real time, which skips it, saying so (the nightly runs upstream/,
// with its device-scope-fence control, on GPUs). The same layouts without `clock: sim` are refused.
TEST(DeviceValidation, AFileForSimulatedTimeIsNoErrorUnderTheGpuRuntime) {
  for (const char* layout : {"relaxed-tag", "device-scope-fence", "reader-without-acquire"}) {
    const std::string body = std::string("ranks: 2\ndataplane:\n  layout: ") + layout +
                             "\n  steps: 10\nexpect:\n  outcome: success\n";
    EXPECT_EQ(gpuError("clock: sim\n" + body), "") << layout;
    EXPECT_NE(gpuError(body).find("is a control for simulated weak memory"), std::string::npos)
        << layout;
  }
}

TEST(DeviceValidation, TheWeakMemoryControlIsRefusedAtItsLayout) {
  const std::string error = gpuError(
      "ranks: 2\ndataplane:\n  layout: relaxed-tag\n  steps: 10\nexpect:\n  outcome: success\n"
      "  violations:\n    - {property: C7, finding: x}\n");
  EXPECT_EQ(
      error.rfind("gpu.yaml:3:11: under --runtime gpu: relaxed-tag is a control for simulated "
                  "weak memory",
                  0),
      0u)
      << error;
}

TEST(DeviceValidation, WhatTheKernelsCannotRunIsAnErrorAtItsKey) {
  EXPECT_EQ(gpuError("ranks: 2\ndataplane:\n  steps: 10\nexpect:\n  outcome: success\n"), "");
  EXPECT_EQ(gpuError("ranks: 9\nbuffer: 1MiB\ndataplane:\n  steps: 10\nexpect:\n  outcome: "
                     "success\n"),
            "gpu.yaml:4:3: under --runtime gpu: the GPU data plane runs at most 8 ranks (one "
            "kernel's peer table), the scenario has 9");
  std::string lates = "ranks: 2\ndataplane:\n  steps: 100\n  late:\n";
  for (int i = 0; i < 17; ++i) {
    lates += "    - {rank: 0, role: reader, steps: [" + std::to_string(i) + "], delay: 1ms}\n";
  }
  lates += "expect:\n  outcome: success\n";
  const std::string late = gpuError(lates);
  EXPECT_EQ(late.rfind("gpu.yaml:5:5: under --runtime gpu: the GPU data plane takes at most 16 "
                       "late entries",
                       0),
            0u)
      << late;
  EXPECT_EQ(gpuError("ranks: 2\ndataplane:\n  steps: 1000000\n  history: 1000000\nexpect:\n  "
                     "outcome: success\n")
                .rfind("gpu.yaml:4:12: under --runtime gpu: the GPU data plane records at most", 0),
            0u);
}

TEST(DeviceValidation, AScenarioWithoutADataPlaneRunsAnywhere) {
  const Scenario scenario =
      parseScenario("ranks: 9\nbuffer: 1MiB\nexpect: {outcome: success}\n", "plain.yaml");
  EXPECT_NO_THROW(checkDataPlaneRuntime(scenario, Runtime::kGpu));
  EXPECT_NO_THROW(checkDataPlaneRuntime(scenario, Runtime::kMock));
}

TEST(DeviceValidation, AProblemWithoutAKeyOfItsOwnIsAtTheSection) {
  // A code-built spec has no marks: the error falls back to the scenario's own mark.
  Scenario scenario =
      parseScenario("ranks: 9\nbuffer: 1MiB\nexpect: {outcome: success}\n", "built.yaml");
  scenario.dataPlane = Spec{};
  try {
    checkDataPlaneRuntime(scenario, Runtime::kGpu);
    FAIL() << "nine ranks passed under --runtime gpu";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.mark().line, scenario.mark.line);
    EXPECT_EQ(e.mark().column, scenario.mark.column);
    EXPECT_NE(std::string(e.what()).find("under --runtime gpu: the GPU data plane runs at most 8 "
                                         "ranks"),
              std::string::npos)
        << e.what();
  }
}

// The GPU kernels run every workload (gpu_kernels/layout_kernel.h, KernelWorkload): two-in-flight,
// graph-replay and their controls are neither refused nor skipped under --runtime gpu, and are
// held to the kernels' limits like the exchange (here: the ranks one kernel addresses).
TEST(DeviceValidation, EveryWorkloadRunsOnTheKernelsNoneIsSkipped) {
  for (const char* workload :
       {"exchange", "allreduce", "two-in-flight", "two-in-flight-shared-slots", "graph-replay",
        "graph-replay-captured-epoch"}) {
    const std::string body = std::string("ranks: 2\ndataplane:\n  workload: ") + workload +
                             "\n  steps: 10\nexpect:\n  outcome: success\n";
    EXPECT_EQ(gpuError(body), "") << workload;
    const Scenario scenario = parseScenario(body, "gpu.yaml");
    EXPECT_EQ(gpuSkipReason(*scenario.dataPlane), "") << workload;
    EXPECT_EQ(gpuSkipReason(scenario), "") << workload;
    const std::string tooMany = gpuError(std::string("ranks: 9\ndataplane:\n  workload: ") +
                                         workload + "\n  steps: 10\nexpect:\n  outcome: success\n");
    EXPECT_NE(tooMany.find("at most 8 ranks"), std::string::npos) << workload << ": " << tooMany;
  }
}

// A data plane per buffer: each buffer's is held to what the kernels run, at its own keys. A
// buffer's own layout the kernels lack is refused at that buffer's `layout:`; a buffer's own
// workload (graph-replay here) runs on the kernels as the scenario's would: nothing skips the file.
TEST(DeviceValidation, EachBuffersDataPlaneIsHeldToTheKernels) {
  const std::string head =
      "ranks: 2\nbuffers:\n  - {label: a, size: 8KiB}\n"
      "  - {label: b, size: 8KiB, dataplane: {";
  const std::string tail = "}}\ndataplane:\n  steps: 10\nexpect:\n  outcome: success\n";
  EXPECT_EQ(gpuError(head + "workload: exchange" + tail), "");
  EXPECT_EQ(gpuSkipReason(parseScenario(head + "workload: exchange" + tail, "gpu.yaml")), "");
  const std::string refused = gpuError(head + "layout: relaxed-tag" + tail);
  EXPECT_NE(refused.find("gpu.yaml:4:"), std::string::npos) << refused;
  EXPECT_NE(refused.find("is a control for simulated weak memory"), std::string::npos) << refused;
  EXPECT_EQ(gpuError(head + "workload: graph-replay" + tail), "");
  EXPECT_EQ(gpuSkipReason(parseScenario(head + "workload: graph-replay" + tail, "gpu.yaml")), "");
}

}  // namespace
}  // namespace peerconf::harness::dataplane
