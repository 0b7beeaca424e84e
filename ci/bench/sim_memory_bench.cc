// The memory model's per-operation cost (issue 43, item 4): ns per SimMemory load/store on a
// data plane's pattern, with no clock or scheduler around it. ci/bench/RESULTS.md keeps the
// figures, the machine and the command (ci/bench/sim_memory_bench.sh runs two builds side by side).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim_memory.h"

namespace peerconf {
namespace {

using Word = SimMemory::Word;

// As the SimClock's chooser draws when no exploration decides: the newest value 7 times in 8.
class SeededChoices final : public SimMemory::Choices {
 public:
  int choose(int options) override {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    if ((state_ & 7u) != 0) return 0;
    return static_cast<int>((state_ >> 3) % static_cast<std::uint64_t>(options));
  }

 private:
  std::uint64_t state_ = 0x9e3779b97f4a7c15ull;
};

// A ring exchange of `ranks` threads over one aliased buffer a rank (a peer's mapping being the
// same words): each step a rank writes a 4-word payload and a release flag into its right
// neighbour's slot, and the neighbour acquires the flag, reads the payload and acknowledges with a
// relaxed store. 64 slots a peer, so the words touched stay those of a data plane's ring.
void exchange(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  constexpr std::size_t kSlots = 64;
  constexpr std::size_t kPayload = 4;
  constexpr std::size_t kSlotWords = kPayload + 2;  // payload, flag, ack
  SeededChoices choices;
  SimMemory memory(ranks, choices);
  std::vector<std::vector<Word>> buffers(static_cast<std::size_t>(ranks),
                                         std::vector<Word>(kSlots * kSlotWords, 0));
  for (int r = 0; r < ranks; ++r) {
    memory.alias(buffers[static_cast<std::size_t>(r)].data(), kSlots * kSlotWords * sizeof(Word),
                 static_cast<std::uint64_t>(r));
  }
  std::uint64_t step = 0;
  std::int64_t operations = 0;
  for (auto _ : state) {
    const std::size_t slot = step % kSlots;
    for (int r = 0; r < ranks; ++r) {
      const int peer = (r + 1) % ranks;
      Word* at = buffers[static_cast<std::size_t>(peer)].data() + slot * kSlotWords;
      for (std::size_t w = 0; w < kPayload; ++w) memory.store(r, at + w, step * 8 + w, false);
      memory.store(r, at + kPayload, step + 1, true);
      benchmark::DoNotOptimize(memory.load(peer, at + kPayload, true));
      for (std::size_t w = 0; w < kPayload; ++w) {
        benchmark::DoNotOptimize(memory.load(peer, at + w, false));
      }
      memory.store(peer, at + kPayload + 1, step + 1, false);
      operations += 2 * static_cast<std::int64_t>(kPayload) + 3;
    }
    ++step;
  }
  // Seconds an operation (printed as e.g. 40n: 40 ns).
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(operations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(operations);
}
BENCHMARK(exchange)->Arg(2)->Arg(4)->Arg(16);

}  // namespace
}  // namespace peerconf

BENCHMARK_MAIN();
