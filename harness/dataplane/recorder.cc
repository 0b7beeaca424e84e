// The host observer: history events and in-band findings.
#include "dataplane/recorder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "clock.h"
#include "layout/clocked_mem_ops.h"
#include "layout/layout_names.h"

namespace peerconf::harness::dataplane {

using model::DataplaneEvent;
using model::DataplaneEventKind;
using model::Result;
using model::Violation;

using layout::describeSlot;
using layout::describeTag;
using layout::PairCheck;

Recorder::Recorder(int rank, std::uint64_t historySteps, Result& result,
                   const layout::PayloadDomain& values, bool allReduce)
    : rank_(rank),
      historySteps_(historySteps),
      result_(result),
      values_(values),
      allReduce_(allReduce) {}

std::int64_t Recorder::now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             threadClock().now().time_since_epoch())
      .count();
}

void Recorder::find(Violation violation, int peer, int slot, std::uint64_t step,
                    std::uint32_t epoch, std::string text) {
  if (result_.findings.size() >= Result::kMaxFindings) return;
  result_.findings.push_back({violation, rank_, peer, slot, step, epoch, std::move(text)});
}

DataplaneEvent& Recorder::record(DataplaneEventKind kind, int peer, int slot, std::uint64_t step,
                                 std::uint32_t epoch, Word tag) {
  DataplaneEvent event;
  event.kind = kind;
  event.peer = peer;
  event.slot = slot;
  event.step = step;
  event.epoch = epoch;
  event.tag = tag;
  event.tNs = now();
  return result_.history.emplace_back(event);
}

void Recorder::pushing(int dest, std::uint64_t step, std::uint32_t epoch, int slot, Word ackSeen) {
  if (!recording(step)) return;
  push_ = DataplaneEvent{};
  push_.kind = DataplaneEventKind::kPush;
  push_.peer = dest;
  push_.slot = slot;
  push_.step = step;
  push_.epoch = epoch;
  push_.aux = ackSeen;
}

void Recorder::payloadStored(int /*dest*/, std::uint64_t step) {
  if (recording(step)) push_.t2Ns = now();
}

void Recorder::tagStoring(int /*dest*/, std::uint64_t step) {
  if (recording(step)) push_.tNs = now();
}

void Recorder::pushed(int /*dest*/, std::uint64_t step, std::uint32_t /*epoch*/, int /*slot*/,
                      Word tag) {
  if (!recording(step)) return;
  push_.tag = tag;
  result_.history.push_back(push_);
}

void Recorder::readPair(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                        const layout::Taken& taken, PairCheck check) {
  const Word tag = taken.tag;
  const Word tagAfter = taken.tagAfter;
  if (recording(step)) {
    DataplaneEvent& event = record(DataplaneEventKind::kRead, source, slot, step, epoch, tag);
    event.aux = tagAfter;
    event.check = static_cast<std::uint8_t>(check);
    event.want = taken.expected;
    event.tagless = taken.tagless;
  }
  if (check == PairCheck::kGenuine) return;
  badStep_ = step;
  const std::string where = describeSlot(slot, source) + " epoch " + std::to_string(epoch) +
                            " (step " + std::to_string(step) + ")";
  const Word expected = taken.expected;
  if (taken.tagless) {
    // No tag to name: the pair is what its payload says.
    if (check == PairCheck::kOverwritten) {
      find(Violation::kOverwrite, source, slot, step, epoch,
           "rank " + std::to_string(source) + "'s pair at " + where +
               " was overwritten before it was read: payload of a later epoch (a tagless pair, "
               "identified by its payload)");
    } else {
      find(Violation::kStale, source, slot, step, epoch,
           "accepted rank " + std::to_string(source) + "'s pair at " + where +
               " (a tagless pair, identified by its payload) over a payload that is not this "
               "step's (an earlier step's, another buffer's, or another value)");
    }
    return;
  }
  switch (check) {
    case PairCheck::kOverwritten:
      find(Violation::kOverwrite, source, slot, step, epoch,
           "rank " + std::to_string(source) + "'s pair at " + where +
               " was overwritten before it was read: took " + describeTag(tag) +
               (tagAfter != tag ? ", re-read " + describeTag(tagAfter)
                                : std::string(", payload of a later epoch")));
      break;
    case PairCheck::kStaleTag:
      find(Violation::kStale, source, slot, step, epoch,
           "accepted " + describeTag(tag) + " at " + where + " as rank " + std::to_string(source) +
               "'s pair; this step's is " + describeTag(expected));
      break;
    case PairCheck::kStalePayload:
      find(Violation::kStale, source, slot, step, epoch,
           "accepted rank " + std::to_string(source) + "'s " + describeTag(tag) + " at " + where +
               " over a payload that is not this step's (an earlier step's, another buffer's, "
               "or zeroed)");
      break;
    case PairCheck::kGenuine:
      break;
  }
}

