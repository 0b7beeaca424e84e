// Buffers: each rank's constructions and the mismatch the core must raise.
#include "model/buffers.h"

#include <algorithm>
#include <utility>

#include "errors.h"
#include "model/fault_sites.h"

namespace peerconf::harness::model {

namespace {

bool sameRegistration(const Construction& a, const Construction& b) {
  return a.bytes == b.bytes && a.label == b.label;
}

}  // namespace

std::vector<BufferSpec> listedBuffers(const Scenario& scenario) {
  if (!scenario.buffers.empty()) return scenario.buffers;
  return {BufferSpec{scenario.bufferBytes, "", scenario.mark}};
}

bool isBufferFault(const Fault& fault) {
  return fault.site == FaultSite::kBufferOrder || fault.site == FaultSite::kBufferSize ||
         fault.site == FaultSite::kBufferLabel || fault.site == FaultSite::kBufferCount;
}

bool plansBuffers(const Scenario& scenario) {
  return scenario.buffers.size() > 1 ||
         std::any_of(scenario.faults.begin(), scenario.faults.end(), isBufferFault);
}

namespace {

// constructionsOf() before the rank's buffer-count fault: order, size and label applied.
std::vector<Construction> listedConstructionsOf(const Scenario& scenario, int rank);

}  // namespace

std::optional<std::size_t> countFaultOf(const Scenario& scenario, int rank) {
  for (std::size_t index = 0; index < scenario.faults.size(); ++index) {
    const Fault& fault = scenario.faults[index];
    if (fault.site == FaultSite::kBufferCount && fault.appliesTo(rank)) return index;
  }
  return std::nullopt;
}

std::size_t registeredBy(const Scenario& scenario, int rank) {
  const auto count = countFaultOf(scenario, rank);
  return count ? scenario.faults[*count].registers : listedBuffers(scenario).size();
}

std::vector<Construction> constructionsOf(const Scenario& scenario, int rank) {
  std::vector<Construction> entries = listedConstructionsOf(scenario, rank);
  const auto count = countFaultOf(scenario, rank);
  if (!count || entries.empty()) return entries;
  const std::size_t listed = entries.size();
  const std::size_t wanted = scenario.faults[*count].registers;
  if (wanted < listed) entries.resize(wanted);
  // The extra ones are the last entry again (what a caller that loops once too often registers);
  // the fault fires at the first of them (a shorter list: where the rank skips, rank_runner.cc).
  for (std::size_t at = listed; at < wanted; ++at) {
    Construction extra = entries[listed - 1];
    extra.faults.clear();
    if (at == listed) extra.faults.push_back(*count);
    entries.push_back(std::move(extra));
  }
  return entries;
}

std::optional<CountMismatch> countMismatch(const Scenario& scenario) {
  if (scenario.ranks < 2) return std::nullopt;
  std::size_t least = registeredBy(scenario, 0);
  std::size_t most = least;
  for (int rank = 1; rank < scenario.ranks; ++rank) {
    least = std::min(least, registeredBy(scenario, rank));
    most = std::max(most, registeredBy(scenario, rank));
  }
  if (least == most) return std::nullopt;
  CountMismatch out;
  out.at = least;
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    (registeredBy(scenario, rank) > least ? out.waiting : out.returning).push_back(rank);
  }
  return out;
}

std::string countFaultText(const Scenario& scenario, int rank) {
  const std::vector<BufferSpec> list = listedBuffers(scenario);
  const std::size_t listed = list.size();
  const std::size_t mine = registeredBy(scenario, rank);
  const auto plural = [](std::size_t n) {
    return std::to_string(n) + (n == 1 ? " buffer" : " buffers");
  };
  std::string text = "rank " + std::to_string(rank) + " registers " + plural(mine) +
                     " where the list has " + std::to_string(listed);
  if (mine < listed) {
    const BufferSpec& next = list[mine];
    return text + ": it never makes its construction " + std::to_string(mine) + " (" +
           describeBuffer(next.bytes, next.label) +
           " on the others) and returns the buffers it constructed";
  }
  const BufferSpec& last = list.back();
  return text + ": its construction " + std::to_string(listed) + " is one more " +
         describeBuffer(last.bytes, last.label) + ", which no peer constructs";
}

