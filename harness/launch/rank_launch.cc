// One rank's launch: the decorator stack and the body every executor runs (rank_launch.h).
#include "launch/rank_launch.h"

#include <optional>

#include "backend_factory.h"
#include "launch/core_registry.h"
#include "launch/held_backend.h"
#include "launch/mock_ledger.h"
#include "launch/rank_runner.h"
#include "launch/rank_settle.h"
#include "mock_hip/control.h"
#include "model/record_json.h"

namespace peerconf::harness::launch {

using model::EventLog;
using model::Point;
using model::RankResult;
using model::rankResultFromJson;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::toString;

DecoratedBackend::DecoratedBackend(IpcBackend& inner, faults::RankFaults& faults,
                                   faults::RankControl& control, Runtime runtime, EventLog& log)
    : faulty_(inner, faults, control,
              runtime == Runtime::kMock ? faults::FaultyBackend::Mode::kRuntime
                                        : faults::FaultyBackend::Mode::kSeam),
      recorded_(faulty_, log) {}

DecoratedGroup::DecoratedGroup(Group& inner, faults::RankFaults& faults,
                               faults::RankControl& control, EventLog& log)
    : faulty_(inner, faults, control), recorded_(faulty_, log) {}

// Over 80 lines: one rank's launch, settle and release in order.
// NOLINTNEXTLINE(readability-function-size): to be split
RankOutcome launchRank(const RankLaunch& launch, EventLog& log) {
  const Scenario& scenario = *launch.scenario;
  const LaunchOptions& options = *launch.options;
  const Runtime runtime = options.runtime;
  const int rank = launch.rank;
  const int device = launch.device;
  faults::RankControl& control = *launch.control;
  RankOutcome outcome;
  RankResult& result = outcome.result;
  result.rank = rank;
  std::unique_ptr<IpcBackend> real;
  std::optional<HeldBackend> held;  // what the rank's process holds (held_backend.h)
  std::optional<RankSettle> settle;
  std::vector<faults::FaultyBackend::Leftover> leftovers;
  try {
    const RankGroups groups = launch.groups();
    auto faults = launch.plan->forRank(rank, log);
    // device_memory: the device's capacity, before the baseline reads its free memory.
    if (runtime == Runtime::kMock) {
      if (auto it = scenario.deviceMemory.find(rank); it != scenario.deviceMemory.end()) {
        mock_hip::setDeviceMemory(device, it->second);
      }
    }
    real = makeIpcBackend(runtime, device, rank);
    held.emplace(*real);
    settle.emplace(runtime, device, *real, scenario.name);
    if (launch.afterBaseline) launch.afterBaseline();
    // A planted runtime (core_under_test.h) under the harness's decorators, over what the
    // rank's process holds.
    const model::RuntimeDecorator planted =
        scenario.core.empty() ? options.plantedRuntime : runtimeFor(scenario, options.cores);
    std::unique_ptr<IpcBackend> plantedRuntime = planted ? planted(*held) : nullptr;
    IpcBackend& under = plantedRuntime ? *plantedRuntime : static_cast<IpcBackend&>(*held);
    // Every decorator lives until the rank's run is over: the fault hooks are gone before the
    // ledger is taken and the harness releases.
    DecoratedBackend backend(under, *faults, control, runtime, log);
    DecoratedGroup group(*groups.core, *faults, control, log);
    RankSeams seams{backend.top(), group.top(), *real, groups.harness};
    seams.runnerGroup = groups.core;
    seams.ready = [&faults] { return !faults->notReady(); };
    seams.constructs = scenario.core.empty() ? options.runner : runnerFor(scenario, options.cores);
    seams.runtime = runtime;
    seams.construction = [&faults](std::size_t number) { faults->setConstruction(number); };
    if (runtime == Runtime::kMock) {
      seams.ledgerLength = [device] { return mockLedgerLength(device); };
    }
    result = runRank(
        scenario, rank, seams, log, [&](Point point) { faults->atPoint(point, control); },
        coreFor(scenario, options.cores, options.core));
    if (launch.afterRun) launch.afterRun();
    outcome.fired = faults->fired();
    // The buffer-* faults fire in the rank runner (what it constructs), not in a decorator.
    for (const model::Event& event : log.events()) {
      if (event.kind != model::EventKind::kFault) continue;
      if (auto site = faults::siteFromName(event.what)) outcome.fired.insert(*site);
    }
    leftovers = backend.leftovers();
    result.mappingFindings = backend.mappingFindings();
  } catch (const std::exception& e) {
    // Setting up the rank failed: a problem of the harness, not of the core.
    result.status = RankStatus::kMissing;
    result.message = std::string("harness could not run this rank: ") + e.what();
  }
  if (runtime == Runtime::kMock) {
    result.ledger = copyMockLedger(device);
    result.ledgerAvailable = true;
  }
  // After the ledger: the harness's release of injected-failure leftovers, then the device. A rank
  // a fault stopped goes on to the next scenario in this process: everything it still holds is
  // released, as its process's end would (injected-failure leftovers among them, once).
  if (settle && held && model::stoppedByFault(result.status)) {
    settle->release(
        *held, held->held(), result,
        "held by the " + toString(result.status) + " rank: released as its process's end would");
  } else if (settle && held) {
    settle->release(*held, leftovers, result);  // through HeldBackend: it forgets what it released
  }
  const bool judgeMemory = !launch.beforeCheck || launch.beforeCheck(result);
  if (settle && launch.gpuJudgedByLauncher) {
    settle->checkHeld(result);
  } else if (settle) {
    settle->check(result, judgeMemory);
  }
  // Once judged, what the core left (a planted core's leaked buffer or unclosed mapping) is
  // released too, as the process's end would: a GPU rank's process goes on to the next scenario,
  // where a leaked block kept its 2 MiB chunk alive and a leaked mapping made a later open of that
  // peer's chunk fail ("resource already mapped"), failing a file for what an earlier one left.
  // After the checks, so that C3 and the device-memory comparison still see the leak (where the
  // launcher compares a shared GPU's memory once every rank ended, it is the mocked runtime's,
  // reset with the run).
  if (settle && held && !launch.gpuJudgedByLauncher && !model::stoppedByFault(result.status)) {
    if (const std::vector<HeldBackend::Held> left = held->held(); !left.empty()) {
      settle->release(*held, left, result, std::string(model::kReleasedAfterTheChecks));
    }
  }
  result.events = log.take();
  return outcome;
}

RunRecord newRecord(const Scenario& scenario, std::uint64_t seed, std::string launcher,
                    Runtime runtime) {
  RunRecord record;
  record.scenario = scenario;
  record.launcher = std::move(launcher);
  record.runtime = toString(runtime);
  record.seed = seed;
  return record;
}

RankResult missingRank(int rank) {
  RankResult missing;
  missing.rank = rank;
  missing.status = RankStatus::kMissing;
  return missing;
}

nlohmann::json rankPayload(const RankOutcome& outcome) {
  nlohmann::json j = toJson(outcome.result);
  j["fired"] = nlohmann::json::array();
  for (const auto site : outcome.fired) j["fired"].push_back(toString(site));
  return j;
}

RankResult readRankPayload(const std::string& text, std::set<std::string>& fired) {
  const auto j = nlohmann::json::parse(text);
  RankResult result = rankResultFromJson(j);
  for (const auto& site : j.at("fired")) fired.insert(site.get<std::string>());
  return result;
}

}  // namespace peerconf::harness::launch
