// explain against run on generated files with several certain faults a rank (issue 40, item 2):
// the core stops opening at its first failed open, and the fault plan fires one fault a call, so
// a second fault of a rank often never fires. File by file: where explain says the file agrees
// the run passes (coverage required, as `peerconf run` requires it), and every certain fault the
// run never fired on a rank explain foresaw as never firing there; and where explain finds the file
// wrong the run fails, unless a chance fault drawn first at the same call leaves it to the seed.
// Runs on threads over simulated time (RC_PARAMS="max_success=N seed=S" to widen).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "expectation/derive.h"
#include "expectation/explain.h"
#include "judge/judgement.h"
#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "model/fault_sites.h"
#include "model/scenario.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness::expectation {

using model::Fault;
using model::FaultSite;
using model::Point;
using model::Scenario;
namespace {

// The sites of the calls a rank makes once or a peer at a time (the mapping faults first), and a
// stop inside an open.
const std::vector<FaultSite>& sites() {
  static const std::vector<FaultSite> list{FaultSite::kOpen,
                                           FaultSite::kHandleCorrupt,
                                           FaultSite::kHandleStale,
                                           FaultSite::kClose,
                                           FaultSite::kForeignException,
                                           FaultSite::kAllocTable,
                                           FaultSite::kCopyTable,
                                           FaultSite::kFree,
                                           FaultSite::kAlloc,
                                           FaultSite::kGetHandle,
                                           FaultSite::kGroupFail,
                                           FaultSite::kNotReady,
                                           FaultSite::kDeath};
  return list;
}

// One fault, aimed mostly at ranks 0 and 1 so that a rank often has several.
rc::Gen<Fault> genFault(int ranks) {
  return rc::gen::exec([ranks] {
    Fault fault;
    fault.site = *rc::gen::elementOf(sites());
    fault.ranks = {*rc::gen::weightedElement<int>({{4, 0}, {3, 1 % ranks}, {1, ranks - 1}})};
    const int rank = fault.ranks.front();
    if (model::takes(fault.site, model::Key::kPeer) && *rc::gen::inRange(0, 3) != 0) {
      fault.peer = (rank + *rc::gen::inRange(1, ranks)) % ranks;
    }
    if (model::takes(fault.site, model::Key::kCount)) {
      fault.count = *rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}});
    }
    if (model::isErrorSite(fault.site)) fault.error = faults::defaultError(fault.site);
    if (fault.site == FaultSite::kForeignException) fault.call = faults::SeamCall::kOpen;
    // At the exchange only: a rank whose agreement fails locally raises and frees its buffer
    // while its peers may still be opening it, so whether their later faults fire is the
    // interleaving's (a timing the oracle does not derive).
    if (fault.site == FaultSite::kGroupFail) fault.at = Point::kExchange;
    if (fault.site == FaultSite::kDeath) {
      // Inside the open of a peer: reached only where no earlier open fails (rule 11).
      fault.at = Point::kOpen;
      fault.peer = (rank + *rc::gen::inRange(1, ranks)) % ranks;
    }
    // Now and then a close left to chance: it never counts, but it may take a close first.
    if (fault.site == FaultSite::kClose && *rc::gen::inRange(0, 4) == 0) fault.probability = 0.5;
    return fault;
  });
}

// A rank with a handle-corrupt fault and an open fault naming a peer. Left out: the oracle has
// the open fault fire at that peer's open before the runtime sees the handle, as the fault plan
// says and the seam does (--runtime gpu); the mocked runtime's hook reads the peer from the
// handle instead, and a corrupted handle names none, so there the open fault never fires.
bool openBehindCorruptHandle(const Scenario& scenario) {
  for (const Fault& corrupt : scenario.faults) {
    if (corrupt.site != FaultSite::kHandleCorrupt) continue;
    for (const Fault& open : scenario.faults) {
      if (open.site == FaultSite::kOpen && open.peer && open.ranks == corrupt.ranks) return true;
    }
  }
  return false;
}

// A valid file of 2-4 ranks and 2-6 faults with the derived expect:, or nullopt when the faults
// do not validate (a death behind a failed open, say).
rc::Gen<std::optional<std::string>> genFile() {
  return rc::gen::exec([]() -> std::optional<std::string> {
    Scenario scenario;
    scenario.name = "generated";
    scenario.ranks = *rc::gen::inRange(2, 5);
    scenario.deadline = std::chrono::milliseconds(200);
    scenario.seed = *rc::gen::inRange<std::uint64_t>(1, 1000);
    scenario.faults = *rc::gen::container<std::vector<Fault>>(
        static_cast<std::size_t>(*rc::gen::inRange(2, 7)), genFault(scenario.ranks));
    if (openBehindCorruptHandle(scenario)) return std::nullopt;
    try {
      scenario.expect = deriveExpectation(scenario);
      const std::string text = scenario::writeScenario(scenario);
      scenario::parseScenario(text, "generated.yaml");
      return text;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  });
}

// Whether explain's differences name fault `fault` on `rank` as a certain fault that never fires.
bool foreseen(const FileExplanation& explained, std::size_t fault, int rank) {
  const std::string item = "fault #" + std::to_string(fault) + " (";
  const std::string on = ", probability 1) on rank " + std::to_string(rank) + ": DIFFERS";
  for (const std::string& difference : explained.differences) {
    const auto at = difference.find(item);
    if (at != std::string::npos && difference.find(on, at) != std::string::npos) return true;
  }
  return false;
}

RC_GTEST_PROP(ExplainAgainstRun, AgreesImpliesPassesAndEveryCoverageMissIsForeseen, ()) {
  const std::optional<std::string> text = *genFile();
  RC_PRE(text.has_value());
  const FileExplanation explained = explainText(*text, "generated.yaml");
  RC_ASSERT(explained.result != ExplainResult::kInvalid);
  const Scenario scenario = scenario::parseScenario(*text, "generated.yaml");

  launch::LaunchOptions options;
  options.clock = launch::ClockMode::kSim;
  model::RunRecord record = launch::runThreads(scenario, scenario.seed, options);
  record.requireCoverage = true;
  const judge::Judgement judgement = judge::judgeRun(record);

  if (explained.result == ExplainResult::kAgrees && !judgement.passed) {
    RC_FAIL("explain says the file agrees, the run fails:\n" + judge::story(record, judgement) +
            "\n" + *text + "\n" + explained.report);
  }
  for (const judge::CoverageMiss& miss : judge::coverageMisses(record)) {
    if (!foreseen(explained, miss.fault, miss.rank)) {
      RC_FAIL("the run never fired fault #" + std::to_string(miss.fault) + " on rank " +
              std::to_string(miss.rank) + ", which explain did not foresee:\n" + *text + "\n" +
              explained.report);
    }
  }
  // And the other way: a file explain finds wrong fails its run, but where the seed decides (a
  // certain fault behind one left to chance at the same call).
  if (explained.result == ExplainResult::kDiffers && judgement.passed &&
      explained.report.find("the seed decides") == std::string::npos) {
    RC_FAIL("explain says the file differs, the run passes:\n" + *text + "\n" + explained.report);
  }
  RC_TAG(explained.result == ExplainResult::kAgrees ? "agrees" : "differs");
  RC_TAG(judge::coverageMisses(record).empty() ? "every fault fired" : "a fault never fired");
  RC_TAG(judgement.passed ? "run passes" : "run fails");
}

}  // namespace
}  // namespace peerconf::harness::expectation
