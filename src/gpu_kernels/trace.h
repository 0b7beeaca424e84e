// The data plane's trace on a GPU: a bounded observer of a layout's rank (layout/observer.h) that a
// kernel fills in device memory with no host round trip. It keeps (1) the events of the first
// `historySteps` steps, in the form of the host's event history (model/dataplane_result.h: push,
// read, overwrite-seen, zero, reduced, and a registered layout's acknowledgements, with
// device-clock times), and (2) on every step, the first
// `noteCapacity` protocol calls whose in-band check failed (a pair that is not genuine, an
// overwrite seen, a wrong sum), from which the host rebuilds the in-band findings with its own
// Recorder. Plain C++ over a MemOps type (PEERCONF_HD): the kernels instantiate it over
// GpuMemOps, host tests over HostMemOps.
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/payload.h"
#include "layout/tag.h"

namespace peerconf::gpu_kernels {

// The kinds of the host's model::DataplaneEventKind, in the same order.
enum class TraceKind : std::uint8_t { kPush, kRead, kOverwriteSeen, kZero, kReduced, kAck, kRearm };

// One recorded event: the fields of the host's model::DataplaneEvent, fixed-size and trivially
// copyable (it is copied back from device memory as bytes).
struct TraceEvent {
  std::uint64_t step = 0;
  std::uint64_t tag = 0;       // push: written; read: taken; overwrite: seen; zero: overwritten;
                               // ack: the word written
  std::uint64_t aux = 0;       // push: the acknowledgement that let it; read: the tag re-read
  std::uint64_t expected = 0;  // read: the word the layout expected (layout::Taken::expected)
  std::uint64_t tNs = 0;       // push: just before the tag store; others: when it happened
  std::uint64_t t2Ns = 0;      // push: just after the payload stores
  std::uint32_t epoch = 0;
  std::int32_t peer = -1;  // push: the destination; read/overwrite/zero: the source; rearm: the
                           // buffer's owner
  std::int32_t slot = -1;
  std::int32_t source = -1;  // rearm: whose words (-1: every source's)
  TraceKind kind = TraceKind::kPush;
  std::uint8_t check = 0;    // read: layout::PairCheck; reduced: 1 right, 0 wrong
  std::uint8_t later = 0;    // read: 1 when the word taken is of a later epoch (Taken::later)
  std::uint8_t tagless = 0;  // read: 1 when the layout's pairs carry no tag (Taken::tagless)
};

// An event of `kind` with the fields every kind has; aux, check and the times stay zero.
PEERCONF_HD inline TraceEvent traceEvent(TraceKind kind, int peer, int slot, std::uint64_t step,
                                         std::uint32_t epoch, std::uint64_t tag) {
  TraceEvent e;
  e.kind = kind;
  e.peer = peer;
  e.slot = slot;
  e.step = step;
  e.epoch = epoch;
  e.tag = tag;
  return e;
}

// Where a kernel records and how much it may: device pointers (or host ones on the host).
struct TraceLog {
  TraceEvent* events = nullptr;  // the history: events of steps [0, historySteps)
  std::uint32_t eventCapacity = 0;
  TraceEvent* notes = nullptr;  // failed in-band checks, every step, first come
  std::uint32_t noteCapacity = 0;
  std::uint64_t historySteps = 0;
  // Record acknowledgements (a registered layout's: the host adds the reference family's).
  bool recordAcks = false;
};

// What a kernel recorded: counts (the arrays hold min(count, capacity) entries).
struct TraceCounts {
  std::uint64_t events = 0;  // events of the history steps, recorded or not
  std::uint64_t notes = 0;   // failed checks seen, recorded or not
};

// The observer. Timestamps come from Mem::nowNs() (the device clock on GPUs).
template <class Mem>
class TraceRecorder {
 public:
  using Word = layout::Word;

  PEERCONF_HD explicit TraceRecorder(const TraceLog& log) : log_(log) {}

  PEERCONF_HD const TraceCounts& counts() const { return counts_; }

