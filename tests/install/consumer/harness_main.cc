// The harness through the installed package, as a program outside this repository uses it:
// scenario files run against a core of its own, their verdicts read.
//   harness_consumer PASSING.yaml CONTROL.yaml
// PASSING runs against the production core and must pass. CONTROL names `core:
// closes-in-destructor`, which this program registers itself (a PeerBuffer whose close() releases
// nothing): the run must pass as a control, i.e. C3 fails with the finding the file expects.
// Prints every verdict, then "harness ok".
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "judge/judgement.h"
#include "launch/core_registry.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "model/core_under_test.h"
#include "model/verdict.h"
#include "peer_buffer.h"
#include "scenario/load.h"

namespace {

using peerconf::harness::model::CoreBuffer;

// This program's core: the production PeerBuffer, except that close() releases nothing (its
// destructor does, later): the defect checker C3 exists to name.
class ClosesInDestructor : public CoreBuffer {
 public:
  ClosesInDestructor(std::size_t nbytes, peerconf::IpcBackend& backend, peerconf::Group* group)
      : buffer_(nbytes, backend, group) {}
  int size() const override { return buffer_.size(); }
  peerconf::DeviceBytes bytes() const override { return buffer_.bytes(); }
  const std::vector<std::int64_t>& addresses() const override { return buffer_.addresses(); }
  peerconf::DevicePtr addressesDevice() const override { return buffer_.addressesDevice(); }
  void close() override {}

 private:
  peerconf::PeerBuffer buffer_;
};

// Runs `path` on threads over the mocked runtime, checks and judges it, prints the verdicts and
// the story; true when it passed and the properties `controls` (e.g. {"C3"}) failed as expected.
bool run(const std::string& path, const peerconf::harness::launch::CoreRegistry& cores,
         const std::vector<std::string>& controls) {
  namespace harness = peerconf::harness;
  const harness::model::Scenario scenario = harness::scenario::loadScenario(path);
  harness::launch::LaunchOptions options;
  options.cores = &cores;
  const harness::model::RunRecord record =
      harness::launch::runThreads(scenario, scenario.seed, options);
  const auto judgement = harness::judge::judgeRun(record);
  std::cout << scenario.name << ": " << (judgement.passed ? "PASS" : "FAIL") << "\n";
  for (const auto& verdict : judgement.verdicts) {
    std::cout << "  " << harness::model::toString(verdict.property) << ": "
              << harness::model::kVerdictStatusNames.name(verdict.status) << ": " << verdict.summary
              << "\n";
  }
  if (!judgement.passed) std::cout << harness::judge::story(record, judgement);
  return judgement.passed && judgement.controls == controls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: harness_consumer PASSING.yaml CONTROL.yaml\n";
    return 2;
  }
  peerconf::harness::launch::CoreRegistry cores;
  cores.add("closes-in-destructor", "close() releases nothing",
            peerconf::harness::model::coreFactoryOf<ClosesInDestructor>());
  const bool passing = run(argv[1], cores, {});
  const bool control = run(argv[2], cores, {"C3"});
  std::cout << (passing && control ? "harness ok" : "harness FAILED") << "\n";
  return passing && control ? 0 : 1;
}
