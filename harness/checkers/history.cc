// The replay: per-rank histories merged by (writer, reader, step), checked rule by rule.
#include "checkers/history.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "checkers/support.h"
#include "layout/layout_names.h"
#include "layout/tag.h"
#include "model/dataplane_spec.h"
#include "model/fault_sites.h"

namespace peerconf::harness::checkers {

using model::DataplaneEvent;
using model::DataplaneEventKind;
using model::DataplaneOutcome;
using model::InBandFinding;
using model::RankResult;
using model::Result;
using model::RunRecord;
using model::Violation;

namespace {

using layout::describeSlot;
using layout::describeTag;
using layout::Word;

std::uint64_t key(int a, std::uint64_t b) { return (static_cast<std::uint64_t>(a) << 40) ^ b; }

// What every rank's result shares, and the index of each rank's history.
struct Run {
  std::vector<const Result*> byRank;  // null where a rank has no result that ran
  std::uint32_t generation = 0;
  std::uint32_t start = 0;
  std::uint64_t historySteps = 0;
  bool usable = false;
  std::vector<std::string> notes;

  // Per rank: its pushes by (dest, step), its releases (reads and overwrites seen) by
  // (source, epoch), and its acknowledgements by (source, word), as positions in its history.
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> pushes;
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> releases;
  std::vector<std::map<std::pair<int, Word>, std::size_t>> acks;

