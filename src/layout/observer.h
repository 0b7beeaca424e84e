// Protocol API: what a layout records for the C6/C7 checkers. A layout's rank calls these on its
// observer (the harness's recorder on the host; a trace on GPUs; NullObserver where nothing
// listens); C6 and C7 judge a run from this history alone, whatever layout ran:
//   C6: a push into a slot must come after its reader released the slot's previous pair (its
//       read, or its report of the pair overwritten), and an acknowledgement a push relied on must
//       be one the reader wrote; a store into a slot that is not a push (re-arming it with a
//       sentinel, clearing it, resetting a flag: rearming/rearmed), into this rank's own buffer or
//       a peer's, must not overwrite a pair its reader has not read;
//   C7: every pair a reader took must carry the identity (`tag`) its source pushed for that step
//       and the layout's own expectation (`Taken::expected`), taken after the source stored it; a
//       tagless layout's pairs (Taken::untagged) are identified by their payload and slot alone.
#pragma once

#include <cstdint>

#include "layout/hd.h"
#include "layout/payload.h"
#include "layout/tag.h"

namespace peerconf::layout {

// The record a layout keeps, call by call (every call names the step; the host keeps the events
// of the first `history` steps with times):
//   pushing(dest, step, epoch, slot, ackSeen)  a push is about to store (after its waits);
//                                              `ackSeen`: the acknowledgement word it waited
//                                              for (0: it waited for none)
//   payloadStored(dest, step)                  its payload is stored
//   tagStoring(dest, step)                     its tag (the word that publishes it) is next
//   pushed(dest, step, epoch, slot, tag)       the pair is published, identified by `tag`
//   readPair(source, step, epoch, slot, taken, check)
//                                              a pair was read and classified (classifyTaken)
//   overwriteSeen(source, step, epoch, slot, seen)
//                                              the awaited slot held a later epoch's pair
//   acknowledged(source, step, epoch, word)    the reader released `source`'s pair of `epoch`
//                                              by storing `word` where the source reads it
//   zeroed(source, step, epoch, slot, overwrote)
//                                              the reader cleared `source`'s pair in its slot
//   rearming(owner, source, slot, step, epoch, ackSeen)
//                                              stores into a slot that are not a push come next
//                                              (re-arming, clearing, resetting a flag): in
//                                              `owner`'s buffer (this rank's own or a peer's),
//                                              the words of `source`'s pair in slot `slot`
//                                              (source -1: every source's); `ackSeen` as for
//                                              pushing. What they overwrite is not the layout's
//                                              to load: simulated time's memory model says
//   rearmed(owner, source, slot, step, epoch)  those stores are done
//   reduced(step, epoch, right)                an all-reduce sum was checked
struct NullObserver {
  PEERCONF_HD void pushing(int, std::uint64_t, std::uint32_t, int, Word) {}
  PEERCONF_HD void payloadStored(int, std::uint64_t) {}
  PEERCONF_HD void tagStoring(int, std::uint64_t) {}
  PEERCONF_HD void pushed(int, std::uint64_t, std::uint32_t, int, Word) {}
  PEERCONF_HD void readPair(int, std::uint64_t, std::uint32_t, int, const Taken&, PairCheck) {}
  PEERCONF_HD void overwriteSeen(int, std::uint64_t, std::uint32_t, int, Word) {}
  PEERCONF_HD void acknowledged(int, std::uint64_t, std::uint32_t, Word) {}
  PEERCONF_HD void zeroed(int, std::uint64_t, std::uint32_t, int, Word) {}
  PEERCONF_HD void rearming(int, int, int, std::uint64_t, std::uint32_t, Word) {}
  PEERCONF_HD void rearmed(int, int, int, std::uint64_t, std::uint32_t) {}
  PEERCONF_HD void reduced(std::uint64_t, std::uint32_t, bool) {}
};

}  // namespace peerconf::layout
