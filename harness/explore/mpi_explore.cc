// Exploration sharded over MPI processes: one explorer (ranks as threads) a process, each with
// its own seed; results travel to world rank 0 as JSON.
#include "explore/mpi_explore.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>
#include <sstream>

namespace peerconf::harness::explore {

namespace {

std::vector<std::string> gatherStrings(const std::string& mine, int rank, int size) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank != 0) return out;
  for (int r = 0; r < size; ++r) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  }
  return out;
}

}  // namespace

ExploreOptions shardOptions(const ExploreOptions& search, std::uint64_t base, int rank) {
  ExploreOptions options = search;
  options.seed = base + static_cast<std::uint64_t>(rank);
  options.outDir = search.outDir + "/rank-" + std::to_string(rank);
  options.quiet = true;
  options.isolate = false;  // no fork after MPI_Init: each rank explores in its own process
  return options;
}

std::string shardReport(const ExploreResult& result, double seconds) {
  const nlohmann::json j{{"seed", result.seed},
                         {"cases", result.cases},
                         {"passed", result.passed},
                         {"ok", result.ok()},
                         {"seconds", seconds},
                         {"nondeterminism", result.nondeterminism.size()},
                         {"gaveUp", result.gaveUp},
                         {"file", result.failure ? result.failure->file : ""},
                         {"summary", result.failure ? result.failure->summary : ""}};
  return j.dump();
}

int summarizeShards(const std::vector<std::string>& reports, std::uint64_t base,
                    std::ostream& out) {
  const auto size = static_cast<int>(reports.size());
  long long cases = 0;
  int failures = 0;
  double slowest = 0;
  for (int r = 0; r < size; ++r) {
    const auto each = nlohmann::json::parse(reports[static_cast<std::size_t>(r)]);
    cases += each.at("cases").get<long long>();
    slowest = std::max(slowest, each.at("seconds").get<double>());
    if (!each.at("ok").get<bool>()) {
      ++failures;
      out << "rank " << r << " (seed " << each.at("seed").get<std::uint64_t>()
          << "): " << each.at("summary").get<std::string>();
      if (!each.at("file").get<std::string>().empty()) {
        out << "\n  written to " << each.at("file").get<std::string>();
      }
      if (!each.at("gaveUp").get<std::string>().empty()) {
        out << " " << each.at("gaveUp").get<std::string>();
      }
      out << "\n";
    }
  }
  out << "peerconf explore under mpirun: " << size << " explorers (seeds " << base << ".."
      << base + static_cast<std::uint64_t>(size) - 1 << "), " << cases << " cases in " << slowest
      << " s (" << (slowest > 0 ? static_cast<double>(cases) / slowest : 0.0) << " cases/s), "
      << failures << " explorer(s) found a failure\n";
  return failures == 0 ? 0 : 1;
}

int runExploreUnderMpi(const ExploreCommand& command, int* argc, char*** argv, std::ostream& out,
                       std::ostream& err) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 0;
  if (command.exhaustive) {
    if (rank == 0)
      err << "peerconf explore: --exhaustive is not sharded under mpirun; run it alone\n";
    code = 2;
  } else {
    std::uint64_t base = command.search.seed.value_or(std::random_device{}());
    MPI_Bcast(&base, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    const ExploreOptions options = shardOptions(command.search, base, rank);
    std::ostringstream local;
    const auto start = std::chrono::steady_clock::now();
    const ExploreResult result = explore(options, local);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto all = gatherStrings(shardReport(result, seconds), rank, size);
    if (rank == 0) code = summarizeShards(all, base, out);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}

}  // namespace peerconf::harness::explore
