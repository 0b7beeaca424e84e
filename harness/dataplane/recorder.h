// Recorder: the host observer of the protocol. It keeps the event history of the first steps
// (timestamped) and turns every in-band check that fails into a finding naming rank, slot and
// epoch, on every step.
#pragma once

#include <cstdint>
#include <vector>

#include "layout/engine.h"
#include "layout/layout.h"
#include "layout/payload.h"
#include "layout/tag.h"
#include "model/dataplane_result.h"

namespace peerconf::harness::dataplane {

class Recorder final : public layout::HostObserver {
 public:
  using Word = layout::Word;

  // Records into `result` (history and findings), as rank `rank`; the history covers steps
  // [0, historySteps). What a pair should have been comes from the layout through the observer
  // calls, whatever layout runs.
  // `values` and `allReduce`: the run's payload domain and workload, with which a store that is
  // not a push (rearming/rearmed) is told what pair it overwrote on simulated time.
  Recorder(int rank, std::uint64_t historySteps, model::Result& result,
           const layout::PayloadDomain& values = {}, bool allReduce = false);

  // The protocol's observer interface (layout/observer.h documents it).
  void pushing(int dest, std::uint64_t step, std::uint32_t epoch, int slot, Word ackSeen) override;
  void payloadStored(int dest, std::uint64_t step) override;
  void tagStoring(int dest, std::uint64_t step) override;
  void pushed(int dest, std::uint64_t step, std::uint32_t epoch, int slot, Word tag) override;
  void readPair(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                const layout::Taken& taken, layout::PairCheck check) override;
  void overwriteSeen(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                     Word seen) override;
  void acknowledged(int source, std::uint64_t step, std::uint32_t epoch, Word word) override;
  void zeroed(int source, std::uint64_t step, std::uint32_t epoch, int slot,
              Word overwrote) override;
  void rearming(int owner, int source, int slot, std::uint64_t step, std::uint32_t epoch,
                Word ackSeen) override;
  void rearmed(int owner, int source, int slot, std::uint64_t step, std::uint32_t epoch) override;
  void reduced(std::uint64_t step, std::uint32_t epoch, bool right) override;

  // Steady-clock nanoseconds, as every event's time.
  static std::int64_t now();

 private:
  bool recording(std::uint64_t step) const { return step < historySteps_; }
  // Appends an event of `kind` timed now, and returns it for the fields only its kind has.
  model::DataplaneEvent& record(model::DataplaneEventKind kind, int peer, int slot,
                                std::uint64_t step, std::uint32_t epoch, Word tag);
  void find(model::Violation violation, int peer, int slot, std::uint64_t step, std::uint32_t epoch,
            std::string text);

  // The newest pair of this run among `overwrote` (the values a store overwrote): its source and
  // step, found by payload identity among the pairs of the steps around `step` into `owner`'s
  // buffer from `source` (-1: any rank but owner). False when none is.
  bool identify(const std::vector<Word>& overwrote, int owner, int source, std::uint64_t step,
                int& pairSource, std::uint64_t& pairStep) const;

  int rank_;
  std::uint64_t historySteps_;
  model::Result& result_;
  layout::PayloadDomain values_;
  bool allReduce_ = false;
  std::vector<Word> overwrote_;  // rearming..rearmed: what the stores overwrote (simulated time)
  bool tapped_ = false;          // ... and whether the memory model said so
  Word rearmAck_ = 0;
  model::DataplaneEvent push_;                 // the push being stored
  std::uint64_t badStep_ = ~std::uint64_t{0};  // the last step with a pair that failed its check
};

}  // namespace peerconf::harness::dataplane