void Recorder::overwriteSeen(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                             Word seen) {
  if (recording(step)) record(DataplaneEventKind::kOverwriteSeen, source, slot, step, epoch, seen);
  badStep_ = step;
  find(Violation::kOverwrite, source, slot, step, epoch,
       "waiting for rank " + std::to_string(source) + "'s pair of epoch " + std::to_string(epoch) +
           " (step " + std::to_string(step) + ") at " + describeSlot(slot, source) + ", found " +
           describeTag(seen) + ": overwritten before it was read");
}

void Recorder::acknowledged(int source, std::uint64_t step, std::uint32_t epoch, Word word) {
  if (recording(step)) record(DataplaneEventKind::kAck, source, -1, step, epoch, word);
}

void Recorder::zeroed(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                      Word overwrote) {
  if (recording(step)) record(DataplaneEventKind::kZero, source, slot, step, epoch, overwrote);
}

void Recorder::rearming(int /*owner*/, int /*source*/, int /*slot*/, std::uint64_t step,
                        std::uint32_t /*epoch*/, Word ackSeen) {
  rearmAck_ = ackSeen;
  overwrote_.clear();
  // Simulated time: the memory model says what each store overwrites (history steps only: the
  // identification costs a few thousand payload words a store).
  tapped_ = recording(step) && layout::ClockedMemOps::openTap(&overwrote_);
}

void Recorder::rearmed(int owner, int source, int slot, std::uint64_t step, std::uint32_t epoch) {
  if (tapped_) layout::ClockedMemOps::closeTap();
  if (!recording(step)) return;
  DataplaneEvent& event = record(DataplaneEventKind::kRearm, owner, slot, step, epoch, 0);
  event.source = source;
  event.aux = rearmAck_;
  event.check = tapped_ ? 1 : 0;
  int pairSource = -1;
  std::uint64_t pairStep = 0;
  if (tapped_ && identify(overwrote_, owner, source, step, pairSource, pairStep)) {
    event.source = pairSource;
    event.tag = layout::makeTag(result_.generation,
                                result_.startEpoch + static_cast<std::uint32_t>(pairStep));
  }
  tapped_ = false;
}

bool Recorder::identify(const std::vector<Word>& overwrote, int owner, int source,
                        std::uint64_t step, int& pairSource, std::uint64_t& pairStep) const {
  // A store can only overwrite a pair in flight: within a few slot cycles of this step.
  const auto window = static_cast<std::uint64_t>(2 * std::max(result_.slots, 1) + 2);
  const std::uint64_t first = step > window ? step - window : 0;
  const std::uint64_t last = std::min(step + window, result_.stepsPlanned - 1);
  const int reader = allReduce_ ? layout::kAnyReader : owner;
  bool found = false;
  for (int s = 0; s < result_.ranks; ++s) {
    if (s == owner || (source >= 0 && s != source)) continue;
    for (std::uint64_t j = first; j <= last; ++j) {
      if (found && j <= pairStep) continue;  // the newest pair wins
      const std::uint32_t epoch = result_.startEpoch + static_cast<std::uint32_t>(j);
      bool hit = false;
      for (int i = 0; i < result_.payloadWords && !hit; ++i) {
        const Word want = values_.word(result_.generation, s, reader, j, epoch, i);
        // A chosen value (a sentinel, -0.0) names no pair: only the derived words identify one.
        if (want != values_.natural(result_.generation, s, reader, epoch, i)) continue;
        for (const Word w : overwrote) {
          if (values_.same(w, want, layout::Delivery::kValues)) {
            hit = true;
            break;
          }
        }
      }
      if (hit) {
        found = true;
        pairSource = s;
        pairStep = j;
      }
    }
  }
  return found;
}

void Recorder::reduced(std::uint64_t step, std::uint32_t epoch, bool right) {
  if (recording(step)) {
    record(DataplaneEventKind::kReduced, -1, -1, step, epoch, 0).check = right ? 1 : 0;
  }
  // A wrong sum from a pair that failed its check is that pair's finding.
  if (!right && badStep_ != step) {
    find(Violation::kStale, -1, -1, step, epoch,
         "the all-reduce sum of epoch " + std::to_string(epoch) + " (step " + std::to_string(step) +
             ") is wrong although every pair checked out");
  }
}

}  // namespace peerconf::harness::dataplane
