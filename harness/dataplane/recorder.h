// Recorder: the host observer of the protocol. It keeps the event history of the first steps
// (timestamped) and turns every in-band check that fails into a finding naming rank, slot and
// epoch, on every step.
#pragma once

#include <cstdint>

#include "layout/layout.h"
#include "layout/payload.h"
#include "layout/tag.h"
#include "model/dataplane_result.h"

namespace peerconf::harness::dataplane {

class Recorder {
 public:
  using Word = layout::Word;

  // Records into `result` (history and findings), as rank `rank` of a run of `layout` with
  // `generation`; the history covers steps [0, historySteps).
  Recorder(const layout::Layout& layout, int rank, std::uint32_t generation,
           std::uint64_t historySteps, model::Result& result);

  // The protocol's observer interface (layout::NullObserver documents it).
  void pushing(int dest, std::uint64_t step, std::uint32_t epoch, int slot, Word ackSeen);
  void payloadStored(int dest, std::uint64_t step);
  void tagStoring(int dest, std::uint64_t step);
  void pushed(int dest, std::uint64_t step, std::uint32_t epoch, int slot, Word tag);
  void readPair(int source, std::uint64_t step, std::uint32_t epoch, int slot, Word tag,
                Word tagAfter, layout::PairCheck check);
  void overwriteSeen(int source, std::uint64_t step, std::uint32_t epoch, int slot, Word seen);
  void zeroed(int source, std::uint64_t step, std::uint32_t epoch, int slot, Word overwrote);
  void reduced(std::uint64_t step, std::uint32_t epoch, bool right);

  // Steady-clock nanoseconds, as every event's time.
  static std::int64_t now();

 private:
  bool recording(std::uint64_t step) const { return step < historySteps_; }
  void find(model::Violation violation, int peer, int slot, std::uint64_t step, std::uint32_t epoch,
            std::string text);

  layout::Layout layout_;
  int rank_;
  std::uint32_t generation_;
  std::uint64_t historySteps_;
  model::Result& result_;
  model::DataplaneEvent push_;                 // the push being stored
  std::uint64_t badStep_ = ~std::uint64_t{0};  // the last step with a pair that failed its check
};

}  // namespace peerconf::harness::dataplane
