// MPI launcher: one process a rank; results travel to world rank 0 as JSON.
#include "mpirun/mpi_launcher.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "backend_factory.h"
#include "faults/fault_plan.h"
#include "faults/rank_control.h"
#include "launch/rank_launch.h"
#include "launch/rank_runner.h"
#include "launch/rank_settle.h"
#include "layout/host_mem_ops.h"
#include "mock_hip/control.h"
#include "model/record_json.h"
#include "mpi/mpi_group.h"
#include "mpirun/mpirun_child.h"
#include "mpirun/rounds.h"
#include "mpirun/signal_rank.h"

namespace peerconf::harness::mpirun {

using launch::LaunchOptions;
using launch::launchRank;
using launch::missingRank;
using launch::newRecord;
using launch::plansStops;
using launch::RankGroups;
using launch::RankLaunch;
using launch::RankOutcome;
using launch::rankPayload;
using launch::RankSettle;
using launch::RankStopped;
using launch::readRankPayload;
using launch::Runtime;
using model::dumpJson;
using model::EventLog;
using model::faultPlan;
using model::plannedBound;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Scenario;

namespace {

// Under MPI a planted death or hang stops the rank where it stands: it makes no further call
// into the core's group for this scenario (so the others see it silent, as a dead or stopped
// process), reports its last state, and rejoins for the next scenario. With --kill-mode signal
// the process is SIGKILLed, SIGSTOPped or _exit()s for real (signal_rank.h).
class MpiRankControl : public faults::RankControl {
 public:
  explicit MpiRankControl(SignalRank* signal = nullptr) : signal_(signal) {}
  // Without signals, a stopped rank waits at `done` until every other rank has finished the
  // scenario, then unwinds: unwinding at once would run the core's release path (freeing its
  // buffer while peers may still be mapping it), which a dead process never does and which
  // makes the run's events depend on timing.
  void setDone(mpi::MpiGroup* done) { done_ = done; }
  // Called by ranks that did not stop, once their run is over.
  void finish() { arrive(); }

  [[noreturn]] void die(int /*rank*/, Point at) override {
    if (signal_ != nullptr) signal_->die(at);
    arrive();
    throw RankStopped{RankStatus::kDead, at};
  }
  void hang(int /*rank*/, Point at) override {
    if (signal_ != nullptr) return signal_->hang(at);
    arrive();
    throw RankStopped{RankStatus::kHung, at};
  }
  // --kill-mode signal: a real _exit(code). One shared mpirun: the process serves the next
  // scenarios, so the rank stops as a death does and is reported exited.
  [[noreturn]] void exit(int /*rank*/, Point at, int code) override {
    if (signal_ != nullptr) signal_->exit(at, code);
    arrive();
    throw RankStopped{RankStatus::kExited, at, code};
  }

 private:
  void arrive() {
    if (done_ == nullptr || arrived_) return;
    arrived_ = true;
    try {
      done_->allReduceMin(1);
    } catch (const std::exception&) {
      // Bounded by the group's deadline; the checkers judge the rest.
    }
  }