  const Result* rank(int r) const {
    return r >= 0 && r < static_cast<int>(byRank.size()) ? byRank[static_cast<std::size_t>(r)]
                                                         : nullptr;
  }
  std::uint64_t stepOf(std::uint32_t epoch) const {
    return static_cast<std::uint32_t>(epoch - start);
  }
  bool covers(const Result* r, std::uint64_t step) const {
    return r != nullptr && step < r->historySteps && step < historySteps;
  }
};

Run index(const RunRecord& record) {
  Run run;
  int n = record.scenario.ranks;
  for (const RankResult& r : record.ranks) n = std::max(n, r.rank + 1);
  run.byRank.assign(static_cast<std::size_t>(std::max(n, 0)), nullptr);
  const Result* first = nullptr;
  for (const RankResult& r : record.ranks) {
    if (!r.dataPlane || !ran(*r.dataPlane) || r.rank < 0 || r.rank >= n) continue;
    run.byRank[static_cast<std::size_t>(r.rank)] = &*r.dataPlane;
    if (first == nullptr) first = &*r.dataPlane;
  }
  if (first == nullptr) return run;
  run.generation = first->generation;
  run.start = first->startEpoch;
  run.historySteps = first->historySteps;
  for (const Result* r : run.byRank) {
    if (r == nullptr) continue;
    if (r->generation != run.generation || r->layout != first->layout ||
        r->startEpoch != run.start || r->ranks != first->ranks) {
      run.notes.push_back(
          "history not replayed: the ranks ran different data planes "
          "(layout, generation or start epoch differ)");
      return run;
    }
    run.historySteps = std::min(run.historySteps, r->historySteps);
  }
  run.pushes.resize(run.byRank.size());
  run.releases.resize(run.byRank.size());
  run.acks.resize(run.byRank.size());
  for (std::size_t r = 0; r < run.byRank.size(); ++r) {
    const Result* result = run.byRank[r];
    if (result == nullptr) continue;
    for (std::size_t i = 0; i < result->history.size(); ++i) {
      const DataplaneEvent& e = result->history[i];
      if (e.kind == DataplaneEventKind::kPush) {
        run.pushes[r].emplace(key(e.peer, e.step), i);
      } else if (e.kind == DataplaneEventKind::kRead ||
                 e.kind == DataplaneEventKind::kOverwriteSeen) {
        run.releases[r].emplace(key(e.peer, e.epoch), i);
      } else if (e.kind == DataplaneEventKind::kAck) {
        run.acks[r].emplace(std::make_pair(e.peer, e.tag), i);
      }
    }
  }
  run.usable = true;
  return run;
}

std::string rankText(int r) { return "rank " + std::to_string(r); }

std::string stepText(const DataplaneEvent& e) {
  return "epoch " + std::to_string(e.epoch) + " (step " + std::to_string(e.step) + ")";
}

// A rank an `at: dataplane` death, hang or exit stopped (its event stream says that fault fired)
// and that was reported so (under --kill-mode signal its process is killed, stopped or exits for
// real: the supervisor reports it from its event stream, which carries no data-plane result; with
// a data plane per buffer, none of the earlier buffers' either).
bool stoppedForRealInDataPlane(const RunRecord& record, const RankResult& result) {
  const bool reported = result.status == model::RankStatus::kDead ||
                        result.status == model::RankStatus::kHung ||
                        result.status == model::RankStatus::kExited;
  const auto& faults = record.scenario.faults;
  return reported &&
         std::any_of(result.events.begin(), result.events.end(), [&](const model::Event& e) {
           return e.kind == model::EventKind::kFault && e.fault >= 0 &&
                  static_cast<std::size_t>(e.fault) < faults.size() &&
                  model::stopsInDataPlane(faults[static_cast<std::size_t>(e.fault)]);
         });
}

// Whether the scenario asked for a data plane, and which ranks did not run it (none reported, or
// one that was skipped or could not start): a data plane asked for and not run fails C6/C7.
void addNotRun(const RunRecord& record, Analysis& analysis) {
  analysis.asked = record.scenario.dataPlane.has_value();
  for (const RankResult& r : record.ranks) analysis.asked = analysis.asked || r.dataPlane;
  if (!analysis.asked) return;
  int n = record.scenario.ranks;
  for (const RankResult& r : record.ranks) n = std::max(n, r.rank + 1);
  for (int rank = 0; rank < n; ++rank) {
    const RankResult* found = nullptr;
    for (const RankResult& r : record.ranks) {
      if (r.rank == rank) found = &r;
    }
    if (found != nullptr && !found->dataPlane && stoppedForRealInDataPlane(record, *found)) {
      continue;  // its process was stopped for real, its data-plane record with it
    }
    if (found == nullptr || !found->dataPlane) {
      // The finding names its rank already (Problem::rank): the text does not again.
      analysis.notRun.push_back(
          {rank, "no data plane ran (it runs only once the handshake succeeded on every rank)",
           false});
    } else if (!ran(*found->dataPlane)) {
      const Result& dp = *found->dataPlane;
      analysis.notRun.push_back({rank,
                                 "data plane " + toString(dp.outcome) +
                                     (dp.detail.empty() ? std::string() : ": " + dp.detail),
                                 false});
    }
  }
}

void addInBand(const RunRecord& record, Violation violation, Analysis& analysis) {
  addNotRun(record, analysis);
  for (const RankResult& r : record.ranks) {
    if (!r.dataPlane) continue;
    const Result& result = *r.dataPlane;
    if (ran(result)) analysis.ran = true;
    analysis.pairsChecked += result.pairsRead;
    analysis.inBand +=
        violation == Violation::kOverwrite ? result.overwrites : result.stale + result.wrongResults;
    for (const InBandFinding& f : result.findings) {
      if (f.violation == violation) analysis.problems.push_back({f.rank, f.text, true});
    }
  }
}

void problem(Analysis& analysis, int rank, std::string text) {
  ++analysis.replayed;
  analysis.problems.push_back({rank, std::move(text), false});
}

}  // namespace

bool ran(const Result& result) {
  return result.outcome != DataplaneOutcome::kSkipped && result.outcome != DataplaneOutcome::kError;
}

namespace {

// C6 for one push `e` of writer `s` into a slot that held its earlier pair `previous`: the
// reader's release of that pair (its read, or its report of the pair overwritten) must be ordered
// before the push by something the writer saw first: (1) where the push waited for an
// acknowledgement (e.aux) and the reader records its acknowledgements, that one, written by the
// reader after the release (an acknowledgement it never wrote, or one written before the release,
// is a finding); else (2) a pair the reader pushed after the release and the writer read before
// this push (a layout without acknowledgements, ordered by the workload's own reads).
// `lastRead[d]`: the last pair the writer read from d before this push (null: none).
void checkReuse(const Run& run, int s, const DataplaneEvent& e, const DataplaneEvent& previous,
                const std::vector<const DataplaneEvent*>& lastRead, Analysis& analysis) {
  ++analysis.eventsReplayed;
  const std::string what = rankText(s) + " pushed its pair of " + stepText(e) + " into " +
                           describeSlot(e.slot, s) + " of rank " + std::to_string(e.peer) +
                           "'s buffer while its pair of epoch " + std::to_string(previous.epoch) +
                           " there was unread";
  const Result* reader = run.rank(e.peer);
  if (!run.covers(reader, previous.step)) return;
  const auto d = static_cast<std::size_t>(e.peer);
  const std::string peer = "rank " + std::to_string(e.peer);
  const auto released = run.releases[d].find(key(s, previous.epoch));
  if (e.aux != 0 && !run.acks[d].empty()) {
    const auto ack = run.acks[d].find({s, e.aux});
    if (ack == run.acks[d].end()) {
      problem(analysis, s,
              rankText(s) + " pushed its pair of " + stepText(e) + " into " +
                  describeSlot(e.slot, s) + " of " + peer + "'s buffer on the strength of " +
                  describeTag(e.aux) + ", an acknowledgement " + peer + " never wrote for it");
      return;
    }
    if (released != run.releases[d].end() && ack->second > released->second) return;  // (1)
    // The push relied on an acknowledgement that does not cover the pair: the layout's flow
    // control is wrong, whatever else happened to order the push.
    const std::uint32_t acked = reader->history[ack->second].epoch;
    problem(analysis, s,
            what + (layout::epochDistance(previous.epoch, acked) < 0
                        ? ": the last acknowledgement it had seen from " + peer + " was of epoch " +
                              std::to_string(acked)
                        : ": it relied on " + peer + "'s acknowledgement of epoch " +
                              std::to_string(acked) + ", written before " + peer +
                              " had read the pair"));
    return;
  }
  if (released == run.releases[d].end()) {
    problem(analysis, s, what + ": " + peer + " never read it");
    return;
  }
  const DataplaneEvent* seen = d < lastRead.size() ? lastRead[d] : nullptr;
  if (seen != nullptr) {
    const auto pushed =
        run.pushes[d].find(key(s, run.stepOf(seen->epoch)));  // d's push of what s read
    if (pushed != run.pushes[d].end() && pushed->second > released->second) return;  // (2)
  }
  problem(analysis, s,
          what + ": nothing it had seen from " + peer + " came after " + peer + " read it");
}

}  // namespace

// C6 for the stores into a slot that are not pushes (re-arming, clearing, resetting: kRearm
// events), rule (7): none may overwrite a pair its reader has not read.
class RearmCheck {
 public:
  RearmCheck(const Run& run, Analysis& analysis) : run_(run), analysis_(analysis) {
    const std::size_t n = run.byRank.size();
    reads_.assign(n, std::vector<std::vector<std::pair<std::size_t, std::uint64_t>>>(n));
    for (std::size_t r = 0; r < n; ++r) {
      const Result* result = run.byRank[r];
      if (result == nullptr) continue;
      for (std::size_t i = 0; i < result->history.size(); ++i) {
        const DataplaneEvent& e = result->history[i];
        if (e.peer < 0 || static_cast<std::size_t>(e.peer) >= n) continue;
        if (e.kind == DataplaneEventKind::kRead) {
          reads_[r][static_cast<std::size_t>(e.peer)].emplace_back(i, e.step);
        } else if (e.kind == DataplaneEventKind::kPush) {
          slotPushes_[{static_cast<int>(r), e.peer, e.slot}].push_back(i);
        }
      }
    }
  }