namespace {

std::vector<Construction> listedConstructionsOf(const Scenario& scenario, int rank) {
  const std::vector<BufferSpec> listed = listedBuffers(scenario);
  std::vector<Construction> entries;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    entries.push_back({listed[i].bytes, listed[i].label, i, {}});
  }
  std::optional<std::size_t> order;
  for (std::size_t index = 0; index < scenario.faults.size(); ++index) {
    const Fault& fault = scenario.faults[index];
    if (!isBufferFault(fault) || !fault.appliesTo(rank)) continue;
    if (fault.site == FaultSite::kBufferCount) continue;  // constructionsOf applies it
    if (fault.site == FaultSite::kBufferOrder) {
      if (!order) order = index;
      continue;
    }
    if (fault.buffer < 0 || static_cast<std::size_t>(fault.buffer) >= entries.size()) continue;
    Construction& entry = entries[static_cast<std::size_t>(fault.buffer)];
    if (fault.site == FaultSite::kBufferSize) entry.bytes = fault.size;
    if (fault.site == FaultSite::kBufferLabel) entry.label = fault.label;
    entry.faults.push_back(index);
  }
  if (!order) return entries;
  const std::vector<Construction> inOrder = entries;
  std::reverse(entries.begin(), entries.end());
  for (std::size_t at = 0; at < entries.size(); ++at) {
    if (entries[at].listed != at && !sameRegistration(entries[at], inOrder[at])) {
      entries[at].faults.insert(entries[at].faults.begin(), *order);
      break;
    }
  }
  return entries;
}

}  // namespace

std::optional<BufferMismatch> bufferMismatch(const Scenario& scenario) {
  if (scenario.ranks < 2) return std::nullopt;
  std::vector<std::vector<Construction>> ranks;
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    ranks.push_back(constructionsOf(scenario, rank));
  }
  const std::vector<Construction>& reference = ranks.front();
  // Only the constructions every rank makes are compared (a buffer-count fault's are not paired:
  // countMismatch).
  std::size_t common = reference.size();
  for (const auto& mine : ranks) common = std::min(common, mine.size());
  for (std::size_t at = 0; at < common; ++at) {
    std::vector<RegisteredBuffer> mismatches;
    BufferMismatch out;
    out.at = at;
    for (int rank = 1; rank < scenario.ranks; ++rank) {
      const Construction& mine = ranks[static_cast<std::size_t>(rank)][at];
      if (sameRegistration(mine, reference[at])) continue;
      out.ranks.push_back(rank);
      mismatches.push_back({rank, mine.bytes, mine.label});
    }
    if (mismatches.empty()) continue;
    // The core's own error, so that its wording has one home (src/errors.cc).
    out.message = BufferMismatchError(0, {0, reference[at].bytes, reference[at].label},
                                      std::move(mismatches), {})
                      .what();
    return out;
  }
  return std::nullopt;
}

std::string describeBuffer(std::size_t bytes, const std::string& label) {
  return (label.empty() ? std::string("an unlabelled buffer") : "'" + label + "'") + " (" +
         std::to_string(bytes) + " bytes)";
}

