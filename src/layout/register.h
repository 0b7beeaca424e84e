// Protocol API, host side: an Engine (engine.h) made from a layout type, and its registration.
// The layout's rank is instantiated here over ClockedMemOps (the harness's clock: real time, or
// simulated time with weak memory) and the host observer, so a team's layout runs on every host
// launcher peerconf has: threads on both clocks, and MPI ranks.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "layout/clocked_mem_ops.h"
#include "layout/engine.h"
#include "layout/rank_base.h"
#include "layout/workloads.h"

namespace peerconf::layout {

// How a layout finds a source's slot for a step.
enum class SlotIndexing : std::uint8_t {
  // By the 32-bit epoch (epoch mod depth): `depth` must be a power of two, else the cycle breaks
  // at the wrap (2^32 is not a multiple of 3: epoch 2^32 - 1 and epoch 0 would share slot 0).
  kEpoch,
  // The layout's own way (by the step, a counter of its own): any count its invalidReason takes.
  kOwn,
};

// The defaults of a layout's optional parts; a layout type may derive from it (api.h).
struct LayoutDefaults {
  // Slots by the epoch (a power-of-two depth, checked before the layout's own invalidReason); a
  // layout that indexes them otherwise says kOwn and checks the count itself.
  SlotIndexing slotIndexing() const { return SlotIndexing::kEpoch; }
  // Every workload.
  bool supports(Workload) const { return true; }
  // Why this layout cannot run a workload supports() refuses (appended to the refusal), or null.
  const char* unsupportedWhy(Workload) const { return nullptr; }
  // The words a layout keeps its generation in: only the abort word, by default.
  bool generationInUse(const Shape&, const Word* own, std::uint32_t generation) const {
    return tagGeneration(own[kAbortWord]) == generation;
  }
  // An earlier life left nothing that looks like an acknowledgement.
  void writeEarlierAck(const Shape&, Word*, int, std::uint32_t, std::uint32_t) const {}
  // Nothing to initialize before peers may write.
  template <class Mem>
  void initOwn(const Context&, std::uint32_t) const {}
};

template <class L>
class EngineOf final : public Engine {
  using Mem = ClockedMemOps;
  using Rank = typename L::template Rank<Mem, HostObserver>;

 public:
  explicit EngineOf(L layout) : layout_(std::move(layout)) {}

  std::string invalidReason(const Shape& shape, Workload workload) const override {
    if (!layout_.supports(workload)) {
      const char* why = layout_.unsupportedWhy(workload);
      return std::string("it does not run the ") + workloadName(workload) + " workload" +
             (why == nullptr ? "" : std::string(": ") + why);
    }
    const int depth = shape.depth;
    if (twoInFlight(workload) && layout_.slotIndexing() == SlotIndexing::kEpoch && depth < 2) {
      return "two collectives in flight need depth >= 2, got " + std::to_string(depth) +
             ": B's push waits for the acknowledgement of A's pair in the one slot, which its "
             "reader reads only after its own pushes";
    }
    if (layout_.slotIndexing() == SlotIndexing::kEpoch &&
        (depth < 1 || (depth & (depth - 1)) != 0)) {
      return "depth must be a power of two, got " + std::to_string(depth) +
             ": its slots go by the 32-bit epoch, and epoch mod depth stays a cycle across the "
             "wrap only then (a layout that indexes its slots otherwise declares "
             "SlotIndexing::kOwn)";
    }
    const char* why = layout_.invalidReason(shape);
    return why == nullptr ? std::string() : std::string(why);
  }
  std::size_t bytes(const Shape& shape) const override { return layout_.bytes(shape); }
  int slots(const Shape& shape) const override { return layout_.slots(shape); }
  bool generationInUse(const Shape& shape, const Word* own,
                       std::uint32_t generation) const override {
    return layout_.generationInUse(shape, own, generation);
  }
  void writeEarlierPair(const Shape& shape, Word* own, int source, int reader,
                        std::uint32_t generation, std::uint32_t epoch) const override {
    layout_.writeEarlierPair(shape, own, source, reader, generation, epoch);
  }
  void writeEarlierAck(const Shape& shape, Word* own, int reader, std::uint32_t generation,
                       std::uint32_t epoch) const override {
    layout_.writeEarlierAck(shape, own, reader, generation, epoch);
  }
  void initOwn(const Context& context, std::uint32_t startEpoch) const override {
    layout_.template initOwn<Mem>(context, startEpoch);
  }
  std::unique_ptr<Session> open(const Context& context, HostObserver& observer,
                                Workload workload) const override {
    return std::make_unique<RankSession>(layout_, context, observer, workload);
  }

 private:
  class RankSession final : public Session {
   public:
    RankSession(const L& layout, const Context& context, HostObserver& observer, Workload workload)
        : rank_(layout, context, observer), workload_(workload) {
      replay_.capturedEpoch = workload == Workload::kGraphReplayCapturedEpoch;
    }
    Wait pushPhase(std::uint64_t step, std::uint32_t epoch) override {
      switch (workload_) {
        case Workload::kExchange:
          break;
        case Workload::kAllReduce:
          return AllReduceOf<Rank>::pushPhase(rank_, step, epoch);
        case Workload::kTwoInFlight:
        case Workload::kTwoInFlightSharedSlots:
          return TwoInFlightOf<Rank>::pushPhase(rank_, step, epoch, shared());
        case Workload::kGraphReplay:
        case Workload::kGraphReplayCapturedEpoch:
          return GraphReplayOf<Rank>::pushPhase(rank_, step, epoch, replay_);
      }
      return ExchangeOf<Rank>::pushPhase(rank_, step, epoch);
    }
    Wait readPhase(std::uint64_t step, std::uint32_t epoch, Tally& tally) override {
      switch (workload_) {
        case Workload::kExchange:
          break;
        case Workload::kAllReduce:
          return AllReduceOf<Rank>::readPhase(rank_, step, epoch, tally);
        case Workload::kTwoInFlight:
        case Workload::kTwoInFlightSharedSlots:
          return TwoInFlightOf<Rank>::readPhase(rank_, step, epoch, tally, shared());
        case Workload::kGraphReplay:
        case Workload::kGraphReplayCapturedEpoch:
          return GraphReplayOf<Rank>::readPhase(rank_, step, epoch, tally, replay_);
      }
      return ExchangeOf<Rank>::readPhase(rank_, step, epoch, tally);
    }
    void abort() override { rank_.abort(); }

   private:
    bool shared() const { return workload_ == Workload::kTwoInFlightSharedSlots; }

    Rank rank_;
    Workload workload_;
    ReplayEpoch replay_;  // the graph's epoch counter (graph-replay; device memory on a GPU)
  };

  L layout_;
};

// Registers layout type L (a value of it: `layout`) under `name`, for scenario files' `layout:`.
// `control`: a broken layout kept as a negative control (listings say so).
template <class L>
void registerLayout(std::string name, std::string what, L layout = L{}, bool control = false) {
  registerEngine(std::move(name), std::move(what), control,
                 std::make_shared<EngineOf<L>>(std::move(layout)));
}

}  // namespace peerconf::layout