  void check(int r, std::size_t at) {
    const DataplaneEvent& x = run_.byRank[static_cast<std::size_t>(r)]->history[at];
    ++analysis_.eventsReplayed;
    if (x.check != 0) {
      witnessed(r, at, x);
      return;
    }
    for (int s = 0; s < static_cast<int>(run_.byRank.size()); ++s) {
      if (s == x.peer || (x.source >= 0 && s != x.source)) continue;
      ordered(r, at, x, s);
    }
  }

 private:
  using Reads = std::vector<std::pair<std::size_t, std::uint64_t>>;

  std::string slotText(int r, const DataplaneEvent& x, int s) const {
    return rankText(r) + " re-armed " +
           (x.peer == r ? std::string("its own ") : "peer " + std::to_string(x.peer) + "'s ") +
           describeSlot(x.slot, s);
  }

  // Simulated time: the memory model said which pair the store overwrote (x.tag; 0: none of this
  // run). Its reader must have released that pair before: in its own history, or (a peer's
  // buffer) at an earlier time on the one simulated clock.
  void witnessed(int r, std::size_t at, const DataplaneEvent& x) {
    if (x.tag == 0 || x.source < 0) return;
    const Result* owner = run_.rank(x.peer);
    const std::uint32_t epoch = layout::tagEpoch(x.tag);
    const std::uint64_t step = run_.stepOf(epoch);
    if (!run_.covers(owner, step)) return;
    const Result* self = run_.rank(r);
    const auto& releases = run_.releases[static_cast<std::size_t>(x.peer)];
    const auto released = releases.find(key(x.source, epoch));
    bool before = false;
    if (released != releases.end()) {
      if (x.peer == r) {
        before = released->second < at;
      } else if (owner->clockDomain == self->clockDomain) {
        before = owner->history[released->second].tNs <= x.tNs;
      } else {
        return;  // no clock to order them by
      }
    }
    if (before) return;
    problem(analysis_, r,
            slotText(r, x, x.source) + " over rank " + std::to_string(x.source) +
                "'s pair of epoch " + std::to_string(epoch) + " (step " + std::to_string(step) +
                ") before " +
                (x.peer == r ? std::string("reading it")
                             : "rank " + std::to_string(x.peer) + " read it") +
                " (at its step " + std::to_string(x.step) +
                "; what the store overwrote is the memory model's word)");
  }

