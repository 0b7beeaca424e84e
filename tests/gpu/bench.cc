// peerconf_gpu_bench: the C++ half of the GPU benchmark (ci/bench/run_gpu_bench.sh runs it beside
// ci/bench/torch_bench.py and merges the rows). One MPI process and one GPU a rank. Rank 0 prints
// one tab-separated row a measurement: ROW <metric> <impl> <size> <microseconds> <note>.
//   construct  PeerBuffer construct + close (the handshake), max over ranks, median of N
//   agree      tpAgree over MpiGroup (MPI_Iallreduce MIN), median per call
//   allreduce  the one-shot all-reduce kernel (float sum), eager and graphed, mean per call: the
//              reference layout's tagged pairs, and the low-latency (flag-per-word) variant
//   floor      the NVLink flag round trip, one kernel a rank, mean of 10^5
//   allreduce  (the sweep, --sizes: 4 KiB..16 MiB by powers of 2) the same method at every size
//              for the reference one-shot (512 threads/block, and 512 threads x 2 and x 4 16-byte
//              vectors a thread: OneShotAllReduce's vectorsPerThread; from 1 MiB also 256 threads
//              x 8 and 1024 threads x 4), the reference one-shot with the vectors chosen by size
//              (OneShotAllReduceBySize; then a check of calls of three sizes interleaved on it,
//              printed as "CHECK bysize-alternating ...") and the chunk-tagged layout's
//              one-shot, two-shot and size-chosen combination (ChunkTaggedAllReduce, kAuto:
//              two-shot from --two-shot-from bytes); ci/bench/plot_allreduce.py turns the rows
//              into a table and a plot
//   decompose  (issue 18) where the reference one-shot's time goes, by the same method at 8 KiB,
//              64 KiB, 1 MiB and 16 MiB: a ladder of kernels on its grid (decompose_kernels.h),
//              each adding one ingredient of oneShotKernel — empty, local memory traffic, the
//              payload pushed to the peers, a release fence alone, the tag and wait with a relaxed
//              tag, with a released tag — up to the OneShotAllReduce itself, and the flag round
//              trip beside them (and rungs 2 and 3 with 4 vectors a thread); ci/bench/decompose.py
//              turns the rows into a table
// --sweep-only runs the sweep and the decomposition, --decompose-only the decomposition alone;
// --no-decompose leaves the decomposition out.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend_factory.h"
#include "decompose_kernels.h"
#include "gpu_kernels/chunk_tagged.h"
#include "gpu_kernels/one_shot.h"
#include "gpu_kernels/protocol_kernels.h"
#include "layout/generation.h"
#include "mpi/mpi_group.h"
#include "peer_buffer.h"
#include "tp_agree.h"