std::vector<std::size_t> aimedBuffers(const Scenario& scenario) {
  std::vector<std::size_t> out;
  for (const Fault& fault : scenario.faults) {
    if (fault.onBuffer) out.push_back(static_cast<std::size_t>(*fault.onBuffer));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ConstructionEnd constructionEnd(const Scenario& scenario, std::size_t buffer) {
  ConstructionEnd end = ConstructionEnd::kSucceeds;
  for (const Fault& fault : scenario.faults) {
    if (!fault.onBuffer || static_cast<std::size_t>(*fault.onBuffer) != buffer) continue;
    if (fault.ranks.empty()) continue;
    const bool stops = stopsRank(fault.site);
    const bool late = fault.site == FaultSite::kDelay && scenario.ranks > 1 &&
                      fault.delay >= scenario.deadline &&
                      timelinePosition(fault.at) < kTimelineClose;
    // A stop at close or in the data plane comes after the construction succeeded.
    const bool fails = failsHandshake(fault.site) || late ||
                       (stops && fault.at != Point::kClose && fault.at != Point::kDataplane);
    if (!fails) continue;
    if (stops || fault.probability >= 1.0) return ConstructionEnd::kFails;
    end = ConstructionEnd::kMayFail;
  }
  return end;
}

std::optional<std::size_t> aimedBuffer(const Scenario& scenario) {
  const std::vector<std::size_t> aims = aimedBuffers(scenario);
  for (std::size_t buffer : aims) {
    if (constructionEnd(scenario, buffer) != ConstructionEnd::kSucceeds) return buffer;
  }
  if (aims.empty()) return std::nullopt;
  return aims.back();
}

std::size_t dataPlanesRun(const Scenario& scenario) {
  if (!dataPlanePerBuffer(scenario)) return 1;
  // The construction that ends the rounds: the aimed one that fails, a registration mismatch
  // (buffer-order, -size, -label) or a count that differs (buffer-count), whichever comes first.
  std::optional<std::size_t> ends;
  const auto earliest = [&ends](std::size_t at) { ends = ends ? std::min(*ends, at) : at; };
  if (const auto aimed = aimedBuffer(scenario);
      aimed && constructionEnd(scenario, *aimed) != ConstructionEnd::kSucceeds) {
    earliest(*aimed);
  }
  if (const auto mismatch = bufferMismatch(scenario)) earliest(mismatch->at);
  if (const auto count = countMismatch(scenario)) earliest(count->at);
  if (!ends || *ends >= scenario.buffers.size()) return scenario.buffers.size();
  return scenario.buffersAlive == BuffersAlive::kOneAtATime ? *ends : 0;
}

std::vector<DataPlaneTimeout> certainDataPlaneTimeouts(const Scenario& scenario) {
  std::vector<DataPlaneTimeout> out;
  if (!scenario.dataPlane) return out;
  if (!dataPlanePerBuffer(scenario)) {
    if (auto slow = certainDataPlaneTimeout(scenario)) {
      out.push_back({std::nullopt, scenario, std::move(*slow)});
    }
    return out;
  }
  const std::size_t planes = dataPlanesRun(scenario);
  for (std::size_t number = 0; number < planes; ++number) {
    Scenario view = dataPlaneScenarioOf(scenario, number);
    if (auto slow = certainDataPlaneTimeout(view)) {
      out.push_back({number, std::move(view), std::move(*slow)});
    }
  }
  return out;
}

std::optional<std::size_t> failingConstructionBefore(const Scenario& scenario, std::size_t buffer) {
  for (std::size_t earlier : aimedBuffers(scenario)) {
    if (earlier >= buffer) break;
    if (constructionEnd(scenario, earlier) == ConstructionEnd::kFails) return earlier;
  }
  return std::nullopt;
}

std::string aimText(const Fault& fault) {
  return fault.onBuffer ? ", buffer " + std::to_string(*fault.onBuffer) : std::string();
}

Scenario aimedConstruction(Scenario scenario) {
  const auto aimed = aimedBuffer(scenario);
  if (!aimed) return scenario;
  const std::vector<BufferSpec> listed = listedBuffers(scenario);
  // The min: the result, one buffer of `buffer:` whose faults keep their aim, derives as itself.
  const BufferSpec& one = listed[std::min(*aimed, listed.size() - 1)];
  scenario.bufferBytes = one.bytes;
  // With a data plane per buffer, the one it derives runs that buffer's (dataPlaneOf).
  if (scenario.dataPlane && one.dataPlane) scenario.dataPlane = one.dataPlane;
  scenario.buffers.clear();
  scenario.buffersAlive = BuffersAlive::kTogether;
  for (Fault& fault : scenario.faults) {
    if (fault.onBuffer && static_cast<std::size_t>(*fault.onBuffer) != *aimed) fault.ranks.clear();
  }
  return scenario;
}

}  // namespace peerconf::harness::model