  PEERCONF_HD void pushing(int dest, std::uint64_t step, std::uint32_t epoch, int slot,
                           Word ackSeen) {
    if (!recording(step)) return;
    push_ = TraceEvent{};
    push_.kind = TraceKind::kPush;
    push_.peer = dest;
    push_.slot = slot;
    push_.step = step;
    push_.epoch = epoch;
    push_.aux = ackSeen;
  }
  PEERCONF_HD void payloadStored(int, std::uint64_t step) {
    if (recording(step)) push_.t2Ns = Mem::nowNs();
  }
  PEERCONF_HD void tagStoring(int, std::uint64_t step) {
    if (recording(step)) push_.tNs = Mem::nowNs();
  }
  PEERCONF_HD void pushed(int, std::uint64_t step, std::uint32_t, int, Word tag) {
    if (!recording(step)) return;
    push_.tag = tag;
    event(push_);
  }
  PEERCONF_HD void readPair(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                            const layout::Taken& taken, layout::PairCheck check) {
    const bool bad = check != layout::PairCheck::kGenuine;
    if (!recording(step) && !bad) return;
    TraceEvent e = made(TraceKind::kRead, source, slot, step, epoch, taken.tag);
    e.aux = taken.tagAfter;
    e.expected = taken.expected;
    e.later = taken.later ? 1 : 0;
    e.tagless = taken.tagless ? 1 : 0;
    e.check = static_cast<std::uint8_t>(check);
    if (recording(step)) event(e);
    if (bad) note(e);
  }
  PEERCONF_HD void overwriteSeen(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                                 Word seen) {
    const TraceEvent e = made(TraceKind::kOverwriteSeen, source, slot, step, epoch, seen);
    if (recording(step)) event(e);
    note(e);
  }
  // Traced for a registered layout only (TraceLog::recordAcks): for the reference family the host
  // adds the acknowledgement after each read (device_mapping.cc, applyTrace), which keeps its
  // device event arrays as they were.
  PEERCONF_HD void acknowledged(int source, std::uint64_t step, std::uint32_t epoch, Word word) {
    if (log_.recordAcks && recording(step)) {
      event(made(TraceKind::kAck, source, -1, step, epoch, word));
    }
  }
  PEERCONF_HD void zeroed(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                          Word overwrote) {
    if (recording(step)) event(made(TraceKind::kZero, source, slot, step, epoch, overwrote));
  }
  // A store into a slot that is not a push: what it overwrote is not known on a GPU (tag 0,
  // check 0); C6 judges it by the recorded order. Recorded when its stores are done.
  PEERCONF_HD void rearming(int, int, int, std::uint64_t, std::uint32_t, Word ackSeen) {
    rearmAck_ = ackSeen;
  }
  PEERCONF_HD void rearmed(int owner, int source, int slot, std::uint64_t step,
                           std::uint32_t epoch) {
    if (!recording(step)) return;
    TraceEvent e = made(TraceKind::kRearm, owner, slot, step, epoch, 0);
    e.source = source;
    e.aux = rearmAck_;
    event(e);
  }
  PEERCONF_HD void reduced(std::uint64_t step, std::uint32_t epoch, bool right) {
    if (!recording(step) && right) return;
    TraceEvent e = made(TraceKind::kReduced, -1, -1, step, epoch, 0);
    e.check = right ? 1 : 0;
    if (recording(step)) event(e);
    if (!right) note(e);
  }

 private:
  PEERCONF_HD bool recording(std::uint64_t step) const { return step < log_.historySteps; }

  PEERCONF_HD static TraceEvent made(TraceKind kind, int peer, int slot, std::uint64_t step,
                                     std::uint32_t epoch, Word tag) {
    TraceEvent e = traceEvent(kind, peer, slot, step, epoch, tag);
    e.tNs = Mem::nowNs();
    return e;
  }
  PEERCONF_HD void event(const TraceEvent& e) {
    if (counts_.events < log_.eventCapacity) log_.events[counts_.events] = e;
    ++counts_.events;
  }
  PEERCONF_HD void note(const TraceEvent& e) {
    if (counts_.notes < log_.noteCapacity) log_.notes[counts_.notes] = e;
    ++counts_.notes;
  }

  TraceLog log_;
  TraceCounts counts_;
  TraceEvent push_;
  Word rearmAck_ = 0;
};

// Events one rank records a step of a run of `ranks` ranks: a push and a read (or an overwrite
// seen) per peer, for a registered layout also an acknowledgement and a re-arm per peer (`own`),
// and the all-reduce's check. (The zeroing of the first step's slots comes on top: one event a
// peer.)
PEERCONF_HD inline std::uint64_t traceEventsPerStep(int ranks, bool allReduce, bool own = false) {
  return (own ? 4u : 2u) * static_cast<std::uint64_t>(ranks - 1) + (allReduce ? 1u : 0u);
}

}  // namespace peerconf::gpu_kernels
