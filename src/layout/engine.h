// Protocol API, host side: a layout as the harness runs it. Engine is a layout with its types
// erased (register.h makes one from a layout type); the registry maps the name a scenario's
// `layout:` gives to its engine. The built-in layouts (layouts.h) and a team's own (registered
// by its executable before peerconf's command line runs: api.h) are found alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "layout/observer.h"
#include "layout/payload.h"
#include "layout/rank_base.h"
#include "layout/tag.h"
#include "layout/wait.h"
#include "layout/workloads.h"

namespace peerconf::layout {

enum class Workload : std::uint8_t {
  kExchange,
  kAllReduce,
  // Two one-shot all-reduces in flight a step on the one buffer (workloads.h, TwoInFlightOf):
  // A and B each push before either reads.
  kTwoInFlight,
  // Control: the same with B reusing A's epoch, and so A's slots (C6, C7).
  kTwoInFlightSharedSlots,
  // The exchange as a replayed CUDA graph: each replay's epoch from a counter the kernel advances
  // (workloads.h, ReplayEpoch).
  kGraphReplay,
  // Control: the same with the epoch the host fixed at capture, every replay alike (C7).
  kGraphReplayCapturedEpoch,
};

// The name a scenario's `workload:` gives it.
constexpr const char* workloadName(Workload workload) {
  switch (workload) {
    case Workload::kExchange:
      return "exchange";
    case Workload::kAllReduce:
      return "allreduce";
    case Workload::kTwoInFlight:
      return "two-in-flight";
    case Workload::kTwoInFlightSharedSlots:
      return "two-in-flight-shared-slots";
    case Workload::kGraphReplay:
      return "graph-replay";
    case Workload::kGraphReplayCapturedEpoch:
      return "graph-replay-captured-epoch";
  }
  return "unknown";
}

// Whether `workload` runs two collectives a step (A, then B): its history counts collectives.
constexpr bool twoInFlight(Workload workload) {
  return workload == Workload::kTwoInFlight || workload == Workload::kTwoInFlightSharedSlots;
}

// The observer a host run records with (the harness's recorder implements it; NullObserver in
// observer.h documents each call).
class HostObserver {
 public:
  virtual ~HostObserver() = default;
  virtual void pushing(int dest, std::uint64_t step, std::uint32_t epoch, int slot,
                       Word ackSeen) = 0;
  virtual void payloadStored(int dest, std::uint64_t step) = 0;
  virtual void tagStoring(int dest, std::uint64_t step) = 0;
  virtual void pushed(int dest, std::uint64_t step, std::uint32_t epoch, int slot, Word tag) = 0;
  virtual void readPair(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                        const Taken& taken, PairCheck check) = 0;
  virtual void overwriteSeen(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                             Word seen) = 0;
  virtual void acknowledged(int source, std::uint64_t step, std::uint32_t epoch, Word word) = 0;
  virtual void zeroed(int source, std::uint64_t step, std::uint32_t epoch, int slot,
                      Word overwrote) = 0;
  virtual void rearming(int owner, int source, int slot, std::uint64_t step, std::uint32_t epoch,
                        Word ackSeen) = 0;
  virtual void rearmed(int owner, int source, int slot, std::uint64_t step,
                       std::uint32_t epoch) = 0;
  virtual void reduced(std::uint64_t step, std::uint32_t epoch, bool right) = 0;
};

// One rank's run of a workload over a layout: the driver calls the phases step by step.
class Session {
 public:
  virtual ~Session() = default;
  virtual Wait pushPhase(std::uint64_t step, std::uint32_t epoch) = 0;
  virtual Wait readPhase(std::uint64_t step, std::uint32_t epoch, Tally& tally) = 0;
  // Tells every rank to stop waiting (a wait of this rank timed out).
  virtual void abort() = 0;
};

// A layout, types erased: its buffer map's size, its hooks, and a session per rank.
class Engine {
 public:
  virtual ~Engine() = default;
  // Why this layout cannot run `workload` with `shape`, or empty when it can.
  virtual std::string invalidReason(const Shape& shape, Workload workload) const = 0;
  virtual std::size_t bytes(const Shape& shape) const = 0;
  virtual int slots(const Shape& shape) const = 0;
  // Whether `own` (this rank's buffer) already holds a word of `generation` where the layout
  // keeps its tags (the generation agreement draws again then).
  virtual bool generationInUse(const Shape& shape, const Word* own,
                               std::uint32_t generation) const = 0;
  // What an earlier life of the buffer left (a scenario's `prefill:`): `source`'s pair of
  // `epoch` for `reader` in generation `generation`, and `reader`'s acknowledgement of `epoch`.
  virtual void writeEarlierPair(const Shape& shape, Word* own, int source, int reader,
                                std::uint32_t generation, std::uint32_t epoch) const = 0;
  virtual void writeEarlierAck(const Shape& shape, Word* own, int reader, std::uint32_t generation,
                               std::uint32_t epoch) const = 0;
  // The hook that initializes this rank's own region before any peer may write to it.
  virtual void initOwn(const Context& context, std::uint32_t startEpoch) const = 0;
  virtual std::unique_ptr<Session> open(const Context& context, HostObserver& observer,
                                        Workload workload) const = 0;
};

// A layout's GPU kernels, types erased (gpu_kernels/layout_kernel.h's registerLayoutKernels makes
// one in the team's .cu): launches one rank's kernel on `stream` (a hipStream_t) with `args` (a
// gpu_kernels::KernelArgs); the runtime's error code of the launch, 0 when it launched.
using GpuLaunch = std::function<int(void* stream, const void* args)>;

// A registered layout.
struct Registered {
  std::string name;
  std::string what;      // one line for listings
  bool control = false;  // a broken layout shipped as a negative control
  std::shared_ptr<const Engine> engine;
  // Its kernels for `--runtime gpu`, or empty: then it runs on the host launchers only (the
  // built-in layouts' kernels are gpu_kernels/protocol_kernels.h's own).
  GpuLaunch gpuLaunch;
};

// Adds (or replaces) the layout `name`. Names with a '/' are a team's own ("myteam/my-layout");
// the built-in names have none. Call before peerconf's command line runs (api.h).
void registerEngine(std::string name, std::string what, bool control,
                    std::shared_ptr<const Engine> engine);

// Adds the GPU kernels of the registered layout `name` (registerEngine first); throws
// std::invalid_argument when no layout has that name.
void registerGpuLaunch(std::string_view name, GpuLaunch launch);

// The layout `name`, or null. The built-in layouts are registered on first use.
const Registered* findLayout(std::string_view name);

// Every registered name: the built-in ones in their order (the reference first), then the rest
// sorted.
std::vector<std::string> registeredLayoutNames();

}  // namespace peerconf::layout