  // Real time and GPUs: by the recorded order. Every pair `s` pushed into the slot is either
  // released by its reader before the store (the reader's own history; or a pair the reader
  // pushed after releasing it, read by the storing rank before the store; or the
  // acknowledgement the store waited for, written after) or pushed after the store (by the
  // storing rank itself; or after `s` read a pair the storing rank pushed after the store); a
  // pair that is neither may have been overwritten unread.
  void ordered(int r, std::size_t at, const DataplaneEvent& x, int s) {
    const auto found = slotPushes_.find({s, x.peer, x.slot});
    if (found == slotPushes_.end()) return;
    const Result* writer = run_.rank(s);
    const Result* owner = run_.rank(x.peer);
    for (const std::size_t y : found->second) {
      const DataplaneEvent& push = writer->history[y];
      if (pushedAfter(r, at, s, y)) return;  // and so is every later one
      if (push.step >= run_.historySteps || !run_.covers(owner, push.step)) continue;
      if (releasedBefore(r, at, x, s, push)) continue;
      problem(analysis_, r,
              slotText(r, x, s) + " while rank " + std::to_string(s) + "'s pair of epoch " +
                  std::to_string(push.epoch) + " (step " + std::to_string(push.step) +
                  ") there was unread (at its step " + std::to_string(x.step) +
                  "; by the recorded order: " +
                  (x.peer == r ? std::string("it had not read it")
                               : "nothing it had seen came after rank " + std::to_string(x.peer) +
                                     " read it") +
                  ")");
      return;
    }
  }

  // The last entry of `reads` before history position `before`, or null.
  static const std::pair<std::size_t, std::uint64_t>* lastBefore(const Reads& reads,
                                                                 std::size_t before) {
    const auto it = std::lower_bound(reads.begin(), reads.end(), before,
                                     [](const auto& e, std::size_t b) { return e.first < b; });
    return it == reads.begin() ? nullptr : &*(it - 1);
  }

  // Whether rank s's push at history position y is ordered after rank r's store at `at`.
  bool pushedAfter(int r, std::size_t at, int s, std::size_t y) const {
    if (s == r) return y > at;
    const auto* read =
        lastBefore(reads_[static_cast<std::size_t>(s)][static_cast<std::size_t>(r)], y);
    if (read == nullptr) return false;
    const auto& pushes = run_.pushes[static_cast<std::size_t>(r)];
    const auto pushed = pushes.find(key(s, read->second));
    return pushed != pushes.end() && pushed->second > at;
  }

  // Whether the owner's release of `push` is ordered before rank r's store at `at`.
  bool releasedBefore(int r, std::size_t at, const DataplaneEvent& x, int s,
                      const DataplaneEvent& push) const {
    const auto& releases = run_.releases[static_cast<std::size_t>(x.peer)];
    const auto released = releases.find(key(s, push.epoch));
    if (released == releases.end()) return false;
    if (x.peer == r) return released->second < at;
    const auto& acks = run_.acks[static_cast<std::size_t>(x.peer)];
    if (x.aux != 0) {
      const auto ack = acks.find({r, x.aux});
      if (ack != acks.end() && ack->second > released->second) return true;
    }
    const auto* read =
        lastBefore(reads_[static_cast<std::size_t>(r)][static_cast<std::size_t>(x.peer)], at);
    if (read == nullptr) return false;
    const auto& pushes = run_.pushes[static_cast<std::size_t>(x.peer)];
    const auto pushed = pushes.find(key(r, read->second));
    return pushed != pushes.end() && pushed->second > released->second;
  }

