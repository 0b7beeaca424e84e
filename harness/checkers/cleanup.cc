// C3: replays each rank's ledger (or its seam events) and reports leaks and double releases.
#include "checkers/cleanup.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::FaultSite;
using model::Finding;
using model::hexPtr;
using model::LedgerRecord;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;
using model::Verdict;

namespace {

enum class Kind { kBuffer, kMapping };

// One acquire or release, from the ledger or from a seam call and its end.
struct Step {
  Kind kind = Kind::kBuffer;
  bool acquire = true;
  bool ok = true;
  std::optional<std::uint64_t> ptr;
  int peer = -1;
  std::size_t size = 0;
  std::uint64_t generation = 0;
  bool hasGeneration = false;
  std::string method;  // events only
  std::string error;   // the runtime code or thrown message of a failed step
};

std::string label(const Step& step) {
  std::string text;
  if (step.kind == Kind::kMapping) {
    text = "mapping of peer " + std::to_string(step.peer);
    if (step.hasGeneration) text += " (gen " + std::to_string(step.generation) + ")";
    if (step.ptr && !step.hasGeneration) text += " at " + hexPtr(*step.ptr);
  } else {
    text = "buffer";
    if (step.ptr) text += " " + hexPtr(*step.ptr);
    std::string extra;
    if (step.size != 0) extra = std::to_string(step.size) + " bytes";
    if (step.hasGeneration)
      extra += (extra.empty() ? "" : ", ") + std::string("gen ") + std::to_string(step.generation);
    if (!step.method.empty())
      extra += (extra.empty() ? "" : ", ") + std::string("from ") + step.method;
    if (!extra.empty()) text += " (" + extra + ")";
  }
  return text;
}

const char* acquired(Kind kind) { return kind == Kind::kMapping ? "opened" : "allocated"; }
const char* released(Kind kind) { return kind == Kind::kMapping ? "closed" : "freed"; }
const char* releaseOp(Kind kind) { return kind == Kind::kMapping ? "close" : "free"; }

// Replays one rank's steps. Keys are pointers when `byPtr`, else peers (mappings) or a single
// pool (buffers, matched by count).
class Replay {
 public:
  Replay(const Scenario& scenario, int rank, std::vector<Finding>& findings)
      : scenario_(scenario), rank_(rank), findings_(findings) {}

  // `thrown`: releases that threw before reaching the runtime (a fault planted at the seam),
  // which the ledger never saw; each settles what it still holds under the same rules.
  void run(const std::vector<Step>& steps, bool byPtr, const std::vector<Step>& thrown = {}) {
    for (const Step& step : steps) {
      if (step.acquire) {
        if (step.ok) acquire(step, byPtr);
      } else {
        release(step, byPtr);
      }
    }
    for (const Step& step : thrown) {
      auto it = held_.find(keyOf(step, byPtr));
      if (it != held_.end() && !it->second.empty()) release(step, byPtr);
    }
  }

  // The releases the destructor made (after the close phase): whatever close() left held and
  // the destructor released is a finding, and so is a release of what was not held.
  void runDestructor(const std::vector<Step>& steps, bool byPtr) {
    inDestructor_ = true;
    for (const Step& step : steps) {
      if (step.acquire) {
        if (step.ok) add(label(step) + " " + acquired(step.kind) + " by the destructor");
        continue;
      }
      release(step, byPtr);
    }
    inDestructor_ = false;
  }

  // What is still held: leaks.
  void reportHeld() {
    for (const auto& [key, held] : held_) {
      for (const Step& step : held) {
        add(label(step) + " " + acquired(step.kind) + ", never " + released(step.kind));
      }
    }
  }

  int problems() const { return problems_; }

 private:
  using Key = std::pair<Kind, std::uint64_t>;

  Key keyOf(const Step& step, bool byPtr) const {
    if (byPtr && step.ptr) return {step.kind, *step.ptr};
    if (step.kind == Kind::kMapping) return {step.kind, static_cast<std::uint64_t>(step.peer)};
    return {step.kind, 0};
  }

  void acquire(const Step& step, bool byPtr) { held_[keyOf(step, byPtr)].push_back(step); }

