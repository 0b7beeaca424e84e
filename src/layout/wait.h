// Protocol API: how a bounded wait of a layout ends (Wait), and where. Every wait of every layout
// is bounded (a deadline, and the abort word: rank_base.h) and returns one of these instead of
// spinning forever; the harness turns it into the rank's outcome and C8's finding.
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/tag.h"

namespace peerconf::layout {

enum class Status : std::uint8_t {
  kOk,
  kTimeout,      // the wait passed its deadline
  kAborted,      // another rank gave up and said so through the abort word
  kOverwritten,  // the awaited slot already holds a later epoch's pair (C6, seen in-band)
};

enum class WaitFor : std::uint8_t {
  kNothing,
  kPair,     // a peer's pair in this rank's buffer
  kAck,      // a peer's acknowledgement of the slot's previous pair
  kArrival,  // (zero-then-push model) a peer's first pair, so the zeroing can land after it
};

PEERCONF_HD constexpr const char* statusName(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kTimeout:
      return "timeout";
    case Status::kAborted:
      return "aborted";
    case Status::kOverwritten:
      return "overwritten";
  }
  return "unknown";
}

PEERCONF_HD constexpr const char* waitForName(WaitFor what) {
  switch (what) {
    case WaitFor::kNothing:
      return "nothing";
    case WaitFor::kPair:
      return "pair";
    case WaitFor::kAck:
      return "acknowledgement";
    case WaitFor::kArrival:
      return "arrival";
  }
  return "unknown";
}

// How a wait ended, and where: which rank waited for which peer's pair or acknowledgement, for
// which slot (of the pair's destination buffer) and epoch. C8 judges `peer`: a survivor's timeout
// must name the rank that stopped.
struct Wait {
  Status status = Status::kOk;
  WaitFor what = WaitFor::kNothing;
  int rank = -1;
  int peer = -1;
  int slot = -1;
  std::uint32_t epoch = 0;
  std::uint64_t step = 0;
  Word seen = 0;       // the last word the wait read
  int abortedBy = -1;  // kAborted: the rank that gave up
  PEERCONF_HD bool ok() const { return status == Status::kOk; }
};

}  // namespace peerconf::layout
