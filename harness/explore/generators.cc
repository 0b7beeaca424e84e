// Scenario generators: raw draws (ScenarioSpec) shrink well; buildScenario makes each one valid.
#include "explore/generators.h"

#include <algorithm>
#include <array>
#include <map>
#include <ostream>
#include <set>

#include "expectation/derive.h"
#include "scenario/rules.h"
#include "scenario/writer.h"

namespace peerconf::harness::explore {

using expectation::deriveExpectation;
using expectation::deriveExpectationIfChanceFaultsFire;
using expectation::deriveFates;
using expectation::RankFate;
using expectation::undecidableReason;
using model::Fault;
using model::FaultSite;
using model::Key;
using model::Point;
using model::Scenario;
using model::takes;
using model::timelinePosition;
using scenario::writeScenario;

void showScenario(const Scenario& scenario, std::ostream& os) {
  try {
    os << "\n" << writeScenario(scenario);
  } catch (const std::exception& e) {
    os << "<scenario " << scenario.name << " that cannot be written: " << e.what() << ">";
  }
}

}  // namespace peerconf::harness::explore

namespace peerconf::harness::explore {

namespace {

using model::Key;
using model::takes;
using scenario::timelinePosition;
using std::chrono::milliseconds;
// hipError_t codes an error fault is drawn with; 0 = the site's default.
constexpr std::array<int, 6> kErrors{0, 205, 400, 999, 201, 100};
constexpr std::array<double, 3> kChances{1.0, 0.5, 0.25};
constexpr std::array<std::size_t, 4> kBuffers{64 << 10, 4 << 10, 16, 1 << 20};

using model::kTimelineExchange;

bool isDeath(const Fault& fault) { return model::stopsRank(fault.site); }

// Ranks from a 0..99 draw: mostly 2 to 4, sometimes 1 or up to 16; monotone, so shrinking the
// draw shrinks the rank count.
int ranksFor(int size, int maxRanks) {
  int ranks = 1;
  if (size < 5) {
    ranks = 1;
  } else if (size < 35) {
    ranks = 2;
  } else if (size < 50) {
    ranks = 3;
  } else if (size < 80) {
    ranks = 4;
  } else if (size < 90) {
    ranks = 5 + (size - 80) * 4 / 10;  // 5..8
  } else {
    ranks = 9 + (size - 90) * 8 / 10;  // 9..16
  }
  return std::clamp(ranks, 1, std::max(1, maxRanks));
}

bool lateDelay(const Scenario& scenario, const Fault& fault) {
  return fault.site == FaultSite::kDelay && fault.delay >= scenario.deadline;
}

std::optional<Fault> decode(const FaultSpec& spec, const Scenario& scenario,
                            const std::vector<FaultSite>& sites, bool chanceMappingFaults) {
  const int n = scenario.ranks;
  const milliseconds deadline = scenario.deadline;
  Fault fault;
  fault.site = sites[static_cast<std::size_t>(spec.site) % sites.size()];
  const model::Traits& traits = model::traitsOf(fault.site);
  if (n == 1 && traits.needsPeers) return std::nullopt;
  const int rank = spec.rank % n;
  fault.ranks = {rank};
  if (takes(fault.site, Key::kPeer) && spec.peer % n != 0) fault.peer = (rank + spec.peer % n) % n;
  if (takes(fault.site, Key::kError)) {
    const int code = kErrors[static_cast<std::size_t>(spec.error) % kErrors.size()];
    fault.error = code != 0 ? code : faults::defaultError(fault.site);
  }
  if (!traits.points.empty()) {
    // A generated scenario has no data plane: its points are the handshake's.
    std::vector<Point> points;
    for (Point point : traits.points) {
      if (point != Point::kDataplane) points.push_back(point);
    }
    fault.at = points[static_cast<std::size_t>(spec.point) % points.size()];
    if (n == 1 && fault.at != Point::kBeforeConstruct && fault.at != Point::kClose) {
      return std::nullopt;
    }
  }
  // A death, hang or exit names a peer only inside the open of that peer.
  if (model::stopsRank(fault.site) && fault.at != Point::kOpen) fault.peer.reset();
  if (takes(fault.site, Key::kCount)) fault.count = spec.count % 4;
  if (fault.site == FaultSite::kDelay) {
    if (spec.late) {
      // Two to three deadlines: the peers surely give up first, and the run stays short.
      fault.delay = 2 * deadline + milliseconds(spec.length % (deadline.count() + 1));
    } else {
      // At most a tenth of the deadline each; their sum is capped in buildScenario.
      const auto most = std::max<std::int64_t>(1, deadline.count() / 10);
      fault.delay = milliseconds(1 + spec.length % most);
    }
  }
  const bool mayChance = fault.site == FaultSite::kClose || fault.site == FaultSite::kFree ||
                         (fault.site == FaultSite::kDelay && !spec.late) ||
                         (model::agreedOn(fault.site) && chanceMappingFaults);
  if (mayChance) fault.probability = kChances[static_cast<std::size_t>(spec.chance) % 3];
  return fault;
}

template <typename Predicate>
void dropIf(std::vector<Fault>& faults, Predicate&& predicate) {
  faults.erase(std::remove_if(faults.begin(), faults.end(), predicate), faults.end());
}

// A mapping fault that may or may not fire decides whether close() is reached: no death or
// hang there, or whether the rank is reported would depend on the draw.
void dropCloseDeathsBesideChance(std::vector<Fault>& faults) {
  const bool chanceMapping = std::any_of(faults.begin(), faults.end(), [](const Fault& fault) {
    return model::agreedOn(fault.site) && fault.probability < 1.0;
  });
  if (chanceMapping) {
    dropIf(faults, [](const Fault& fault) { return isDeath(fault) && fault.at == Point::kClose; });
  }
}

// A rank dies or hangs once; nothing fires on it at or after that point.
void keepFirstDeath(std::vector<Fault>& faults) {
  std::map<int, Point> deathAt;
  std::vector<Fault> kept;
  for (const Fault& fault : faults) {
    if (!isDeath(fault)) continue;
    const int rank = fault.ranks.front();
    if (deathAt.count(rank) != 0) continue;
    deathAt[rank] = fault.at;
  }
  std::set<int> deathKept;
  for (const Fault& fault : faults) {
    const int rank = fault.ranks.front();
    auto it = deathAt.find(rank);
    if (isDeath(fault)) {
      if (it != deathAt.end() && it->second == fault.at && deathKept.insert(rank).second) {
        kept.push_back(fault);
      }
      continue;
    }
    if (it != deathAt.end() && timelinePosition(fault) >= timelinePosition(it->second)) continue;
    kept.push_back(fault);
  }
  faults = std::move(kept);
}

// Only one rank may be late past the deadline at the group calls: with two, whether they meet
// each other in time would depend on how late each is.
void keepOneLateRank(Scenario& scenario) {
  std::optional<int> lateRank;
  dropIf(scenario.faults, [&](const Fault& fault) {
    if (!lateDelay(scenario, fault) || fault.at == Point::kClose) return false;
    if (!lateRank) lateRank = fault.ranks.front();
    return *lateRank != fault.ranks.front();
  });
}

// Short delays of one rank before each group call stay under a third of the deadline together.
void capShortDelays(Scenario& scenario) {
  std::map<std::pair<int, int>, milliseconds> used;
  const milliseconds cap = scenario.deadline / 3;
  dropIf(scenario.faults, [&](const Fault& fault) {
    if (fault.site != FaultSite::kDelay || lateDelay(scenario, fault) ||
        fault.at == Point::kClose) {
      return false;
    }
    const int call = timelinePosition(fault.at) <= kTimelineExchange ? 0 : 1;
    milliseconds& sum = used[{fault.ranks.front(), call}];
    if (sum + fault.delay > cap) return true;
    sum += fault.delay;
    return false;
  });
}

// Drops one death another fault stops first (the validator's rule); true when it dropped one.
bool dropStoppedDeath(Scenario& scenario) {
  std::vector<Fault>& faults = scenario.faults;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (!isDeath(faults[i])) continue;
    const int rank = faults[i].ranks.front();
    const int point = timelinePosition(faults[i].at);
    for (std::size_t j = 0; j < faults.size(); ++j) {
      // A rank whose allocation fails (or may) exports no handle to stop in (rules.cc).
      const bool allocFirst = faults[i].at == Point::kGetHandle &&
                              faults[j].site == FaultSite::kAlloc && faults[j].appliesTo(rank);
      if (j != i && (allocFirst || scenario::stopFor(scenario, faults[j], rank) < point)) {
        faults.erase(faults.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      }
    }
  }
  return false;
}

// Drops one death the derivation says its rank never reaches; true when it dropped one.
bool dropUnreachedDeath(Scenario& scenario) {
  std::vector<Fault>& faults = scenario.faults;
  const std::vector<RankFate> fates = deriveFates(scenario);
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (!isDeath(faults[i])) continue;
    const RankFate& fate = fates[static_cast<std::size_t>(faults[i].ranks.front())];
    const bool reached = fate.stopped();
    if (!reached) {
      faults.erase(faults.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  }
  return false;
}

// Belt and braces: whatever timing still decides goes (delays only; the rules above make this
// a no-op, and the property tests check that the generated scenarios stay decidable).
void dropDelaysIfUndecidable(Scenario& scenario) {
  const Scenario certain = [&] {
    Scenario copy = scenario;
    for (Fault& fault : copy.faults)
      fault.probability = fault.site == FaultSite::kDelay ? fault.probability : 1.0;
    return copy;
  }();
  if (undecidableReason(certain)) {
    dropIf(scenario.faults, [](const Fault& fault) { return fault.site == FaultSite::kDelay; });
  }
}

// Drops faults until what is left is valid and its outcome decidable; see buildScenario.
void normalize(Scenario& scenario) {
  dropCloseDeathsBesideChance(scenario.faults);
  keepFirstDeath(scenario.faults);
  keepOneLateRank(scenario);
  capShortDelays(scenario);
  // Every death must be reached: drop those another fault stops first, and those the derivation
  // says the rank never reaches, until nothing changes.
  while (dropStoppedDeath(scenario) || dropUnreachedDeath(scenario)) {
  }
  dropDelaysIfUndecidable(scenario);
}

}  // namespace

std::vector<FaultSite> allSites() {
  return {FaultSite::kOpen,      FaultSite::kHandleCorrupt, FaultSite::kHandleStale,
          FaultSite::kAlloc,     FaultSite::kGetHandle,     FaultSite::kGroupFail,
          FaultSite::kClose,     FaultSite::kFree,          FaultSite::kAllocTable,
          FaultSite::kCopyTable, FaultSite::kDelay,         FaultSite::kDeath,
          FaultSite::kHang,      FaultSite::kNotReady};
}

Scenario buildScenario(const ScenarioSpec& spec, const GeneratorOptions& options) {
  const std::vector<FaultSite> sites = options.sites.empty() ? allSites() : options.sites;
  Scenario scenario;
  scenario.name = "generated";
  scenario.ranks = ranksFor(spec.size, options.maxRanks);
  const auto span =
      std::max<std::int64_t>(0, options.maxDeadline.count() - options.minDeadline.count());
  scenario.deadline = options.minDeadline + milliseconds(spec.deadline % (span + 1)) +
                      kDeadlinePerRank * std::max(0, scenario.ranks - 4);
  scenario.bufferBytes = kBuffers[static_cast<std::size_t>(spec.buffer) % kBuffers.size()];
  scenario.seed = spec.seed;
  scenario.runner.agreeFirst = spec.agreeFirst;
  for (const FaultSpec& faultSpec : spec.faults) {
    if (auto fault = decode(faultSpec, scenario, sites, options.chanceMappingFaults)) {
      scenario.faults.push_back(*fault);
    }
  }
  normalize(scenario);
  scenario.expect = options.chanceMappingFaults ? deriveExpectationIfChanceFaultsFire(scenario)
                                                : deriveExpectation(scenario);
  return scenario;
}

rc::Gen<ScenarioSpec> genScenarioSpec(const GeneratorOptions& options) {
  const int sites =
      static_cast<int>(options.sites.empty() ? allSites().size() : options.sites.size());
  rc::Gen<FaultSpec> fault = rc::gen::build<FaultSpec>(
      rc::gen::set(&FaultSpec::site, rc::gen::inRange(0, sites)),
      rc::gen::set(&FaultSpec::rank, rc::gen::inRange(0, 64)),
      rc::gen::set(&FaultSpec::peer, rc::gen::inRange(0, 64)),
      rc::gen::set(&FaultSpec::point, rc::gen::inRange(0, 10)),
      rc::gen::set(&FaultSpec::error, rc::gen::inRange(0, static_cast<int>(kErrors.size()))),
      rc::gen::set(&FaultSpec::count, rc::gen::weightedElement<int>({{6, 0}, {2, 1}, {1, 2}})),
      rc::gen::set(&FaultSpec::chance, rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}})),
      rc::gen::set(&FaultSpec::late, rc::gen::weightedElement<bool>({{5, false}, {1, true}})),
      rc::gen::set(&FaultSpec::length, rc::gen::inRange(0, 1000)));
  return rc::gen::build<ScenarioSpec>(
      rc::gen::set(&ScenarioSpec::size, rc::gen::inRange(0, 100)),
      rc::gen::set(&ScenarioSpec::deadline, rc::gen::inRange(0, 1000)),
      rc::gen::set(&ScenarioSpec::buffer, rc::gen::inRange(0, static_cast<int>(kBuffers.size()))),
      rc::gen::set(&ScenarioSpec::seed, rc::gen::arbitrary<std::uint64_t>()),
      // Mostly the seed's runner (agree first); sometimes without its agreement.
      rc::gen::set(&ScenarioSpec::agreeFirst,
                   rc::gen::weightedElement<bool>({{7, true}, {1, false}})),
      rc::gen::set(&ScenarioSpec::faults,
                   // The list's length is 0..maxFaults; each fault is drawn at full size (a
                   // size of maxFaults would leave only the first sites and ranks to draw).
                   rc::gen::resize(options.maxFaults, rc::gen::container<std::vector<FaultSpec>>(
                                                          rc::gen::resize(100, fault)))));
}

rc::Gen<Scenario> genScenario(const GeneratorOptions& options) {
  return rc::gen::map(genScenarioSpec(options),
                      [options](const ScenarioSpec& spec) { return buildScenario(spec, options); });
}

}  // namespace peerconf::harness::explore