  SignalRank* signal_;
  mpi::MpiGroup* done_ = nullptr;
  bool arrived_ = false;
};

int localRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

// Plans the rounds (the same on every rank): first fit of the pending jobs, in list order, onto
// the free ranks of each node (with `nodeGpus`, one TP group a GPU of a node whose ranks share
// GPUs). Jobs that fit no node: the caller filtered those out.
RoundPlan planRounds(const std::vector<MpiJob>& jobs,
                     const std::vector<std::vector<int>>& nodeMembers,
                     const std::vector<int>& nodeGpus) {
  std::vector<int> need;
  need.reserve(jobs.size());
  for (const auto& job : jobs) need.push_back(job.scenario->ranks);
  std::vector<int> nodeSizes;
  for (const auto& members : nodeMembers) nodeSizes.push_back(static_cast<int>(members.size()));
  return packRounds(need, nodeSizes, nodeGpus);
}

// The slot of `round` that local rank `localRank` of `node` runs in, or null when it sits out.
const RoundSlot* slotOf(const std::vector<RoundSlot>& round, const std::vector<MpiJob>& jobs,
                        int node, int localRank) {
  const RoundSlot* mine = nullptr;
  for (const auto& slot : round) {
    const int ranks = jobs[slot.job].scenario->ranks;
    if (slot.node == node && localRank >= slot.offset && localRank < slot.offset + ranks) {
      mine = &slot;
    }
  }
  return mine;
}

// What every world rank tells every other after a round: the size of its result, its job (-1:
// none), its rank in that job, whether no collective may be pending on the job's communicators
// there, and the signal that interrupted the job as this rank knows it (0: none; jobInterrupt).
struct MemberHeader {
  std::uint64_t bytes;
  std::int64_t job;
  std::int64_t groupRank;
  std::int64_t quiet;
  std::int64_t interrupt;
};

MemberHeader headerOf(const std::vector<std::vector<std::byte>>& headers, int w) {
  MemberHeader h{};
  std::memcpy(&h, headers[static_cast<std::size_t>(w)].data(), sizeof h);
  return h;
}

// The interrupt every rank agrees on from a round's headers: the largest any rank saw, 0 if none.
int agreedInterrupt(const std::vector<std::vector<std::byte>>& headers, int size) {
  std::int64_t signal = 0;
  for (int w = 0; w < size; ++w) signal = std::max(signal, headerOf(headers, w).interrupt);
  return static_cast<int>(signal);
}

// Whether every member of `job` reported `quiet`.
bool everyMemberQuiet(const std::vector<std::vector<std::byte>>& headers, int size,
                      std::size_t job) {
  bool quiet = true;
  for (int w = 0; w < size; ++w) {
    const MemberHeader h = headerOf(headers, w);
    if (h.job == static_cast<std::int64_t>(job) && h.quiet == 0) quiet = false;
  }
  return quiet;
}

// Every world rank's result, gathered on world rank 0 (empty elsewhere), and where each begins.
struct Payloads {
  std::string gathered;
  std::vector<int> offsets;
};

// The payloads go to world rank 0 only: every rank needs the headers, only rank 0 the results (an
// all-gather of every payload grew with the square of the ranks). Every rank has just passed the
// deadline-bounded calls of the round, so this gather cannot wait on a rank that left.
Payloads gatherPayloads(const std::string& payload,
                        const std::vector<std::vector<std::byte>>& headers, int size, int rank) {
  std::vector<int> lengths(static_cast<std::size_t>(size));
  Payloads out;
  out.offsets.resize(static_cast<std::size_t>(size));
  int total = 0;
  for (int w = 0; w < size; ++w) {
    const MemberHeader v = headerOf(headers, w);
    lengths[static_cast<std::size_t>(w)] = static_cast<int>(v.bytes);
    out.offsets[static_cast<std::size_t>(w)] = total;
    total += static_cast<int>(v.bytes);
  }
  out.gathered.assign(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, out.gathered.data(),
              lengths.data(), out.offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

// Job `index`'s record from its members' payloads (on world rank 0): a rank that sent nothing
// readable stays missing, and says so in the harness errors.
RunRecord collectRecord(const std::vector<MpiJob>& jobs, std::size_t index,
                        const std::vector<std::vector<std::byte>>& headers,
                        const Payloads& payloads, int size, const LaunchOptions& options) {
  const Scenario& scenario = *jobs[index].scenario;
  RunRecord record = newRecord(scenario, jobs[index].seed, "mpi", options.runtime);
  for (int r = 0; r < scenario.ranks; ++r) record.ranks.push_back(missingRank(r));
  std::set<std::string> fired;
  for (int w = 0; w < size; ++w) {
    const MemberHeader h = headerOf(headers, w);
    if (h.job != static_cast<std::int64_t>(index)) continue;
    const std::string text = payloads.gathered.substr(
        static_cast<std::size_t>(payloads.offsets[static_cast<std::size_t>(w)]), h.bytes);
    try {
      RankResult result = readRankPayload(text, fired);
      if (h.groupRank >= 0 && h.groupRank < scenario.ranks) {
        record.ranks[static_cast<std::size_t>(h.groupRank)] = std::move(result);
      }
    } catch (const std::exception& e) {
      record.harnessErrors.push_back("world rank " + std::to_string(w) +
                                     " sent an unreadable result: " + e.what());
    }
  }
  record.firedSites.assign(fired.begin(), fired.end());
  for (const auto& r : record.ranks) record.wallNs = std::max(record.wallNs, r.endNs);
  return record;
}

}  // namespace

bool underMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

// The world group gathers results; its deadline is generous (a round's whole bound) and a
// miss aborts the job: then the harness itself is broken, and mpirun must not hang.
struct MpiSession::World {
  std::unique_ptr<mpi::MpiGroup> group;
};

MpiSession::MpiSession(int* argc, char*** argv, int simulatedNodes)
    : world_(std::make_unique<World>()) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  std::uint64_t job = mock_hip::job();
  MPI_Bcast(&job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  mock_hip::setJob(job);

  // Nodes: each rank learns the lowest world rank of its node, then everyone's.
  MPI_Comm node = MPI_COMM_NULL;
  if (simulatedNodes > 0) {
    const int k = std::min(simulatedNodes, size_);
    const int color = static_cast<int>(static_cast<long long>(rank_) * k / size_);
    MPI_Comm_split(MPI_COMM_WORLD, color, rank_, &node);
  } else {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  }
  int leader = rank_;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(static_cast<std::size_t>(size_));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::map<int, std::vector<int>> byLeader;
  for (int r = 0; r < size_; ++r) byLeader[leaders[static_cast<std::size_t>(r)]].push_back(r);
  for (auto& [first, members] : byLeader) {
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members[i] == rank_) {
        node_ = static_cast<int>(nodeMembers_.size());
        localRank_ = static_cast<int>(i);
      }
    }
    nodeMembers_.push_back(std::move(members));
  }
  world_->group = std::make_unique<mpi::MpiGroup>(MPI_COMM_WORLD, std::chrono::milliseconds(600000),
                                                  mpi::OnTimeout::kAbort);
}

MpiSession::~MpiSession() {
  world_.reset();
  MPI_Finalize();
}

int MpiSession::largestNode() const noexcept {
  std::size_t most = 0;
  for (const auto& members : nodeMembers_) most = std::max(most, members.size());
  return static_cast<int>(most);
}

std::string MpiSession::runMember(const Scenario& scenario, std::uint64_t seed, int groupRank,
                                  MPI_Comm sub, const LaunchOptions& options,
                                  std::vector<MPI_Comm>& comms, bool& quiet) {
  const auto start = EventLog::Clock::now();
  std::unique_ptr<SignalRank> signal;
  if (!options.signalRunDir.empty()) {
    signal = std::make_unique<SignalRank>(options.signalRunDir, options.runIndex, groupRank, start);
  }
  EventLog log(groupRank, start);
  if (signal) signal->attach(log);
  MpiRankControl control(signal.get());
  std::unique_ptr<mpi::MpiGroup> coreGroup;
  std::unique_ptr<mpi::MpiGroup> harnessGroup;
  std::unique_ptr<mpi::MpiGroup> doneGroup;  // where stopped ranks wait for the others
  const faults::FaultPlan plan = faultPlan(scenario, seed);
  RankLaunch launch;
  launch.scenario = &scenario;
  launch.plan = &plan;
  launch.rank = groupRank;
  // Under the mock the device is the scenario rank (fault hooks, ledgers and "own handle"
  // refusals key on it), on the mocked GPU placeOnGpus gave this rank when ranks share them (its
  // free memory counts this process's allocations only: each rank's check judges its own); on
  // GPUs, the node's GPU placeOnGpus gave this rank.
  launch.device = options.runtime == Runtime::kMock ? groupRank : gpuDevice_;
  if (options.runtime == Runtime::kMock && gpusInUse_ > 0) {
    mock_hip::placeOnGpu(groupRank, gpuDevice_);
  }
  launch.options = &options;
  launch.control = &control;
  launch.groups = [&] {
    // Duplicating `sub` is collective, so no rank may skip it: the groups come first.
    coreGroup = std::make_unique<mpi::MpiGroup>(sub, scenario.deadline, mpi::OnTimeout::kThrow);
    harnessGroup =
        std::make_unique<mpi::MpiGroup>(sub, plannedBound(scenario), mpi::OnTimeout::kThrow);
    if (!signal && plansStops(scenario)) {
      doneGroup =
          std::make_unique<mpi::MpiGroup>(sub, plannedBound(scenario), mpi::OnTimeout::kThrow);
      control.setDone(doneGroup.get());
    }
    return RankGroups{coreGroup.get(), harnessGroup.get()};
  };
  launch.afterRun = [&] { control.finish(); };
  // Ranks sharing a GPU: every baseline is read before any rank of the group allocates.
  const int localRanks = static_cast<int>(nodeMembers_[static_cast<std::size_t>(node_)].size());
  if (options.runtime == Runtime::kGpu && localRanks > gpusInUse_) {
    launch.afterBaseline = [&] { harnessGroup->allReduceMin(1); };
  }
  // Once every member has released (a peer's unclosed mapping keeps this rank's freed buffer alive
  // on a GPU), the device check. A member stopped for real never arrives: no barrier, and no GPU
  // memory judgement, then.
  const bool stoppedForReal = signal && plansStops(scenario);
  launch.beforeCheck = [&](RankResult& result) {
    if (!stoppedForReal && harnessGroup && harnessGroup->usable()) {
      try {
        harnessGroup->allReduceMin(1);
      } catch (const std::exception& e) {
        result.harnessReleases.push_back(std::string("barrier before the device check: ") +
                                         e.what());
      }
    }
    return !stoppedForReal;
  };
  // The data plane's peers are other processes: its waits sleep, they cannot block on the word.
  layout::HostMemOps::peersInOtherProcesses(true);
  const RankOutcome outcome = launchRank(launch, log);
  // Whether a collective this rank started on the scenario's groups may still be pending: a
  // group stays usable only while each of its calls here completed (MpiGroup::wait returns on
  // completion, or marks the group unusable at a timeout or an MPI error). The raise of a rank,
  // its planted death or hang (which stops before a call, never inside one) and the core's own
  // errors leave the groups usable. The caller frees the communicators only when every rank of
  // the scenario says so (runAll).
  quiet = true;
  for (auto* group : {coreGroup.get(), harnessGroup.get(), doneGroup.get()}) {
    if (group == nullptr) continue;
    quiet = quiet && group->usable();
    comms.push_back(group->release());
  }
  if (options.runtime == Runtime::kMock) mock_hip::resetAll();
  const nlohmann::json j = rankPayload(outcome);
  if (signal) signal->writeResult(dumpJson(j));
  return j.dump();
}

int MpiSession::gpusInUse(int localRanks) const {
  return ranksPerGpu_ > 0 ? (localRanks + ranksPerGpu_ - 1) / ranksPerGpu_
                          : std::min(localRanks, visibleGpus_);
}

void MpiSession::placeOnGpus(const LaunchOptions& options) {
  const int local = static_cast<int>(nodeMembers_[static_cast<std::size_t>(node_)].size());
  if (options.runtime == Runtime::kMock) {
    // Mocked GPUs: as many as --ranks-per-gpu needs, with no context to create.
    ranksPerGpu_ = options.ranksPerGpu;
    gpusInUse_ = std::max(gpusInUse(local), 1);
    gpuDevice_ = localRank_ % gpusInUse_;
    return;
  }
  const int visible = deviceCount(Runtime::kGpu);
  ranksPerGpu_ = options.ranksPerGpu;
  // The same on every rank (the round plan depends on it): the first rank's visible count.
  visibleGpus_ = visible;
  MPI_Bcast(&visibleGpus_, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int inUse = gpusInUse(local);
  int refused = visible > 0 && inUse <= visible ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &refused, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (refused != 0) {
    throw std::runtime_error(
        "--runtime gpu: " + std::to_string(local) + " ranks on node " + std::to_string(node_) +
        (options.ranksPerGpu > 0 ? " at --ranks-per-gpu " + std::to_string(options.ranksPerGpu) +
                                       " need " + std::to_string(inUse) + " GPUs"
                                 : std::string(" need a GPU")) +
        "; this process sees " + std::to_string(visible) +
        " (or another node refused: every node must have the GPUs its ranks need)");
  }
  inUse = std::max(inUse, 1);
  gpusInUse_ = inUse;
  gpuDevice_ = localRank_ % inUse;
  const int sharing = (local + inUse - 1) / inUse;
  std::fprintf(stderr,
               "peerconf: world rank %d (node %d, local rank %d of %d) on GPU %d of %d in use "
               "(%d visible; up to %d ranks a GPU)\n",
               rank_, node_, localRank_, local, gpuDevice_, inUse, visible, sharing);
  // The first use of a GPU in a process creates its context (about 0.5 GB on an H200) and the
  // runtime's pools: done here, by every process, before any scenario's baseline, so that a
  // process starting on a shared GPU is never charged to another's run.
  {
    auto backend = makeIpcBackend(Runtime::kGpu, gpuDevice_, rank_);
    const RankSettle warm(Runtime::kGpu, gpuDevice_, *backend);
  }
  world_->group->allReduceMin(1);
}

int MpiSession::runAll(const std::vector<MpiJob>& jobs, const LaunchOptions& options,
                       const std::function<void(std::size_t, RunRecord)>& onRecord) {
  // Mocked GPUs are placed only when ranks share them (--ranks-per-gpu).
  const bool gpus = options.runtime == Runtime::kGpu || options.ranksPerGpu > 0;
  if (gpus && gpusInUse_ == 0) placeOnGpus(options);
  // Ranks sharing GPUs: one TP group a GPU a round, so that a device's free memory moves only
  // with the group judged on it (the check reads the whole device).
  std::vector<int> nodeGpus;
  if (gpus) {
    for (const auto& members : nodeMembers_) {
      const int size = static_cast<int>(members.size());
      const int gpus = std::max(gpusInUse(size), 1);
      nodeGpus.push_back(size > gpus ? gpus : 0);
    }
  }
  const RoundPlan plan = planRounds(jobs, nodeMembers_, nodeGpus);
  const auto& rounds = plan.rounds;

  const bool signal = !options.signalRunDir.empty();
  if (signal) announceSignalRank(options.signalRunDir, rank_);
  // An interrupt before the first round (while mpirun started the ranks): nothing runs.
  int interrupt = jobInterrupt();
  MPI_Allreduce(MPI_IN_PLACE, &interrupt, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (const auto& round : rounds) {
    if (interrupt != 0) break;
    const RoundSlot* mine = slotOf(round, jobs, node_, localRank_);
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, mine != nullptr ? static_cast<int>(mine->job) : MPI_UNDEFINED,
                   rank_, &sub);
    if (sub != MPI_COMM_NULL) mpi::track(sub);
    std::string payload;
    std::vector<MPI_Comm> comms;  // the scenario's duplicates of `sub`, freed below or kept
    bool quiet = true;
    int groupRank = -1;
    if (mine != nullptr) {
      MPI_Comm_rank(sub, &groupRank);
      const MpiJob& job = jobs[mine->job];
      payload = runMember(*job.scenario, job.seed, groupRank, sub, options, comms, quiet);
      // Every operation on `sub` itself (the split, and the blocking MPI_Comm_dup of each group,
      // which every member completes before anything of the scenario can fail) has completed
      // on this rank: no message for its context can still arrive, so it is freed whatever
      // happened on the duplicates.
      MPI_Comm_free(&sub);
    }
    // Supervised, with a rank killed or stopped for real: the world cannot meet again.
    if (signal && std::any_of(round.begin(), round.end(), [&](const RoundSlot& slot) {
          return plansStops(*jobs[slot.job].scenario);
        })) {
      awaitSupervisor();
    }

    // Gather every member's header to every rank (then the payloads to rank 0).
    const MemberHeader header{payload.size(),
                              mine != nullptr ? static_cast<std::int64_t>(mine->job) : -1,
                              groupRank, quiet ? 1 : 0, jobInterrupt()};
    std::vector<std::byte> headerBytes(sizeof header);
    std::memcpy(headerBytes.data(), &header, sizeof header);
    const auto headers = world_->group->allGather(headerBytes);
    // The scenario's communicators are freed when no collective can be pending on them: every
    // member reported `quiet` through this gather on the world, a separate communicator that
    // stays healthy (a miss there aborts the job). Completed collectives leave no message in
    // flight for their context (each rank received all its part before completing), so MPI may
    // reuse the context id. Where any member timed out or saw an MPI error, a collective may stay
    // pending for good: MPI forbids cancelling it, and freeing the communicator would let Open
    // MPI hand its context id to a later communicator while a peer's late messages for the old
    // one may still arrive and be matched there. Those are kept (leaked) deliberately; they cost
    // one context id each, and only scenarios that time out make them.
    if (mine != nullptr && everyMemberQuiet(headers, size_, mine->job)) {
      for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
    }
    const Payloads payloads = gatherPayloads(payload, headers, size_, rank_);
    // Every rank sees every header: all stop after this round, or none does.
    interrupt = agreedInterrupt(headers, size_);
    if (rank_ != 0) continue;

    for (const auto& slot : round) {
      onRecord(slot.job, collectRecord(jobs, slot.job, headers, payloads, size_, options));
    }
  }
  if (interrupt != 0 && rank_ == 0) removeStopFile();
  return interrupt;
}

int MpiSession::agreeExitCode(int code) {
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
}

}  // namespace peerconf::harness::mpirun
