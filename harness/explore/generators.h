// Scenario generators for property-based exploration (rapidcheck): random rank counts, fault sets
// over every site, delays and seeds, each turned into a VALID scenario with a derived expectation.
#pragma once

#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::explore {

struct GeneratorOptions {
  int maxRanks = 16;  // 1..64
  int maxFaults = 5;  // faults drawn per scenario (some are dropped to keep it valid)
  // Per group call, before the extra time larger groups get (kDeadlinePerRank above 4 ranks).
  std::chrono::milliseconds minDeadline{20};
  std::chrono::milliseconds maxDeadline{50};
  // The sites drawn from, in shrink order (rapidcheck shrinks towards the first). Default: every
  // site, open first.
  std::vector<model::FaultSite> sites;
  // Agreed faults (open, handle-corrupt, handle-stale, alloc-table, copy-table) may fire with
  // probability 1/2 or 1/4, so the outcome depends on the seed's draw; `expect` then assumes they
  // fire (deriveExpectationIfChanceFaultsFire) and only uniformity, C3, C4, C5 and C8 can be
  // judged.
  bool chanceMappingFaults = false;
};

// Extra deadline per rank above 4: 16 threads on a 2-core box need longer to meet than 4.
inline constexpr std::chrono::milliseconds kDeadlinePerRank{3};

// The raw draw of one fault: small integers interpreted against the scenario (rank modulo the rank
// count, ...), so that shrinking the rank count keeps every fault meaningful.
struct FaultSpec {
  int site = 0;       // index into GeneratorOptions::sites
  int rank = 0;       // the rank: rank % ranks
  int peer = 0;       // 0: every peer; k: the k-th rank after `rank` (modulo), never itself
  int point = 0;      // group-fail: exchange|agree; delay, death, hang: any point
  int error = 0;      // index into the error codes tried (0: the site's default)
  int count = 0;      // 0: unlimited; 1..3 (close, free, open... any site that takes it)
  int chance = 0;     // index into {1, 0.5, 0.25}: only close, free and short delays draw below 1
  bool late = false;  // a delay past the deadline (two to three deadlines) instead of a short one
  int length = 0;     // picks the delay's length within its range
};

struct ScenarioSpec {
  int size = 0;  // 0..99, mapped monotonically to 1..maxRanks ranks (shrinks towards 1 rank)
  int deadline = 0;
  int buffer = 0;
  std::uint64_t seed = 0;
  bool agreeFirst = true;  // runner: {agree_first}
  std::vector<FaultSpec> faults;
};

// Turns a raw draw into a valid scenario: decodes each fault, drops those the validator would
// reject (a peer site with one rank, a second death on a rank, a fault after the rank's death, a
// death the rank never reaches) or whose effect timing would decide (two ranks late past the
// deadline, short delays adding up), and fills `expect` with deriveExpectation. Name "generated".
model::Scenario buildScenario(const ScenarioSpec& spec, const GeneratorOptions& options);

rc::Gen<ScenarioSpec> genScenarioSpec(const GeneratorOptions& options);
// buildScenario over genScenarioSpec.
rc::Gen<model::Scenario> genScenario(const GeneratorOptions& options);

// Every site, in the generators' shrink order.
std::vector<model::FaultSite> allSites();

}  // namespace peerconf::harness::explore

namespace peerconf::harness::explore {
// How rapidcheck prints a scenario in a counterexample: its YAML.
void showScenario(const model::Scenario& scenario, std::ostream& os);
}  // namespace peerconf::harness::explore

// rapidcheck finds a type's printer as showValue by ADL, which would put it in model's namespace
// (and model below the writer that prints it): its ShowDefault is specialized instead, whatever
// its traits say.
namespace rc::detail {
template <bool HasShowValue, bool IsStreamInsertible>
struct ShowDefault<peerconf::harness::model::Scenario, HasShowValue, IsStreamInsertible> {
  static void show(const peerconf::harness::model::Scenario& scenario, std::ostream& os) {
    peerconf::harness::explore::showScenario(scenario, os);
  }
};
}  // namespace rc::detail