namespace {

using Clock = std::chrono::steady_clock;

double usSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double maxOverRanks(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

int rank = 0;
int ranks = 1;

void row(const std::string& metric, const std::string& impl, const std::string& size, double us,
         const std::string& note) {
  if (rank != 0) return;
  std::printf("ROW\t%s\t%s\t%s\t%.3f\t%s\n", metric.c_str(), impl.c_str(), size.c_str(), us,
              note.c_str());
  std::fflush(stdout);
}

std::string sizeName(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

int localRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

// What the sweep runs (command-line options).
struct Sweep {
  std::vector<std::size_t> sizes;
  std::size_t twoShotFrom = 0;  // 0: ChunkTaggedAllReduce::defaultTwoShotFrom
  int chunkThreads = 128;
};

// One all-reduce implementation at one size, by the method of section 4: 200 calls with fresh
// inputs and every output element checked, then timed eager (2000 calls) and graphed (a graph of
// 100 calls replayed 20 times), the slowest rank's mean. Returns the problems found.
int measure(const std::string& impl, std::size_t bytes, float* inF, float* outF,
            const std::function<void(const float*, float*, std::size_t, void*)>& call,
            const std::function<int()>& status) {
  namespace gk = peerconf::gpu_kernels;
  const std::size_t count = bytes / sizeof(float);
  std::size_t wrong = 0;
  for (int it = 0; it < 200; ++it) {
    gk::fillInput(inF, count, rank, it);
    MPI_Barrier(MPI_COMM_WORLD);
    call(inF, outF, count, nullptr);
    gk::synchronize();
    wrong += gk::countWrong(outF, count, ranks, it);
  }
  double bad = static_cast<double>(wrong) + (status() != 0 ? 1.0 : 0.0);
  bad = maxOverRanks(bad);
  auto enqueue = [&](void* stream) { call(inF, outF, count, stream); };
  auto barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
  const double eager = maxOverRanks(gk::meanCallUs(enqueue, 50, 2000, false, 0, barrier));
  const double graphed = maxOverRanks(gk::meanCallUs(enqueue, 50, 100, true, 20, barrier));
  const int after = static_cast<int>(maxOverRanks(status() != 0 ? 1.0 : 0.0));
  const std::string check = bad == 0 && after == 0
                                ? "200 calls checked: all right"
                                : "CHECK FAILED: " + std::to_string(bad) + " wrong" +
                                      (after != 0 ? ", a wait timed out while timed" : "");
  row("allreduce-eager", impl, sizeName(bytes), eager,
      "float32 sum, mean of 2000 eager calls; " + check);
  row("allreduce-graph", impl, sizeName(bytes), graphed,
      "float32 sum, graph of 100 calls x 20 replays; " + check);
  return bad != 0 || after != 0 ? 1 : 0;
}

// Calls of 8 KiB, 1 MiB and 8 MiB (those up to maxBytes; at least two of them, else skipped)
// interleaved on one OneShotAllReduceBySize, so they run on different instances: 100 rounds, each
// with fresh inputs in its own buffers, every call of the round enqueued back to back (no barrier
// or synchronization between them; the rounds go through every order of the sizes, the same on
// every rank), then every output element checked. Prints "CHECK bysize-alternating ..." (rank 0);
// returns the problems found (1 when any output was wrong or a wait timed out).
int checkBySizeAlternating(peerconf::gpu_kernels::OneShotAllReduceBySize& allReduce,
                           peerconf::IpcBackend& backend, std::size_t maxBytes) {
  namespace gk = peerconf::gpu_kernels;
  std::vector<std::size_t> sizes;
  for (const std::size_t bytes :
       {std::size_t{8} << 10, std::size_t{1} << 20, std::size_t{8} << 20}) {
    if (bytes <= maxBytes) sizes.push_back(bytes);
  }
  if (sizes.size() < 2) {
    if (rank == 0) std::printf("CHECK\tbysize-alternating\tskipped: the sweep stops below 1 MiB\n");
    return 0;
  }
  std::vector<std::size_t> at;  // each size's offset in the buffers, in floats
  std::size_t total = 0;
  for (const std::size_t bytes : sizes) {
    at.push_back(total / sizeof(float));
    total += bytes;
  }
  auto in = backend.allocDevice(total);
  auto out = backend.allocDevice(total);
  auto* inF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(in));
  auto* outF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(out));
  const int rounds = 100;
  const int n = static_cast<int>(sizes.size());
  std::vector<int> order(sizes.size());
  for (int k = 0; k < n; ++k) order[k] = k;
  std::size_t wrong = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < n; ++k) {
      gk::fillInput(inF + at[k], sizes[k] / sizeof(float), rank, round * n + k);
    }
    for (const int k : order) {
      allReduce.run(inF + at[k], outF + at[k], sizes[k] / sizeof(float), nullptr);
    }
    gk::synchronize();
    for (int k = 0; k < n; ++k) {
      wrong += gk::countWrong(outF + at[k], sizes[k] / sizeof(float), ranks, round * n + k);
    }
    std::next_permutation(order.begin(), order.end());
  }
  const double bad = maxOverRanks(static_cast<double>(wrong));
  const bool late = maxOverRanks(allReduce.status() != 0 ? 1.0 : 0.0) != 0;
  std::string what;
  for (const std::size_t bytes : sizes) what += (what.empty() ? "" : ", ") + sizeName(bytes);
  const std::string check = bad == 0 && !late
                                ? "all right"
                                : "CHECK FAILED: " + std::to_string(static_cast<long long>(bad)) +
                                      " wrong" + (late ? ", a wait timed out" : "");
  if (rank == 0) {
    std::printf(
        "CHECK\tbysize-alternating\t%d calls (%s interleaved, %d rounds, every order), every "
        "output checked: %s\n",
        rounds * n, what.c_str(), rounds, check.c_str());
    std::fflush(stdout);
  }
  backend.freeDeviceMem(in);
  backend.freeDeviceMem(out);
  return bad != 0 || late ? 1 : 0;
}