  void release(const Step& step, bool byPtr) {
    const Key key = keyOf(step, byPtr);
    const FaultSite site = step.kind == Kind::kMapping ? FaultSite::kClose : FaultSite::kFree;
    const bool planted =
        faultPlanted(scenario_, site, rank_,
                     step.kind == Kind::kMapping && step.peer >= 0 ? std::optional<int>(step.peer)
                                                                   : std::nullopt);
    auto it = held_.find(key);
    const bool isHeld = it != held_.end() && !it->second.empty();
    Step what = isHeld ? it->second.front() : step;
    if (!isHeld && step.kind == Kind::kBuffer) what.method.clear();
    const bool seen = released_.count(key) != 0;
    if (inDestructor_ && isHeld && step.ok) {
      add("close() left " + label(what) + " " +
          (step.kind == Kind::kMapping ? "open" : "allocated") + ": the destructor " +
          released(step.kind) + " it");
    } else if (!isHeld && seen) {
      // The same words whether the runtime refused the second release (both runtimes do:
      // runtime_table.yaml close-twice), a planted fault failed it, or it went through.
      add(label(what) + " " + released(step.kind) + " twice" +
          (step.ok ? "" : " (the second release failed)") +
          (inDestructor_ ? " (by the destructor, after close())" : ""));
    } else if (!step.ok && !planted) {
      add(label(what) + ": " + releaseOp(step.kind) + " failed (" + step.error + ") and no " +
          releaseOp(step.kind) + " fault was planted on this rank" +
          (isHeld ? "" : " (it was not held: a second release?)"));
    } else if (!isHeld) {
      add(label(what) + " " + released(step.kind) + " but never " + acquired(step.kind) +
          (step.ok ? "" : " (the release failed with " + step.error + ")") +
          (inDestructor_ ? " (by the destructor, after close())" : ""));
    }
    if (isHeld) {
      it->second.erase(it->second.begin());
      if (it->second.empty()) held_.erase(it);
    }
    released_[key] = true;
  }

  void add(std::string text) {
    ++problems_;
    findings_.push_back({rank_, std::move(text)});
  }

