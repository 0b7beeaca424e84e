// MPI launcher: one process a rank; results travel to world rank 0 as JSON.
#include "mpi_launcher.h"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "backend_factory.h"
#include "faults/fault_plan.h"
#include "faults/faulty_backend.h"
#include "faults/faulty_group.h"
#include "faults/rank_control.h"
#include "mock_hip/control.h"
#include "mpi/mpi_group.h"
#include "rank_runner.h"
#include "recording.h"
#include "reports/record_json.h"

namespace peerconf::harness {

namespace {

// Under MPI a planted death or hang stops the rank where it stands: it makes no further call
// into the core's group for this scenario (so the others see it silent, as a dead or stopped
// process), reports its last state, and rejoins for the next scenario.
class MpiRankControl : public faults::RankControl {
 public:
  [[noreturn]] void die(int /*rank*/, Point at) override {
    throw RankStopped{RankStatus::kDead, at};
  }
  void hang(int /*rank*/, Point at) override { throw RankStopped{RankStatus::kHung, at}; }
};

std::vector<LedgerRecord> copyLedger(int device) {
  std::vector<LedgerRecord> out;
  for (const auto& e : mock_hip::ledger(device)) {
    LedgerRecord r;
    switch (e.op) {
      case mock_hip::LedgerOp::kAlloc:
        r.op = "alloc";
        break;
      case mock_hip::LedgerOp::kOpen:
        r.op = "open";
        break;
      case mock_hip::LedgerOp::kClose:
        r.op = "close";
        break;
      case mock_hip::LedgerOp::kFree:
        r.op = "free";
        break;
    }
    r.ptr = e.ptr;
    r.size = e.size;
    r.ownerDevice = e.ownerDevice;
    r.generation = e.generation;
    r.error = e.error;
    out.push_back(r);
  }
  return out;
}

int localRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

}  // namespace

bool underMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

// The world group gathers results; its deadline is generous (a scenario's whole bound) and a
// miss aborts the job: then the harness itself is broken, and mpirun must not hang.
struct MpiSession::World {
  std::unique_ptr<mpi::MpiGroup> group;
};

MpiSession::MpiSession(int* argc, char*** argv) : world_(std::make_unique<World>()) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  std::uint64_t job = mock_hip::job();
  MPI_Bcast(&job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  mock_hip::setJob(job);
}

MpiSession::~MpiSession() {
  world_.reset();
  MPI_Finalize();
}

std::optional<RunRecord> MpiSession::run(const Scenario& scenario, std::uint64_t seed,
                                         const LaunchOptions& options) {
  const bool member = rank_ < scenario.ranks;
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank_, &sub);
  const auto start = EventLog::Clock::now();

  if (!world_->group) {
    world_->group = std::make_unique<mpi::MpiGroup>(
        MPI_COMM_WORLD, std::chrono::milliseconds(600000), mpi::OnTimeout::kAbort);
  }