  const Run& run_;
  Analysis& analysis_;
  std::vector<std::vector<Reads>> reads_;  // [rank][peer]: (history position, step), in order
  std::map<std::tuple<int, int, int>, std::vector<std::size_t>> slotPushes_;  // (writer, dest,
                                                                              // slot) -> pushes
};

namespace {

// C6 over one data plane: the record's dataPlane of every rank.
Analysis overwritesOfOneDataPlane(const RunRecord& record) {
  Analysis analysis;
  addInBand(record, Violation::kOverwrite, analysis);
  const Run run = index(record);
  analysis.notes = run.notes;
  if (!run.usable) return analysis;
  analysis.historySteps = run.historySteps;

  for (std::size_t w = 0; w < run.byRank.size(); ++w) {
    const Result* writer = run.byRank[w];
    if (writer == nullptr) continue;
    // (dest, slot) -> the pair this writer left there; per source, the last pair it read
    std::map<std::pair<int, int>, const DataplaneEvent*> last;
    std::vector<const DataplaneEvent*> lastRead(run.byRank.size(), nullptr);
    for (const DataplaneEvent& e : writer->history) {
      if (e.kind == DataplaneEventKind::kRead && e.peer >= 0 &&
          static_cast<std::size_t>(e.peer) < lastRead.size()) {
        lastRead[static_cast<std::size_t>(e.peer)] = &e;
      }
      if (e.kind != DataplaneEventKind::kPush || e.step >= run.historySteps) continue;
      const DataplaneEvent*& previous = last[{e.peer, e.slot}];
      if (previous != nullptr) {
        checkReuse(run, static_cast<int>(w), e, *previous, lastRead, analysis);
      }
      previous = &e;
    }
  }

  for (std::size_t d = 0; d < run.byRank.size(); ++d) {
    const Result* owner = run.byRank[d];
    if (owner == nullptr) continue;
    for (std::size_t i = 0; i < owner->history.size(); ++i) {
      const DataplaneEvent& z = owner->history[i];
      if (z.kind != DataplaneEventKind::kZero || z.step >= run.historySteps) continue;
      ++analysis.eventsReplayed;
      const Result* source = run.rank(z.peer);
      if (source == nullptr) continue;
      const std::uint32_t epoch = z.epoch;
      const auto pushed = run.pushes[static_cast<std::size_t>(z.peer)].find(
          key(static_cast<int>(d), run.stepOf(epoch)));
      if (pushed == run.pushes[static_cast<std::size_t>(z.peer)].end() ||
          source->history[pushed->second].tag != z.tag) {
        continue;  // it zeroed something older than this run: harmless
      }
      const auto released = run.releases[d].find(key(z.peer, epoch));
      if (released == run.releases[d].end() || released->second > i) {
        problem(analysis, static_cast<int>(d),
                rankText(static_cast<int>(d)) + " zeroed " + describeSlot(z.slot, z.peer) +
                    " of its buffer over rank " + std::to_string(z.peer) + "'s pair of epoch " +
                    std::to_string(epoch) + " before reading it");
      }
    }
  }

  RearmCheck rearms(run, analysis);
  for (std::size_t r = 0; r < run.byRank.size(); ++r) {
    const Result* result = run.byRank[r];
    if (result == nullptr) continue;
    for (std::size_t i = 0; i < result->history.size(); ++i) {
      const DataplaneEvent& e = result->history[i];
      if (e.kind == DataplaneEventKind::kRearm && e.step < run.historySteps) {
        rearms.check(static_cast<int>(r), i);
      }
    }
  }
  return analysis;
}

// C7 over one data plane: the record's dataPlane of every rank.
Analysis staleOfOneDataPlane(const RunRecord& record) {
  Analysis analysis;
  addInBand(record, Violation::kStale, analysis);
  const Run run = index(record);
  analysis.notes = run.notes;
  if (!run.usable) return analysis;
  analysis.historySteps = run.historySteps;

  for (std::size_t d = 0; d < run.byRank.size(); ++d) {
    const Result* reader = run.byRank[d];
    if (reader == nullptr) continue;
    for (const DataplaneEvent& a : reader->history) {
      if (a.kind != DataplaneEventKind::kRead || a.step >= run.historySteps) continue;
      ++analysis.eventsReplayed;
      const int s = a.peer;
      // A tagless pair is what its payload (checked in-band) and its slot say: no tag to judge.
      const std::string what =
          a.tagless ? rankText(static_cast<int>(d)) + " took rank " + std::to_string(s) +
                          "'s pair of " + stepText(a) + " at " + describeSlot(a.slot, s) +
                          " (tagless: identified by its payload)"
                    : rankText(static_cast<int>(d)) + " took " + describeTag(a.tag) + " as rank " +
                          std::to_string(s) + "'s pair of " + stepText(a) + " at " +
                          describeSlot(a.slot, s);
      const std::string stored = a.tagless ? "stored it" : "stored that tag";
      // The layout's own expectation for the step, recorded with the read (Taken::expected).
      if (!a.tagless && a.tag != a.want) {
        problem(analysis, static_cast<int>(d),
                what + "; this step's tag is " + describeTag(a.want));
        continue;
      }
      const Result* source = run.rank(s);
      if (!run.covers(source, a.step)) continue;
      const auto pushed =
          run.pushes[static_cast<std::size_t>(s)].find(key(static_cast<int>(d), a.step));
      if (pushed == run.pushes[static_cast<std::size_t>(s)].end()) {
        problem(analysis, static_cast<int>(d),
                what + ", a pair rank " + std::to_string(s) + " never pushed for that step");
        continue;
      }
      const DataplaneEvent& w = source->history[pushed->second];
      if (a.tagless) {
        if (a.slot >= 0 && w.slot >= 0 && a.slot != w.slot) {
          problem(analysis, static_cast<int>(d),
                  what + "; rank " + std::to_string(s) + " pushed that step's pair into " +
                      describeSlot(w.slot, s));
          continue;
        }
      } else if (w.tag != a.tag) {
        problem(analysis, static_cast<int>(d),
                what + "; rank " + std::to_string(s) + " pushed " + describeTag(w.tag) +
                    " for that step");
        continue;
      }
      if (source->clockDomain != reader->clockDomain) continue;
      if (a.tNs + kClockToleranceNs < w.tNs) {
        problem(analysis, static_cast<int>(d),
                what + " " + std::to_string((w.tNs - a.tNs) / 1000) + " us before rank " +
                    std::to_string(s) + " " + stored);
      } else if (a.tNs + kClockToleranceNs < w.t2Ns) {
        problem(analysis, static_cast<int>(d),
                what + " while rank " + std::to_string(s) +
                    " was still storing its payload (complete " +
                    std::to_string((w.t2Ns - a.tNs) / 1000) + " us later)");
      }
    }
  }
  return analysis;
}

// With several buffers' data planes, each judged as one (dataPlaneView), its findings and notes
// named by their buffer ("buffer 1: ..."), the counts added up.
Analysis analyzeEachBuffer(const RunRecord& record, Analysis (*analyze)(const RunRecord&)) {
  if (!model::dataPlanePerBuffer(record.scenario)) return analyze(record);
  const std::size_t buffers = dataPlaneBuffers(record.scenario);
  Analysis all;
  bool first = true;
  for (std::size_t buffer = 0; buffer < buffers; ++buffer) {
    const Analysis one = analyze(dataPlaneView(record, buffer));
    const std::string prefix = bufferPrefix(record.scenario, buffer);
    all.asked = all.asked || one.asked;
    all.ran = all.ran || one.ran;
    for (Problem p : one.notRun) {
      p.text = prefix + p.text;
      all.notRun.push_back(std::move(p));
    }
    for (Problem p : one.problems) {
      p.text = prefix + p.text;
      all.problems.push_back(std::move(p));
    }
    for (const std::string& note : one.notes) all.notes.push_back(prefix + note);
    all.inBand += one.inBand;
    all.replayed += one.replayed;
    all.pairsChecked += one.pairsChecked;
    all.eventsReplayed += one.eventsReplayed;
    // The steps every buffer's history covers.
    all.historySteps = first ? one.historySteps : std::min(all.historySteps, one.historySteps);
    first = false;
  }
  return all;
}

}  // namespace

Analysis analyzeOverwrites(const RunRecord& record) {
  return analyzeEachBuffer(record, overwritesOfOneDataPlane);
}

Analysis analyzeStale(const RunRecord& record) {
  return analyzeEachBuffer(record, staleOfOneDataPlane);
}

}  // namespace peerconf::harness::checkers
