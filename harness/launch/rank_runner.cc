// RankRunner: one rank's part of a run, shared by the thread and MPI launchers.
#include "launch/rank_runner.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "dataplane/run_data_plane.h"
#include "errors.h"
#include "launch/launcher.h"
#include "model/buffers.h"
#include "model/fault_sites.h"
#include "model/text.h"
#include "peer_buffer.h"
#include "tp_agree.h"

namespace peerconf::harness::launch {

using model::CoreBuffer;
using model::CoreFactory;
using model::EventKind;
using model::EventLog;
using model::FaultSite;
using model::kNotReadyAnotherRankMessage;
using model::kNotReadyThisRankMessage;
using model::plannedBound;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::Scenario;
using model::toString;

namespace {

constexpr std::size_t kSignatureBytes = 16;

// The rank-signed pattern `writer` leaves in `reader`'s buffer: two words, the second the
// complement of the first, so a torn or misplaced write cannot pass.
void signature(int writer, int reader, std::uint64_t seed, std::uint64_t out[2]) {
  out[0] = (0x50434fULL << 40) ^ (static_cast<std::uint64_t>(writer) << 20) ^
           static_cast<std::uint64_t>(reader) ^ (seed << 48);
  out[1] = ~out[0];
}

void describeError(const std::exception& e, RankResult& result) {
  result.status = RankStatus::kRaised;
  result.message = e.what();
  if (const auto* handshake = dynamic_cast<const HandshakeError*>(&e)) {
    result.errorType = "HandshakeError";
    result.thisRank = handshake->thisRank();
    result.cause = describe(handshake->cause());
    if (handshake->cause()) {
      try {
        std::rethrow_exception(handshake->cause());
      } catch (const Error& cause) {
        result.causeCode = cause.code();
        result.causeOp = std::string(opName(cause.op()));
        result.causePeer = cause.peer();
      } catch (...) {
        // Not a peerconf::Error: no op, peer or code to record (C2 says so).
      }
    }
  } else if (const auto* notReady = dynamic_cast<const NotReadyError*>(&e)) {
    result.errorType = "NotReady";
    result.thisRank = notReady->thisRank();
  } else if (const auto* group = dynamic_cast<const GroupError*>(&e)) {
    result.errorType =
        dynamic_cast<const GroupTimeout*>(&e) != nullptr ? "GroupTimeout" : "GroupError";
    // The rank's own earlier failure, kept by the core beside the group's error.
    result.cause = describe(group->cause());
  } else if (const auto* backend = dynamic_cast<const BackendError*>(&e)) {
    result.errorType = "BackendError";
    result.causeCode = backend->code();
    result.causeOp = std::string(opName(backend->op()));
    result.causePeer = backend->peer();
  } else if (dynamic_cast<const BufferMismatchError*>(&e) != nullptr) {
    // The ranks registered different buffers: every rank raises it, the message names them.
    result.errorType = "BufferMismatchError";
  } else if (dynamic_cast<const CloseError*>(&e) != nullptr) {
    result.errorType = "CloseError";
  } else if (dynamic_cast<const Error*>(&e) != nullptr) {
    result.errorType = "Error";
  } else {
    result.errorType = "std::exception";
  }
}

// C4: the table the kernels use, addressesDevice(), read back through the real backend (not the
// core's decorated one: the read is the harness's, and no fault may fire on it). size() entries.
void readDeviceTable(const CoreBuffer& buffer, const RankSeams& seams, RankResult& result) {
  const DevicePtr table = buffer.addressesDevice();
  if (table == 0) {
    result.tableError = "addressesDevice() is null";
    return;
  }
  std::vector<std::int64_t> read(static_cast<std::size_t>(std::max(buffer.size(), 0)));
  try {
    seams.plain.copyToHost(read.data(), table, read.size() * sizeof(std::int64_t));
    result.deviceTable = std::move(read);
  } catch (const std::exception& e) {
    result.tableError = "reading " + std::to_string(read.size()) +
                        " entries of addressesDevice() back failed: " + e.what();
  }
}

// C4: every rank writes its signature into every buffer through `addresses`, then each rank
// reads its own buffer back. All ranks take part (they all passed the harness barrier).
void checkAddresses(const Scenario& scenario, int rank, const CoreBuffer& buffer,
                    const RankSeams& seams, RankResult& result) {
  const auto& addresses = buffer.addresses();
  const int n = buffer.size();
  result.tableChecked = true;
  result.hostTable = addresses;
  readDeviceTable(buffer, seams, result);
  // A core may return a buffer of another size than the group (a planted core that returns a
  // one-rank buffer on a timeout): nothing past its own entries is read.
  result.ownSlotIsLocal = addresses.size() == static_cast<std::size_t>(n) && rank < n &&
                          static_cast<DevicePtr>(addresses[rank]) == buffer.bytes().data;
  if (!result.ownSlotIsLocal) {
    result.addressFindings.push_back("addresses[" + std::to_string(rank) +
                                     "] is not this rank's local buffer");
  }
  // Each writer owns a slice of every buffer and signs up to 16 bytes of it; a buffer smaller
  // than one byte a rank cannot hold a pattern, and only the own slot is checked.
  const std::size_t slice = buffer.bytes().size / static_cast<std::size_t>(n);
  const std::size_t width = std::min(slice, kSignatureBytes);
  const bool fits =
      width > 0 && n == scenario.ranks && addresses.size() == static_cast<std::size_t>(n);
  if (fits) {
    for (int peer = 0; peer < n; ++peer) {
      std::uint64_t sig[2];
      signature(rank, peer, scenario.seed, sig);
      seams.plain.copyToDevice(
          static_cast<DevicePtr>(addresses[peer]) + static_cast<DevicePtr>(rank) * slice, sig,
          width);
    }
  }
  // Every write has landed once every rank has passed this barrier.
  if (seams.harnessGroup != nullptr) seams.harnessGroup->allReduceMin(1);
  if (!fits) return;
  for (int writer = 0; writer < n; ++writer) {
    std::uint64_t want[2];
    std::uint64_t got[2] = {0, 0};
    signature(writer, rank, scenario.seed, want);
    seams.plain.copyToHost(got, buffer.bytes().data + static_cast<DevicePtr>(writer) * slice,
                           width);
    if (std::memcmp(want, got, width) != 0) {
      result.addressFindings.push_back(
          "rank " + std::to_string(writer) + " wrote through addresses[" + std::to_string(rank) +
          "] but its pattern is not in rank " + std::to_string(rank) + "'s buffer");
    }
  }
}

// The "ready" phase: whether this rank's setup succeeded, then (with a group and agree_first)
// the runner's agreement on it, recorded as a "tpAgree" call ("in=<v>", "out=<v>"; checker C5).
// Throws NotReadyError when the rank must not construct, or the group's error.
void agreeReady(const Scenario& scenario, const RankSeams& seams, EventLog& log) {
  log.record(EventKind::kPhaseBegin, "ready");
  const bool ready = !seams.ready || seams.ready();
  bool everyone = ready;
  if (scenario.runner.agreeFirst && scenario.ranks > 1) {
    if (seams.runnerGroup == nullptr) {
      log.record(EventKind::kPhaseEnd, "ready");
      throw std::logic_error("the launcher gave the rank runner no group for its agreement");
    }
    log.record(EventKind::kCall, "tpAgree", -1, std::string("in=") + (ready ? "1" : "0"));
    try {
      everyone = tpAgree(ready, seams.runnerGroup);
    } catch (const std::exception& e) {
      log.record(EventKind::kThrow, "tpAgree", -1, e.what());
      log.record(EventKind::kPhaseEnd, "ready");
      throw;
    }
    log.record(EventKind::kReturn, "tpAgree", -1, std::string("out=") + (everyone ? "1" : "0"));
  }
  log.record(EventKind::kPhaseEnd, "ready");
  if (seams.constructs && seams.constructs(ready, everyone)) return;  // a planted runner
  if (!ready) throw NotReadyError(true);
  if (!everyone) throw NotReadyError(false);
}

std::size_t seamCalls(const EventLog& log) {
  std::size_t calls = 0;
  for (const auto& e : log.events()) calls += e.kind == EventKind::kCall ? 1 : 0;
  return calls;
}

// The point before the constructor and the "ready" phase: whether the rank may construct (else
// why not, in `result`). A rank that is not ready (or told so by the agreement) never constructs.
bool readyToConstruct(const Scenario& scenario, const RankSeams& seams, EventLog& log,
                      const std::function<void(Point)>& atPoint, RankResult& result) {
  try {
    if (atPoint) atPoint(Point::kBeforeConstruct);
    agreeReady(scenario, seams, log);
  } catch (const std::exception& e) {
    describeError(e, result);
    return false;
  }
  return true;
}

// " [fault #2, line 14]", as the fault plan ends the detail of every fault it records.
std::string origin(const model::Fault& fault, std::size_t index) {
  std::string out = " [fault #" + std::to_string(index);
  if (fault.mark.line > 0) out += ", line " + std::to_string(fault.mark.line);
  return out + "]";
}

// One "construct" phase: the buffer `number` of the rank's constructions (model/buffers.h), with
// its size and label, or null with why in `result`. The buffer-* faults that make this
// construction differ from the scenario's list fire here, first.
std::unique_ptr<CoreBuffer> construct(const Scenario& scenario, int rank, std::size_t number,
                                      const model::Construction& what, const RankSeams& seams,
                                      EventLog& log, const CoreFactory& core, RankResult& result) {
  std::unique_ptr<CoreBuffer> buffer;
  Group* group = scenario.ranks > 1 ? &seams.coreGroup : nullptr;
  try {
    log.record(EventKind::kPhaseBegin, "construct");
    const std::vector<model::BufferSpec> listed = model::listedBuffers(scenario);
    for (std::size_t index : what.faults) {
      const model::Fault& fault = scenario.faults[index];
      if (fault.site == FaultSite::kBufferCount) {  // one more than the list: model/buffers.h
        log.fired(toString(fault.site), -1,
                  model::countFaultText(scenario, rank) + origin(fault, index),
                  static_cast<int>(index), static_cast<int>(number));
        continue;
      }
      const model::BufferSpec& instead = listed[std::min(number, listed.size() - 1)];
      log.fired(toString(fault.site), -1,
                "rank " + std::to_string(rank) + " constructs " +
                    model::describeBuffer(what.bytes, what.label) + " as its buffer " +
                    std::to_string(number) + " where the list has " +
                    model::describeBuffer(instead.bytes, instead.label) + origin(fault, index),
                static_cast<int>(index), static_cast<int>(number));
    }
    buffer = core(what.bytes, seams.core, group, what.label);
    log.record(EventKind::kPhaseEnd, "construct");
    result.status = RankStatus::kOk;
  } catch (const std::exception& e) {
    log.record(EventKind::kPhaseEnd, "construct");
    describeError(e, result);
  }
  return buffer;
}

// Whether every rank constructed, through the harness barrier when the ranks check `together`;
// else whether this one did. `constructed`: whether this rank made the construction at all.
bool everyRankConstructed(const RankSeams& seams, bool together, bool constructed,
                          RankResult& result) {
  bool everyRankOk = constructed && result.status == RankStatus::kOk;
  if (together) {
    try {
      everyRankOk = seams.harnessGroup->allReduceMin(everyRankOk ? 1 : 0) != 0;
    } catch (const std::exception& e) {
      result.addressFindings.push_back(std::string("harness barrier failed: ") + e.what());
      everyRankOk = false;
    }
  }
  return everyRankOk;
}

// The "check" phase (C4), then the data plane (C6/C7) over the same buffer when the ranks run
// `together`. `number`: the buffer's place among the rank's constructions; with several buffers
// each runs its own data plane (model::dataPlaneOf), recorded in RankResult::laterDataPlanes
// past buffer 0.
void checkBuffer(const Scenario& scenario, int rank, std::size_t number, CoreBuffer& buffer,
                 const RankSeams& seams, bool together, EventLog& log,
                 const std::function<void(Point)>& atPoint, RankResult& result) {
  log.record(EventKind::kPhaseBegin, "check");
  try {
    checkAddresses(scenario, rank, buffer, seams, result);
  } catch (const std::exception& e) {
    result.addressFindings.push_back(std::string("address check failed: ") + e.what());
  }
  log.record(EventKind::kPhaseEnd, "check");
  // The data plane (C6/C7) over the same buffer; every rank reaches this point together.
  if (scenario.dataPlane && together) {
    const dataplane::OnDevice onDevice{&seams.plain, plannedBound(scenario)};
    // An `at: dataplane` death, hang or exit stops the rank where `dataplane.stop` would: its
    // data plane ends at the start of that step and it writes and reads nothing more. It still
    // joins the harness's closing barrier (the harness's, not the workload's: nobody unmaps while
    // a peer may write), then stops as its site says.
    // Buffer 0's result stays in dataPlane; a later buffer's is moved to laterDataPlanes.
    std::optional<model::Result> first;
    if (number > 0) first = std::move(result.dataPlane);
    dataplane::runDataPlane(model::dataPlaneOf(scenario, rank, number), scenario.deadline, rank,
                            buffer, seams.harnessGroup, log, result,
                            seams.runtime == Runtime::kGpu ? &onDevice : nullptr);
    // This buffer's data plane, before a later buffer's result moves away.
    const bool stopped =
        result.dataPlane && result.dataPlane->outcome == model::DataplaneOutcome::kStopped;
    if (number > 0) {
      if (result.dataPlane) result.laterDataPlanes.push_back(std::move(*result.dataPlane));
      result.dataPlane = std::move(first);
    }
    if (atPoint && stopped) atPoint(Point::kDataplane);
  }
}

// C3: what `buffer` still hands out after close() returned (RankResult::leftAfterClose): each of
// its views of memory that close() released, which a kernel launched with it would touch.
void leftAfterClose(const CoreBuffer& buffer, RankResult& result) {
  const DeviceBytes bytes = buffer.bytes();
  if (bytes.data != 0 || bytes.size != 0) {
    result.leftAfterClose.push_back("bytes() still views " + std::to_string(bytes.size) +
                                    " bytes at " + model::hexPtr(bytes.data));
  }
  const auto& addresses = buffer.addresses();
  if (!addresses.empty()) {
    std::string held;
    for (std::size_t i = 0; i < addresses.size() && i < 4; ++i) {
      held += (i == 0 ? "" : ", ") + model::hexPtr(static_cast<std::uint64_t>(addresses[i]));
    }
    if (addresses.size() > 4) held += ", ...";
    result.leftAfterClose.push_back("addresses() still holds " + std::to_string(addresses.size()) +
                                    " address(es) (" + held + ")");
  }
  if (const DevicePtr table = buffer.addressesDevice(); table != 0) {
    result.leftAfterClose.push_back("addressesDevice() is still " + model::hexPtr(table));
  }
}

// The "close" phase: close(), its errors in `result`, then close() again.
void closeTwice(CoreBuffer& buffer, EventLog& log, const std::function<void(Point)>& atPoint,
                RankResult& result) {
  log.record(EventKind::kPhaseBegin, "close");
  if (atPoint) atPoint(Point::kClose);
  try {
    buffer.close();
  } catch (const CloseError& e) {
    result.closeErrors.push_back(e.what());
    result.closeErrorType = "CloseError";
    result.closeFailures = e.failures();
  } catch (const std::exception& e) {
    result.closeErrors.push_back(e.what());
    result.closeErrorType = dynamic_cast<const Error*>(&e) ? "Error" : "std::exception";
  }
  // Judged whether or not close() raised: a CloseError still released everything it could.
  leftAfterClose(buffer, result);
  // On the live object: a second close() makes no seam call and raises nothing.
  const std::size_t before = seamCalls(log);
  try {
    buffer.close();
    result.closeTwiceOk = seamCalls(log) == before;
  } catch (const std::exception& e) {
    result.closeTwiceOk = false;
    result.closeErrors.push_back(std::string("second close(): ") + e.what());
  }
  log.record(EventKind::kPhaseEnd, "close");
}

// The "destroy" phase of every buffer the rank holds, with the ledger's length before and after
// it.
void destroy(std::vector<std::unique_ptr<CoreBuffer>>& buffers, const RankSeams& seams,
             EventLog& log, RankResult& result) {
  // C3 judges close() on what it left: the ledger now, before the destructor runs.
  if (seams.ledgerLength) {
    result.ledgerAtClose = static_cast<std::int64_t>(seams.ledgerLength());
  }
  log.record(EventKind::kPhaseBegin, "destroy");
  // One by one, in construction order, each under its own number: a fault aimed at one buffer
  // fires in its destructor only.
  for (std::size_t number = 0; number < buffers.size(); ++number) {
    if (seams.construction) seams.construction(number);
    buffers[number].reset();
  }
  buffers.clear();
  log.record(EventKind::kPhaseEnd, "destroy");
  if (seams.ledgerLength) {
    result.ledgerAfterDestroy = static_cast<std::int64_t>(seams.ledgerLength());
  }
}

// Every buffer of the rank's constructions (model/buffers.h; one without `buffers:`): each
// "construct" phase followed by the harness barrier; with the buffers alive together, every one
// constructed before any is checked and closed; one at a time, each checked and closed before the
// next is constructed. The first construction that fails on any rank ends the rank's
// constructions on every rank (the barrier tells them all), and what it still holds is closed.
// The buffers are destroyed together at the end (one "destroy" phase). `held` is the caller's, so
// that a rank stopped on the way (RankStopped) keeps its buffers until its outcome is recorded.
void constructAll(const Scenario& scenario, int rank, const RankSeams& seams, EventLog& log,
                  const std::function<void(Point)>& atPoint, const CoreFactory& core,
                  RankResult& result, std::vector<std::unique_ptr<CoreBuffer>>& held) {
  const std::vector<model::Construction> constructions = model::constructionsOf(scenario, rank);
  // A buffer-count fault: the ranks register different numbers of buffers. Every rank passes the
  // harness barrier of every construction some rank makes (the most any rank registers), a rank
  // past its own count without constructing (no seam or group call): the barrier then tells it
  // whether a rank that did construct failed.
  std::size_t rounds = constructions.size();
  for (int other = 0; other < scenario.ranks; ++other) {
    rounds = std::max(rounds, model::constructionsOf(scenario, other).size());
  }
  const bool oneAtATime = scenario.buffersAlive == model::BuffersAlive::kOneAtATime;
  // The harness's own checks run only when no rank is planned to stop: a stopped rank would
  // leave the others waiting at the barrier.
  const bool together =
      scenario.ranks > 1 && seams.harnessGroup != nullptr && !plansStoppedRanks(scenario);
  const bool checks = together || scenario.ranks == 1;
  bool everyRankOk = false;
  bool ready = readyToConstruct(scenario, seams, log, atPoint, result);
  // Registering no buffer (buffer-count 0) is returning every buffer it constructed.
  if (ready && constructions.empty()) result.status = RankStatus::kOk;
  for (std::size_t number = 0; number < rounds; ++number) {
    if (number >= constructions.size()) {
      // Past its own count: it makes no construction; its buffer-count fault fires where it skips
      // the first one, the others' constructions go on without it.
      if (const auto count = model::countFaultOf(scenario, rank);
          count && number == constructions.size() && ready) {
        log.fired(toString(FaultSite::kBufferCount), -1,
                  model::countFaultText(scenario, rank) + origin(scenario.faults[*count], *count),
                  static_cast<int>(*count), static_cast<int>(number));
      }
      // A construction this rank does not make is not one every rank constructed: nobody checks
      // it (a core that built a buffer alone there would meet no peer at the check's barriers).
      everyRankOk = everyRankConstructed(seams, together, false, result);
      if (!everyRankOk) break;
      continue;
    }
    std::unique_ptr<CoreBuffer> buffer;
    if (seams.construction) seams.construction(number);
    if (ready)
      buffer = construct(scenario, rank, number, constructions[number], seams, log, core, result);
    everyRankOk = everyRankConstructed(seams, together, true, result);
    if (!buffer) break;
    held.push_back(std::move(buffer));
    if (oneAtATime) {
      if (everyRankOk && checks) {
        checkBuffer(scenario, rank, held.size() - 1, *held.back(), seams, together, log, atPoint,
                    result);
      }
      closeTwice(*held.back(), log, atPoint, result);
    }
    if (!everyRankOk) break;
  }
  if (!oneAtATime) {
    if (everyRankOk && checks && held.size() == constructions.size()) {
      for (std::size_t number = 0; number < held.size(); ++number) {
        // Under its own number: an `at: dataplane` fault aimed at one buffer stops its rank in
        // that buffer's data plane only.
        if (seams.construction) seams.construction(number);
        checkBuffer(scenario, rank, number, *held[number], seams, together, log, atPoint, result);
      }
    }
    for (std::size_t number = 0; number < held.size(); ++number) {
      if (seams.construction) seams.construction(number);
      closeTwice(*held[number], log, atPoint, result);
    }
  }
  if (!held.empty()) destroy(held, seams, log, result);
}

}  // namespace

NotReadyError::NotReadyError(bool thisRank)
    : std::runtime_error(
          std::string(thisRank ? kNotReadyThisRankMessage : kNotReadyAnotherRankMessage)),
      thisRank_(thisRank) {}

bool plansStoppedRanks(const Scenario& scenario) {
  for (const auto& f : scenario.faults) {
    // A stop in the data plane comes after the harness's checks and inside its data plane, whose
    // waits are bounded: every rank still reaches the barriers.
    if (model::stopsRank(f.site) && !model::stopsInDataPlane(f)) return true;
  }
  return false;
}

bool plansStops(const Scenario& scenario) {
  return std::any_of(scenario.faults.begin(), scenario.faults.end(),
                     [](const model::Fault& f) { return model::stopsRank(f.site); });
}

RankResult runRank(const Scenario& scenario, int rank, const RankSeams& seams, EventLog& log,
                   const std::function<void(Point)>& atPoint, const CoreFactory& core) {
  RankResult result;
  result.rank = rank;
  std::vector<std::unique_ptr<CoreBuffer>> held;
  try {
    constructAll(scenario, rank, seams, log, atPoint, core, result, held);
  } catch (const RankStopped& stopped) {
    result.status = stopped.status;
    result.message = "stopped at " + toString(stopped.at);
    if (stopped.status == RankStatus::kExited) {
      result.message =
          "exited with code " + std::to_string(stopped.code) + " at " + toString(stopped.at);
    }
    // A rank stopped inside the constructor holds nothing the core released; the launcher resets
    // its device afterwards. Stopped ranks are outside C3.
  }
  log.record(EventKind::kOutcome, toString(result.status), -1,
             result.message.empty() ? std::string() : result.message);
  result.endNs = log.events().back().tNs;
  return result;
}

}  // namespace peerconf::harness::launch