// The sweep: every size for the reference one-shot and the chunk-tagged all-reduces.
int benchSweep(peerconf::IpcBackend& backend, peerconf::mpi::MpiGroup& group, const Sweep& sweep) {
  namespace gk = peerconf::gpu_kernels;
  int problems = 0;
  const std::size_t maxBytes = *std::max_element(sweep.sizes.begin(), sweep.sizes.end());
  auto in = backend.allocDevice(maxBytes);
  auto out = backend.allocDevice(maxBytes);
  auto* inF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(in));
  auto* outF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(out));
  // The reference one-shot with 512 threads x 1 (its default), 2 and 4 16-byte vectors a thread
  // (issue 18), and for the large sizes (1 MiB and up) two more block shapes: 256 threads x 8
  // vectors (V = 8 allows at most 512 threads) and 1024 threads x 4 vectors.
  struct Shape {
    int threads;
    int vectors;
    std::size_t fromBytes;  // the sweep's sizes below it are skipped
  };
  for (const Shape shape : {Shape{512, 1, 0}, Shape{512, 2, 0}, Shape{512, 4, 0},
                            Shape{256, 8, 1u << 20}, Shape{1024, 4, 1u << 20}}) {
    const int threads = shape.threads;
    const int vectors = shape.vectors;
    if (maxBytes < shape.fromBytes) continue;
    const auto tagged = gk::OneShotProtocol::kTagged;
    const std::size_t need =
        gk::OneShotAllReduce::bufferBytes(ranks, maxBytes, threads, tagged, vectors);
    peerconf::PeerBuffer buffer(need, backend, &group);
    const std::uint64_t own = buffer.bytes().data;
    const std::uint32_t generation =
        peerconf::layout::agreeGeneration(&group, [&](std::uint32_t g) {
          return gk::OneShotAllReduce::generationInUse(own, ranks, maxBytes, threads, g, tagged,
                                                       vectors);
        });
    {
      gk::OneShotAllReduce allReduce(rank, buffer.addresses(), maxBytes, threads, generation,
                                     2'000'000'000ULL, tagged, vectors);
      const std::string impl =
          vectors == 1
              ? "peerconf reference one-shot (" + std::to_string(threads) + " threads/block)"
              : "peerconf reference one-shot (" + std::to_string(threads) + " threads x " +
                    std::to_string(vectors) + " vectors)";
      for (const std::size_t bytes : sweep.sizes) {
        if (bytes < shape.fromBytes) continue;
        problems += measure(
            impl, bytes, inF, outF,
            [&](const float* i, float* o, std::size_t c, void* s) { allReduce.run(i, o, c, s); },
            [&] { return allReduce.status(); });
      }
      gk::synchronize();
    }
    MPI_Barrier(MPI_COMM_WORLD);  // no peer still reads this rank's buffer
    buffer.close();
  }
  // The reference one-shot with the vectors a thread chosen by size (OneShotAllReduceBySize),
  // then the check that its instances do not disturb each other.
  {
    using BySize = gk::OneShotAllReduceBySize;
    peerconf::PeerBuffer buffer(BySize::bufferBytes(ranks, maxBytes), backend, &group);
    const std::uint64_t own = buffer.bytes().data;
    const std::uint32_t generation = peerconf::layout::agreeGeneration(
        &group, [&](std::uint32_t g) { return BySize::generationInUse(own, ranks, maxBytes, g); });
    {
      BySize allReduce(rank, buffer.addresses(), maxBytes, generation, 2'000'000'000ULL);
      bool sameThreads = true;
      for (const BySize::Range& range : BySize::kRanges) {
        sameThreads = sameThreads && range.threads == BySize::kRanges.front().threads;
      }
      const std::string impl =
          "peerconf reference one-shot, vectors by size (" +
          (sameThreads ? std::to_string(BySize::kRanges.front().threads) + " threads"
                       : std::string("threads by size")) +
          ")";
      for (const std::size_t bytes : sweep.sizes) {
        problems += measure(
            impl, bytes, inF, outF,
            [&](const float* i, float* o, std::size_t c, void* s) { allReduce.run(i, o, c, s); },
            [&] { return allReduce.status(); });
      }
      problems += checkBySizeAlternating(allReduce, backend, maxBytes);
      gk::synchronize();
    }
    MPI_Barrier(MPI_COMM_WORLD);  // no peer still reads this rank's buffer
    buffer.close();
  }
  {
    const std::size_t need = gk::ChunkTaggedAllReduce::bufferBytes(ranks, maxBytes);
    peerconf::PeerBuffer buffer(need, backend, &group);
    const std::uint64_t own = buffer.bytes().data;
    const std::uint32_t generation =
        peerconf::layout::agreeGeneration(&group, [&](std::uint32_t g) {
          return gk::ChunkTaggedAllReduce::generationInUse(own, ranks, maxBytes, g);
        });
    {
      gk::ChunkTaggedAllReduce allReduce(rank, buffer.addresses(), maxBytes, sweep.chunkThreads,
                                         generation, 2'000'000'000ULL, sweep.twoShotFrom);
      const std::string threads = " (" + std::to_string(sweep.chunkThreads) + " threads/block)";
      struct Algo {
        gk::ChunkAlgorithm algorithm;
        std::string name;
      };
      const std::size_t from = sweep.twoShotFrom != 0
                                   ? sweep.twoShotFrom
                                   : gk::ChunkTaggedAllReduce::defaultTwoShotFrom(ranks);
      for (const Algo& algo :
           {Algo{gk::ChunkAlgorithm::kOneShot, "peerconf chunk-tagged one-shot" + threads},
            Algo{gk::ChunkAlgorithm::kTwoShot, "peerconf chunk-tagged two-shot" + threads},
            Algo{gk::ChunkAlgorithm::kAuto,
                 "peerconf chunk-tagged auto, two-shot from " + sizeName(from) + threads}}) {
        for (const std::size_t bytes : sweep.sizes) {
          problems += measure(
              algo.name, bytes, inF, outF,
              [&](const float* i, float* o, std::size_t c, void* s) {
                allReduce.run(i, o, c, s, algo.algorithm);
              },
              [&] { return allReduce.status(); });
        }
      }
      gk::synchronize();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    buffer.close();
  }
  backend.freeDeviceMem(in);
  backend.freeDeviceMem(out);
  return problems;
}

// The floor: a flag round trip between ranks 0 and 1 (one row). Returns the problems found.
int benchFloor(peerconf::IpcBackend& backend, peerconf::mpi::MpiGroup& group) {
  peerconf::PeerBuffer buffer(4096, backend, &group);
  const std::uint32_t generation = peerconf::layout::agreeGeneration(&group, nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
  const double ns = peerconf::gpu_kernels::flagRoundTripNs(rank, buffer.addresses(), generation,
                                                           100000, 2'000'000'000ULL);
  MPI_Barrier(MPI_COMM_WORLD);
  row("floor", "NVLink flag round trip (st.release/ld.acquire .sys)", "8B", ns / 1000.0,
      "mean of 10^5 round trips in one kernel");
  buffer.close();
  return rank == 0 && ns < 0 ? 1 : 0;
}

// The decomposition (issue 18): each rung of decompose_kernels.h and the reference one-shot itself
// (512 threads/block) at every size, eager and graphed by section 4's method (no check of the
// sums: only the reference one-shot's are right). A wait past its bound sets a rung's status; it is
// read after every timing and counted as a problem.
int benchDecompose(peerconf::IpcBackend& backend, peerconf::mpi::MpiGroup& group) {
  namespace gk = peerconf::gpu_kernels;
  using peerconf::gpu_bench::DecomposeKernels;
  using peerconf::gpu_bench::Rung;
  const std::vector<std::size_t> sizes = {8u << 10, 64u << 10, 1u << 20, 16u << 20};
  const std::size_t maxBytes = sizes.back();
  const int threads = DecomposeKernels::kThreads;
  const std::uint64_t timeoutNs = 2'000'000'000ULL;
  int problems = benchFloor(backend, group);
  auto in = backend.allocDevice(maxBytes);
  auto out = backend.allocDevice(maxBytes);
  auto* inF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(in));
  auto* outF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(out));
  gk::fillInput(inF, maxBytes / sizeof(float), rank, 0);
  peerconf::PeerBuffer rungBuffer(DecomposeKernels::bufferBytes(ranks, maxBytes), backend, &group);
  const std::uint32_t rungGeneration =
      peerconf::layout::agreeGeneration(&group, [&](std::uint32_t g) {
        return DecomposeKernels::generationInUse(rungBuffer.bytes().data, ranks, maxBytes, g);
      });
  peerconf::PeerBuffer fullBuffer(gk::OneShotAllReduce::bufferBytes(ranks, maxBytes, threads),
                                  backend, &group);
  const std::uint32_t fullGeneration =
      peerconf::layout::agreeGeneration(&group, [&](std::uint32_t g) {
        return gk::OneShotAllReduce::generationInUse(fullBuffer.bytes().data, ranks, maxBytes,
                                                     threads, g);
      });
  {
    DecomposeKernels rungs(rank, rungBuffer.addresses(), maxBytes, rungGeneration, timeoutNs);
    gk::OneShotAllReduce full(rank, fullBuffer.addresses(), maxBytes, threads, fullGeneration,
                              timeoutNs);
    struct Step {
      std::string name;  // "<number> <what>": ci/bench/decompose.py orders and subtracts by it
      std::string what;
      std::function<void(std::size_t, void*)> call;  // floats, stream
      std::function<int()> status;
    };
    auto rung = [&](Rung r) {
      return [&rungs, r, inF, outF](std::size_t c, void* s) { rungs.run(r, inF, outF, c, s); };
    };
    auto rungStatus = [&] { return rungs.status(); };
    const std::vector<Step> ladder = {
        {"1 empty", "an empty kernel on the same grid: the launch/graph floor", rung(Rung::kEmpty),
         rungStatus},
        {"2 local", "reads the input and this rank's own slots, writes out: no remote traffic",
         rung(Rung::kLocal), rungStatus},
        {"3 push", "2 + the payload's 16-byte stores into the peer's slot (no tag, no wait)",
         rung(Rung::kPush), rungStatus},
        {"3f push+fence",
         "3, __syncthreads, one thread's fence.acq_rel.sys (the release's fence alone: no tag, "
         "no trip)",
         rung(Rung::kPushFence), rungStatus},
        {"2x local (4 vectors)",
         "2 with 4 16-byte vectors a thread (vectorsPerThread 4: a block moves 32 KiB, a quarter "
         "of the blocks)",
         rung(Rung::kLocal4), rungStatus},
        {"3x push (4 vectors)", "3 with 4 16-byte vectors a thread (2x + the stores into the peer)",
         rung(Rung::kPush4), rungStatus},
        {"4 push+relaxed-tag+wait",
         "3 + step, tag stored RELAXED (st.relaxed.sys: WRONG ordering, measurement only), wait "
         "for the peer's tag",
         rung(Rung::kRelaxedTag), rungStatus},
        {"5 push+release-tag+wait",
         "4 with the tag stored st.release.sys as oneShotKernel does (5 - 4: the release fence)",
         rung(Rung::kReleaseTag), rungStatus},
        {"6 full", "OneShotAllReduce kTagged: 5 + the acknowledgement (flow control)",
         [&](std::size_t c, void* s) { full.run(inF, outF, c, s); }, [&] { return full.status(); }},
    };
    auto barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
    for (const std::size_t bytes : sizes) {
      const std::size_t count = bytes / sizeof(float);
      for (const Step& step : ladder) {
        auto enqueue = [&](void* stream) { step.call(count, stream); };
        const double eager = maxOverRanks(gk::meanCallUs(enqueue, 50, 2000, false, 0, barrier));
        const double graphed = maxOverRanks(gk::meanCallUs(enqueue, 50, 100, true, 20, barrier));
        const bool late = maxOverRanks(step.status() != 0 ? 1.0 : 0.0) != 0;
        if (late) ++problems;
        const std::string waits =
            late ? "; A WAIT TIMED OUT (here or in an earlier row)" : "; every wait in time";
        row("decompose-eager", step.name, sizeName(bytes), eager,
            step.what + "; mean of 2000 eager calls" + waits);
        row("decompose-graph", step.name, sizeName(bytes), graphed,
            step.what + "; graph of 100 calls x 20 replays" + waits);
      }
    }
    gk::synchronize();
  }
  MPI_Barrier(MPI_COMM_WORLD);  // no peer still reads this rank's buffers
  fullBuffer.close();
  rungBuffer.close();
  backend.freeDeviceMem(in);
  backend.freeDeviceMem(out);
  return problems;
}

int benchAll(peerconf::IpcBackend& backend, peerconf::mpi::MpiGroup& group, int constructIters,
             std::size_t constructBytes) {
  namespace gk = peerconf::gpu_kernels;
  int problems = 0;

  // 1. The handshake: construct + close, every rank timed, the slowest rank per iteration.
  {
    std::vector<double> total, construct, close;
    for (int i = 0; i < constructIters + 3; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = Clock::now();
      peerconf::PeerBuffer buffer(constructBytes, backend, &group);
      const double c = usSince(t0);
      const auto t1 = Clock::now();
      buffer.close();
      const double d = usSince(t1);
      const double all = maxOverRanks(c + d);
      const double cMax = maxOverRanks(c);
      const double dMax = maxOverRanks(d);
      if (i < 3) continue;  // the first opens pay for enabling peer access
      total.push_back(all);
      construct.push_back(cMax);
      close.push_back(dMax);
    }
    const std::string note = "median of " + std::to_string(constructIters) + ", slowest rank";
    row("construct", "peerconf PeerBuffer construct+close", sizeName(constructBytes), median(total),
        note);
    row("construct-only", "peerconf PeerBuffer construct", sizeName(constructBytes),
        median(construct), note);
    row("close-only", "peerconf PeerBuffer close", sizeName(constructBytes), median(close), note);
  }

  // 2. The agreement.
  {
    std::vector<double> calls;
    for (int i = 0; i < 2100; ++i) {
      const auto t0 = Clock::now();
      const bool ok = peerconf::tpAgree(true, &group);
      const double us = usSince(t0);
      if (!ok) ++problems;
      if (i >= 100) calls.push_back(us);
    }
    row("agree", "peerconf tpAgree (MPI)", "4B", maxOverRanks(median(calls)),
        "median of 2000 calls, slowest rank's median");
  }

  // 3. The floor: a flag round trip between ranks 0 and 1.
  problems += benchFloor(backend, group);

  // 4. The one-shot all-reduce kernel: checked, then timed eager and graphed.
  const std::vector<std::size_t> sizes = {8u << 10, 64u << 10, 1u << 20};
  const std::size_t maxBytes = sizes.back();
  struct Variant {
    gk::OneShotProtocol protocol;
    int threads;
  };
  for (const Variant variant :
       {Variant{gk::OneShotProtocol::kTagged, 512}, Variant{gk::OneShotProtocol::kTagged, 128},
        Variant{gk::OneShotProtocol::kLowLatency, 512},
        Variant{gk::OneShotProtocol::kLowLatency, 128}}) {
    const int threads = variant.threads;
    const auto protocol = variant.protocol;
    const std::size_t need = gk::OneShotAllReduce::bufferBytes(ranks, maxBytes, threads, protocol);
    peerconf::PeerBuffer buffer(need, backend, &group);
    const std::uint64_t own = buffer.bytes().data;
    const std::uint32_t generation =
        peerconf::layout::agreeGeneration(&group, [&](std::uint32_t g) {
          return gk::OneShotAllReduce::generationInUse(own, ranks, maxBytes, threads, g, protocol);
        });
    auto in = backend.allocDevice(maxBytes);
    auto out = backend.allocDevice(maxBytes);
    auto* inF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(in));
    auto* outF = reinterpret_cast<float*>(static_cast<std::uintptr_t>(out));
    {
      gk::OneShotAllReduce allReduce(rank, buffer.addresses(), maxBytes, threads, generation,
                                     2'000'000'000ULL, protocol);
      for (const std::size_t bytes : sizes) {
        if (threads == 128 && bytes != sizes.front()) continue;  // the small-size variant only
        const std::size_t count = bytes / sizeof(float);
        // In-band check: fresh inputs every call, every output element checked.
        std::size_t wrong = 0;
        for (int it = 0; it < 200; ++it) {
          gk::fillInput(inF, count, rank, it);
          MPI_Barrier(MPI_COMM_WORLD);
          allReduce.run(inF, outF, count, nullptr);
          gk::synchronize();
          wrong += gk::countWrong(outF, count, ranks, it);
        }
        const int status = allReduce.status();
        double bad = static_cast<double>(wrong) + (status != 0 ? 1.0 : 0.0);
        bad = maxOverRanks(bad);
        if (bad != 0) ++problems;
        auto enqueue = [&](void* stream) { allReduce.run(inF, outF, count, stream); };
        auto barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
        const double eager = maxOverRanks(gk::meanCallUs(enqueue, 50, 2000, false, 0, barrier));
        const double graphed = maxOverRanks(gk::meanCallUs(enqueue, 50, 100, true, 20, barrier));
        const std::string impl =
            std::string(protocol == gk::OneShotProtocol::kTagged ? "peerconf one-shot kernel"
                                                                 : "peerconf one-shot LL kernel") +
            " (" + std::to_string(threads) + " threads/block)";
        const std::string check = bad == 0 ? "200 calls checked: all right"
                                           : "CHECK FAILED: " + std::to_string(bad) + " wrong";
        row("allreduce-eager", impl, sizeName(bytes), eager,
            "float32 sum, mean of 2000 eager calls; " + check);
        row("allreduce-graph", impl, sizeName(bytes), graphed,
            "float32 sum, graph of 100 calls x 20 replays; " + check);
        if (allReduce.status() != 0) ++problems;
      }
      gk::synchronize();
    }
    MPI_Barrier(MPI_COMM_WORLD);  // no peer still reads this rank's buffer
    backend.freeDeviceMem(in);
    backend.freeDeviceMem(out);
    buffer.close();
  }
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  int constructIters = 30;
  std::size_t constructBytes = 8u << 20;
  Sweep sweep;
  for (std::size_t bytes = 4u << 10; bytes <= (16u << 20); bytes *= 2) sweep.sizes.push_back(bytes);
  bool sweepOnly = false;
  bool decomposeOnly = false;
  bool noDecompose = false;
  const char* usage =
      "usage: %s [--construct-iters N] [--construct-bytes B] [--sizes B,B,...] "
      "[--two-shot-from B] [--chunk-threads N] [--sweep-only | --decompose-only] "
      "[--no-decompose]\n"
      "  --sizes          the sweep's sizes in bytes, multiples of 16 (default 4096..16777216,\n"
      "                   powers of 2)\n"
      "  --two-shot-from  the chunk-tagged auto row takes the two-shot from B bytes\n"
      "                   (default: ChunkTaggedAllReduce::defaultTwoShotFrom)\n"
      "  --chunk-threads  threads a block of the chunk-tagged kernels (multiple of 32; 128)\n"
      "  --sweep-only     skip sections 1-4 (handshake, agreement, floor, the fixed rows)\n"
      "  --decompose-only run only the decomposition of the one-shot's time (the floor and\n"
      "                   a ladder of kernels at 8 KiB, 64 KiB, 1 MiB, 16 MiB; run by default\n"
      "                   after the sweep)\n"
      "  --no-decompose   skip the decomposition (with --sweep-only: the sweep alone)\n";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--construct-iters" && i + 1 < argc) {
      constructIters = std::atoi(argv[++i]);
    } else if (arg == "--construct-bytes" && i + 1 < argc) {
      constructBytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--sizes" && i + 1 < argc) {
      sweep.sizes.clear();
      const std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::size_t bytes = std::strtoull(list.substr(at, comma - at).c_str(), nullptr, 10);
        if (bytes == 0 || bytes % 16 != 0) {
          std::fprintf(stderr, "--sizes: %s is not a positive multiple of 16\n",
                       list.substr(at, comma - at).c_str());
          return 2;
        }
        sweep.sizes.push_back(bytes);
        at = comma + 1;
      }
    } else if (arg == "--two-shot-from" && i + 1 < argc) {
      sweep.twoShotFrom = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--chunk-threads" && i + 1 < argc) {
      sweep.chunkThreads = std::atoi(argv[++i]);
    } else if (arg == "--sweep-only") {
      sweepOnly = true;
    } else if (arg == "--decompose-only") {
      decomposeOnly = true;
    } else if (arg == "--no-decompose") {
      noDecompose = true;
    } else {
      std::fprintf(stderr, usage, argv[0]);
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int devices = peerconf::gpu_kernels::deviceCount();
  int usable = devices > 0 && ranks >= 2 && ranks <= peerconf::gpu_kernels::kMaxRanks ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!usable) {
    if (rank == 0) std::printf("SKIP: needs 2..8 ranks with a GPU each\n");
    MPI_Finalize();
    return 77;
  }
  int problems = 0;
  {
    auto backend = peerconf::makeIpcBackend(peerconf::Runtime::kGpu, localRank() % devices, rank);
    peerconf::mpi::MpiGroup group(MPI_COMM_WORLD, std::chrono::milliseconds(120000),
                                  peerconf::mpi::OnTimeout::kAbort);
    row("meta", "ranks", std::to_string(ranks), 0.0, peerconf::gpu_kernels::dialect());
    try {
      if (!sweepOnly && !decomposeOnly) {
        problems = benchAll(*backend, group, constructIters, constructBytes);
      }
      if (!decomposeOnly) problems += benchSweep(*backend, group, sweep);
      if (!noDecompose) problems += benchDecompose(*backend, group);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &problems, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return problems == 0 ? 0 : 1;
}