  const Scenario& scenario_;
  int rank_;
  std::vector<Finding>& findings_;
  std::map<Key, std::vector<Step>> held_;
  std::map<Key, bool> released_;
  int problems_ = 0;
  bool inDestructor_ = false;
};

std::vector<Step> stepsFromLedger(const std::vector<LedgerRecord>& ledger) {
  std::vector<Step> steps;
  for (const LedgerRecord& record : ledger) {
    Step step;
    if (record.op == "alloc" || record.op == "free")
      step.kind = Kind::kBuffer;
    else if (record.op == "open" || record.op == "close")
      step.kind = Kind::kMapping;
    else
      continue;
    step.acquire = record.op == "alloc" || record.op == "open";
    step.ok = record.error == 0;
    step.ptr = record.ptr;
    step.peer = record.ownerDevice;
    step.size = record.size;
    step.generation = record.generation;
    step.hasGeneration = true;
    step.error = "error " + std::to_string(record.error);
    steps.push_back(std::move(step));
  }
  return steps;
}

struct EventSteps {
  std::vector<Step> steps;
  bool allPtrs = true;                  // every step carries a pointer
  std::vector<std::string> unfinished;  // calls that never returned or threw
};

EventSteps stepsFromEvents(const std::vector<Event>& events) {
  static const std::map<std::string, std::pair<Kind, bool>, std::less<>> kMethods = {
      {"allocUncached", {Kind::kBuffer, true}},    {"allocDevice", {Kind::kBuffer, true}},
      {"freeDeviceMem", {Kind::kBuffer, false}},   {"openMemHandle", {Kind::kMapping, true}},
      {"closeMemHandle", {Kind::kMapping, false}},
  };
  EventSteps out;
  std::map<std::string, Event> pending;  // the open call of each method
  for (const Event& event : events) {
    auto method = kMethods.find(event.what);
    if (method == kMethods.end()) continue;
    if (event.kind == EventKind::kCall) {
      pending[event.what] = event;
      continue;
    }
    if (event.kind != EventKind::kReturn && event.kind != EventKind::kThrow) continue;
    auto call = pending.find(event.what);
    const Event* start = call != pending.end() ? &call->second : nullptr;
    Step step;
    step.kind = method->second.first;
    step.acquire = method->second.second;
    step.ok = event.kind == EventKind::kReturn;
    step.method = event.what;
    step.peer = event.peer >= 0 ? event.peer : (start != nullptr ? start->peer : -1);
    // Acquires report their pointer on return, releases on the call.
    step.ptr = step.acquire ? parsePtr(event.detail)
                            : (start != nullptr ? parsePtr(start->detail) : std::nullopt);
    if (!step.ptr) step.ptr = parsePtr(event.detail);
    step.error = event.detail.empty() ? "threw" : event.detail;
    if (step.ok || !step.acquire) {
      if (!step.ptr) out.allPtrs = false;
    }
    out.steps.push_back(std::move(step));
    if (call != pending.end()) pending.erase(call);
  }
  for (const auto& [what, event] : pending) {
    out.unfinished.push_back(
        what + (event.peer >= 0 ? " (peer " + std::to_string(event.peer) + ")" : std::string()) +
        " was called and never returned");
  }
  return out;
}

bool seamEventsPresent(const std::vector<Event>& events) {
  for (const Event& event : events) {
    if (event.what == "allocUncached" || event.what == "allocDevice" ||
        event.what == "freeDeviceMem" || event.what == "openMemHandle" ||
        event.what == "closeMemHandle") {
      return true;
    }
  }
  return false;
}

// Whether one of a CloseError's failures is the fired fault's: its operation ("close-handle
// failed", "free failed"), its peer ("(peer 2)") and its code ("(1)"), as BackendError writes them.
bool namesFailure(const std::vector<std::string>& failures, const FiredFault& fired) {
  const std::string op = faultOp(fired.site) + " failed";
  const std::string peer = fired.peer >= 0 ? "(peer " + std::to_string(fired.peer) + ")" : "";
  const std::string code = fired.error != 0 ? "(" + std::to_string(fired.error) + ")" : "";
  for (const std::string& failure : failures) {
    if (failure.find(op) == std::string::npos) continue;
    if (!peer.empty() && failure.find(peer) == std::string::npos) continue;
    if (!code.empty() && failure.find(code) == std::string::npos) continue;
    return true;
  }
  return false;
}

// The events of the "destroy" phase that begins at `destroyAt`: the destructor's.
std::vector<Event> destroyPhase(const std::vector<Event>& events, std::size_t destroyAt) {
  std::vector<Event> inDestroy;
  for (std::size_t i = destroyAt + 1; i < events.size(); ++i) {
    const Event& event = events[i];
    if (event.kind == EventKind::kPhaseEnd && event.what == "destroy") break;
    inDestroy.push_back(event);
  }
  return inDestroy;
}

// Replays the rank's ledger: close()'s entries up to ledgerAtClose, the destructor's after.
void replayLedger(const RankResult& result, const std::vector<Event>& beforeDestroy,
                  Replay& replay) {
  std::vector<Step> thrown;
  for (const Step& step : stepsFromEvents(beforeDestroy).steps) {
    if (!step.acquire && !step.ok && step.ptr) thrown.push_back(step);
  }
  const auto cut = static_cast<std::ptrdiff_t>(
      result.ledgerAtClose >= 0
          ? std::min(static_cast<std::size_t>(result.ledgerAtClose), result.ledger.size())
          : result.ledger.size());
  // The destructor's entries end where the destroy phase ended; what follows is the
  // harness's own (a launcher releasing for real what an injected failure kept).
  const auto destroyed = static_cast<std::ptrdiff_t>(
      result.ledgerAfterDestroy >= 0
          ? std::clamp(static_cast<std::size_t>(result.ledgerAfterDestroy),
                       static_cast<std::size_t>(cut), result.ledger.size())
          : result.ledger.size());
  const auto& ledger = result.ledger;
  replay.run(stepsFromLedger({ledger.begin(), ledger.begin() + cut}), /*byPtr=*/true, thrown);
  replay.runDestructor(stepsFromLedger({ledger.begin() + cut, ledger.begin() + destroyed}), true);
}

// Without a ledger: replays the rank's seam events; each call that never returned is a problem.
int replayEvents(int rank, const std::vector<Event>& beforeDestroy,
                 const std::vector<Event>& inDestroy, Replay& replay,
                 std::vector<Finding>& findings) {
  const EventSteps steps = stepsFromEvents(beforeDestroy);
  replay.run(steps.steps, steps.allPtrs);
  const EventSteps destructor = stepsFromEvents(inDestroy);
  replay.runDestructor(destructor.steps, steps.allPtrs && destructor.allPtrs);
  for (const std::string& text : steps.unfinished) findings.push_back({rank, text});
  return static_cast<int>(steps.unfinished.size());
}

// close() raises a CloseError naming every close/free fault that fired in it, and raises
// nothing where none fired; a second close() is a no-op; nothing is left on the device.
int checkClose(const Scenario& scenario, int rank, const RankResult& result,
               std::vector<Finding>& findings) {
  int problems = 0;
  if (!result.closeTwiceOk) {
    findings.push_back({rank, "close() a second time was not a no-op"});
    ++problems;
  }
  // What close() left behind in the object: its views of the memory it released. C3, not C4:
  // C4 judges the addresses of a live buffer; once close() returned there is no live memory to
  // address, and a view that still names it is part of what close() failed to clean up (a kernel
  // launched with it reads freed memory and unmapped peers).
  for (const std::string& left : result.leftAfterClose) {
    findings.push_back(
        {rank, "after close() returned, " + left + ": close() released that memory"});
    ++problems;
  }
  std::vector<FiredFault> releaseFaults;
  for (FiredFault& fired : firedFaults(scenario, result)) {
    if (fired.phase == "close" && (fired.site == "close" || fired.site == "free")) {
      releaseFaults.push_back(std::move(fired));
    }
  }
  for (const FiredFault& fired : releaseFaults) {
    const std::string fault =
        "a " + fired.site + " fault fired in close() (" +
        (fired.peer >= 0 ? "peer " + std::to_string(fired.peer) + ", " : std::string()) +
        codeText(fired.error) + ")";
    if (result.closeErrorType.empty()) {
      findings.push_back({rank, fault + " but close() returned without raising"});
      ++problems;
    } else if (result.closeErrorType != "CloseError") {
      findings.push_back(
          {rank, fault + " but close() raised " + result.closeErrorType + ", not a CloseError"});
      ++problems;
    } else if (!namesFailure(result.closeFailures, fired)) {
      std::string listed;
      for (const std::string& f : result.closeFailures) listed += " [" + f + "]";
      findings.push_back(
          {rank, fault + " but close()'s CloseError does not name it; it lists:" + listed});
      ++problems;
    }
  }
  if (!result.closeErrors.empty() && releaseFaults.empty()) {
    for (const std::string& error : result.closeErrors) {
      findings.push_back({rank, "close() reported \"" + error +
                                    "\" though no close/free fault fired in it on this rank"});
      ++problems;
    }
  }
  for (const std::string& leftover : result.deviceLeftovers) {
    findings.push_back({rank, "after the run (and the harness's own releases): " + leftover});
    ++problems;
  }
  return problems;
}

void summarizeCleanup(Verdict& verdict, int checked, int failingRanks, int fromLedger) {
  if (checked == 0) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "no rank could be checked (no ledger or seam events from a live rank)";
  } else if (failingRanks > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(failingRanks) + " of " + std::to_string(checked) +
                      " checked ranks leaked or released twice";
  } else {
    verdict.summary = "every allocation freed and every mapping closed exactly once on " +
                      std::to_string(checked) + " rank(s)" +
                      (fromLedger == checked ? " (ledger)"
                       : fromLedger == 0     ? " (seam events)"
                                             : " (ledger and seam events)");
  }
}

}  // namespace