  std::string payload;  // this rank's result as JSON (empty for non-members)
  bool clean = true;    // every collective of this rank completed
  // The groups outlive the rank's run: whether their communicators may be freed is known only
  // once every rank has said whether it finished cleanly.
  std::unique_ptr<mpi::MpiGroup> coreGroup;
  std::unique_ptr<mpi::MpiGroup> harnessGroup;
  if (member) {
    EventLog log(rank_, start);
    MpiRankControl control;
    RankResult result;
    result.rank = rank_;
    std::set<FaultSite> fired;
    const int device = options.runtime == Runtime::kMock ? rank_ : localRank();
    try {
      // The groups first: duplicating `sub` is collective, so no rank may skip it.
      coreGroup = std::make_unique<mpi::MpiGroup>(sub, scenario.deadline, mpi::OnTimeout::kThrow);
      harnessGroup =
          std::make_unique<mpi::MpiGroup>(sub, runBound(scenario), mpi::OnTimeout::kThrow);
      faults::FaultPlan plan(scenario, seed);
      auto faults = plan.forRank(rank_, log);
      auto real = makeIpcBackend(options.runtime, device, rank_);
      faults::FaultyBackend faulty(*real, *faults, control,
                                   options.runtime == Runtime::kMock
                                       ? faults::FaultyBackend::Mode::kRuntime
                                       : faults::FaultyBackend::Mode::kSeam);
      RecordingBackend recorded(faulty, log);
      faults::FaultyGroup faultyGroup(*coreGroup, *faults, control);
      RecordingGroup recordedGroup(faultyGroup, log);
      RankSeams seams{recorded, recordedGroup, *real, harnessGroup.get()};
      result = runRank(
          scenario, rank_, seams, log, [&](Point point) { faults->atPoint(point, control); },
          options.core);
      fired = faults->fired();
    } catch (const std::exception& e) {
      result.status = RankStatus::kMissing;
      result.message = std::string("harness could not run this rank: ") + e.what();
    }
    clean = result.status == RankStatus::kOk && coreGroup && coreGroup->usable() && harnessGroup &&
            harnessGroup->usable();
    if (options.runtime == Runtime::kMock) {
      result.ledger = copyLedger(device);
      result.ledgerAvailable = true;
      mock_hip::resetAll();
    }
    result.events = log.take();
    nlohmann::json j = toJson(result);
    j["fired"] = nlohmann::json::array();
    for (const auto site : fired) j["fired"].push_back(toString(site));
    payload = j.dump();
  }

  // Free this scenario's communicators only when every rank finished every collective;
  // otherwise keep them (see MpiGroup::abandon).
  const bool everyRankClean = world_->group->allReduceMin(clean ? 1 : 0) != 0;
  if (member) {
    if (everyRankClean) {
      coreGroup.reset();
      harnessGroup.reset();
      MPI_Comm_free(&sub);
    } else {
      if (coreGroup) coreGroup->abandon();
      if (harnessGroup) harnessGroup->abandon();
      coreGroup.reset();
      harnessGroup.reset();
    }
  }

  // Gather every member's JSON to every rank (sizes first, then padded payloads).
  std::uint64_t mine = payload.size();
  std::vector<std::byte> sizeBytes(sizeof mine);
  std::memcpy(sizeBytes.data(), &mine, sizeof mine);
  const auto sizes = world_->group->allGather(sizeBytes);
  std::uint64_t longest = 0;
  for (const auto& s : sizes) {
    std::uint64_t v = 0;
    std::memcpy(&v, s.data(), sizeof v);
    longest = std::max(longest, v);
  }
  std::vector<std::byte> padded(longest);
  std::memcpy(padded.data(), payload.data(), payload.size());
  const auto all = world_->group->allGather(padded);
  if (rank_ != 0) return std::nullopt;

  RunRecord record;
  record.scenario = scenario;
  record.launcher = "mpi";
  record.runtime = toString(options.runtime);
  record.seed = seed;
  std::set<std::string> fired;
  for (int r = 0; r < scenario.ranks; ++r) {
    std::uint64_t n = 0;
    std::memcpy(&n, sizes[static_cast<std::size_t>(r)].data(), sizeof n);
    const auto& bytes = all[static_cast<std::size_t>(r)];
    const std::string text(reinterpret_cast<const char*>(bytes.data()), n);
    try {
      const auto j = nlohmann::json::parse(text);
      record.ranks.push_back(rankResultFromJson(j));
      for (const auto& site : j.at("fired")) fired.insert(site.get<std::string>());
    } catch (const std::exception& e) {
      RankResult missing;
      missing.rank = r;
      missing.status = RankStatus::kMissing;
      record.ranks.push_back(missing);
      record.harnessErrors.push_back("rank " + std::to_string(r) +
                                     " sent an unreadable result: " + e.what());
    }
  }
  record.firedSites.assign(fired.begin(), fired.end());
  for (const auto& r : record.ranks) record.wallNs = std::max(record.wallNs, r.endNs);
  return record;
}

int MpiSession::agreeExitCode(int code) {
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
}

}  // namespace peerconf::harness