Verdict checkCleanup(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC3Cleanup, record);
  const Scenario& scenario = record.scenario;
  int checked = 0, failingRanks = 0, fromLedger = 0;
  std::vector<Finding> notes;

  for (int rank = 0; rank < rankCount(record); ++rank) {
    const RankResult* result = findRank(record, rank);
    if (result == nullptr || result->status == RankStatus::kMissing) {
      notes.push_back({rank, "not checked: no result came back"});
      continue;
    }
    if (stoppedByFault(result->status) || expectedReported(scenario, rank)) {
      // A stopped rank's own releases are not judged (a process that dies releases nothing). But
      // where it stops for this scenario only (a thread, one shared mpirun) its process goes on
      // to the next scenario, so whatever is still held after the core unwound and the harness
      // released its leftovers (a mapping made inside the open the rank stopped in, say) would
      // meet a later scenario, as it did on GPUs: a defect of the harness, reported here.
      if (result->deviceLeftovers.empty()) {
        notes.push_back({rank, "not checked: " + toString(result->status) +
                                   (expectedReported(scenario, rank) ? " (expected)" : "")});
        continue;
      }
      for (const std::string& leftover : result->deviceLeftovers) {
        verdict.findings.push_back(
            {rank, toString(result->status) + ", yet after the run (and the harness's own " +
                       "releases) " + leftover + ": a later scenario in this process meets it"});
      }
      ++failingRanks;
      ++checked;
      continue;
    }
    std::vector<Finding> findings;
    Replay replay(scenario, rank, findings);
    int problems = 0;
    // close() is judged on what it left: the ledger and the events up to the end of the close
    // phase. What follows (the "destroy" phase) is the destructor's, judged on its own.
    const std::size_t destroyAt = phaseBegin(result->events, "destroy");
    const std::vector<Event> beforeDestroy(result->events.begin(),
                                           result->events.begin() + destroyAt);
    if (result->ledgerAvailable) {
      ++fromLedger;
      replayLedger(*result, beforeDestroy, replay);
    } else if (seamEventsPresent(result->events)) {
      problems += replayEvents(rank, beforeDestroy, destroyPhase(result->events, destroyAt), replay,
                               findings);
    } else {
      notes.push_back({rank, "not checked: no ledger and no seam events"});
      continue;
    }
    replay.reportHeld();
    ++checked;
    problems += replay.problems();
    problems += checkClose(scenario, rank, *result, findings);
    if (problems > 0) ++failingRanks;
    verdict.findings.insert(verdict.findings.end(), findings.begin(), findings.end());
  }
  summarizeCleanup(verdict, checked, failingRanks, fromLedger);
  verdict.findings.insert(verdict.findings.end(), notes.begin(), notes.end());
  return verdict;
}

}  // namespace peerconf::harness::checkers
