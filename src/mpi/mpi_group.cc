// MpiGroup: non-blocking MPI collectives polled with MPI_Test against a deadline.
#include "mpi/mpi_group.h"

#include <sched.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "deadline.h"
#include "errors.h"

namespace peerconf::mpi {

// One outstanding request and every buffer MPI may still touch until it completes.
struct MpiGroup::Pending {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Comm newComm = MPI_COMM_NULL;
  std::array<std::int64_t, 4> headerIn{};
  std::array<std::int64_t, 4> headerOut{};
  std::vector<std::byte> sendBytes;
  std::vector<std::byte> recvBytes;
};

namespace {

// The tag of the presence messages (class comment in the header); collectives use none.
constexpr int kPresenceTag = 7001;

// Spins this many polls (yielding the core: ranks are often oversubscribed) before napping.
constexpr long kSpinPolls = 4000;
constexpr long kNapNanoseconds = 50'000;

// Between two polls of a wait: yield the core for the first kSpinPolls, then nap.
void pause(long polls) {
  if (polls < kSpinPolls) {
    sched_yield();
  } else {
    const timespec nap{0, kNapNanoseconds};
    nanosleep(&nap, nullptr);
  }
}

// Requests abandoned by a kThrow timeout, kept alive (and reachable, so leak checkers stay quiet)
// because MPI may still write into their buffers if the missing rank ever joins.
std::mutex graveyardMutex;
std::vector<std::unique_ptr<void, void (*)(void*)>>& graveyard() {
  static auto* pending = new std::vector<std::unique_ptr<void, void (*)(void*)>>();
  return *pending;
}

// liveCommunicators(): +1 when an attribute of this keyval is set, -1 when MPI deletes it.
std::atomic<long> liveComms{0};

int countFreed(MPI_Comm /*comm*/, int /*keyval*/, void* /*value*/, void* /*extra*/) {
  liveComms.fetch_sub(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int trackingKeyval() {
  // MPI_COMM_NULL_COPY_FN: a duplicate is not counted through its parent (it is tracked itself).
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &countFreed, &k, nullptr);
    return k;
  }();
  return keyval;
}

std::string mpiErrorText(int code, int* errorClass) {
  *errorClass = code;
  MPI_Error_class(code, errorClass);
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace

long liveCommunicators() noexcept { return liveComms.load(std::memory_order_relaxed); }

void track(MPI_Comm comm) {
  static int marker = 0;
  if (MPI_Comm_set_attr(comm, trackingKeyval(), &marker) == MPI_SUCCESS) {
    liveComms.fetch_add(1, std::memory_order_relaxed);
  }
}

MpiGroup::MpiGroup(MPI_Comm comm, std::chrono::milliseconds deadline, OnTimeout policy)
    : deadline_(deadline), policy_(policy) {
  if (deadline.count() < 0) throw std::invalid_argument("MpiGroup: negative deadline");
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw GroupError("MpiGroup needs MPI initialized and not finalized", Op::kAllReduce, 0);
  }
  // Errors on the caller's communicator follow its own handler (fatal by default).
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  // A blocking dup: every rank creates its groups at the same point, before anything can fail.
  // (Open MPI 4.1's MPI_Comm_idup crashed in ompi_comm_activate_nb once earlier groups had
  // timed out with their collectives left pending, which a harness does on purpose.)
  const int rc = MPI_Comm_dup(comm, &comm_);
  if (rc != MPI_SUCCESS) throwMpiError(rc, Op::kAllReduce, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  track(comm_);
  arrivals_.assign(static_cast<std::size_t>(size_), 0);
}

MpiGroup::~MpiGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // A collective left pending by a timeout may still reference the duplicate: leak it.
  if (comm_ != MPI_COMM_NULL && !finalized && usable() && !abandoned_ && !released_) {
    MPI_Comm_free(&comm_);
  }
}

void MpiGroup::throwIfUnusable(Op op) const {
  if (usable()) return;
  throw GroupError(std::string(opName(op)) + " on rank " + std::to_string(rank_) +
                       ": the group is unusable (" + unusableReason_ + "); drop it",
                   op, rank_);
}

void MpiGroup::throwMpiError(int code, Op op, const std::string& call) {
  int errorClass = 0;
  const std::string text = mpiErrorText(code, &errorClass);
  unusableReason_ = call + " failed: " + text;
  throw GroupError(std::string(opName(op)) + " on rank " + std::to_string(rank_) + ": " + call +
                       " failed: " + text + " (MPI error class " + std::to_string(errorClass) + ")",
                   op, rank_, kNoPeer, errorClass, text);
}

void MpiGroup::arrive() {
  ++calls_;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    const int rc = MPI_Isend(nullptr, 0, MPI_BYTE, peer, kPresenceTag, comm_, &request);
    if (rc != MPI_SUCCESS) throwMpiError(rc, Op::kAllReduce, "MPI_Isend (presence)");
    MPI_Request_free(&request);  // an empty eager send: it completes without us
  }
}

void MpiGroup::receivePresence() {
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    for (;;) {
      int there = 0;
      if (MPI_Iprobe(peer, kPresenceTag, comm_, &there, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
          !there) {
        break;
      }
      MPI_Recv(nullptr, 0, MPI_BYTE, peer, kPresenceTag, comm_, MPI_STATUS_IGNORE);
      ++arrivals_[static_cast<std::size_t>(peer)];
    }
  }
}

std::vector<int> MpiGroup::missing() {
  receivePresence();
  std::vector<int> absent;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_ && arrivals_[static_cast<std::size_t>(peer)] < calls_) absent.push_back(peer);
  }
  return absent;
}

void MpiGroup::settle(Clock::time_point deadline) {
  // Normally there already: a peer sent its message before its part of the collective. Past the
  // deadline the rest are left unread (the group still works: later calls count them in).
  for (long polls = 0; !missing().empty() && Clock::now() < deadline; ++polls) pause(polls);
}

void MpiGroup::onDeadline(Op op, const char* call) {
  std::vector<int> absent = missing();
  if (policy_ == OnTimeout::kAbort) {
    std::string absentText;
    for (int peer : absent) absentText += (absentText.empty() ? "" : ", ") + std::to_string(peer);
    std::fprintf(stderr,
                 "peerconf: MpiGroup rank %d of %d: %s (%s) did not complete within its deadline "
                 "of %lld ms (not arrived: %s); calling MPI_Abort(comm, 3)\n",
                 rank_, size_, std::string(opName(op)).c_str(), call,
                 static_cast<long long>(deadline_.count()),
                 absentText.empty() ? "none seen missing" : ("rank " + absentText).c_str());
    std::fflush(stderr);
    MPI_Abort(comm_ != MPI_COMM_NULL ? comm_ : MPI_COMM_WORLD, 3);
    std::abort();  // MPI_Abort does not return; never continue past a missed deadline
  }
  unusableReason_ = std::string(opName(op)) + " (" + call + ") timed out after " +
                    std::to_string(deadline_.count()) + " ms";
  throw GroupTimeout(op, rank_, deadlineSeconds(deadline_), std::move(absent));
}

void MpiGroup::wait(std::unique_ptr<Pending>& pending, Op op, const char* call,
                    Clock::time_point deadline) {
  for (long polls = 0;; ++polls) {
    int done = 0;
    const int rc = MPI_Test(&pending->request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) throwMpiError(rc, op, "MPI_Test");
    if (done) return;
    if (Clock::now() >= deadline) {
      {
        std::lock_guard lock(graveyardMutex);
        graveyard().emplace_back(pending.release(),
                                 [](void* p) { delete static_cast<Pending*>(p); });
      }
      onDeadline(op, call);
    }
    pause(polls);
  }
}

std::array<std::int64_t, 2> MpiGroup::opening(Op op, std::int64_t value, Clock::time_point until,
                                              const char* call) {
  arrive();
  auto check = std::make_unique<Pending>();
  const std::int64_t code = static_cast<std::int64_t>(op) + 1;
  check->headerIn = {code, -code, value, -value};
  const int rc = MPI_Iallreduce(check->headerIn.data(), check->headerOut.data(), 4, MPI_INT64_T,
                                MPI_MIN, comm_, &check->request);
  if (rc != MPI_SUCCESS) throwMpiError(rc, op, "MPI_Iallreduce");
  wait(check, op, call, until);
  settle(until);  // every rank is in this call: a later part's timeout would name none
  const std::int64_t lowest = check->headerOut[0];
  const std::int64_t highest = -check->headerOut[1];
  if (lowest != highest) {
    // Two ranks, two collectives: the lowest and highest codes are the two calls met here.
    const Op mine = op;
    const Op other = static_cast<Op>((lowest == code ? highest : lowest) - 1);
    throw GroupError(std::string(opName(mine)) + " on rank " + std::to_string(rank_) + " met " +
                         std::string(opName(other)) +
                         " on another rank: the ranks called different collectives at the same "
                         "point (every rank must make the same calls in the same order)",
                     op, rank_);
  }
  return {check->headerOut[2], -check->headerOut[3]};
}

int MpiGroup::allReduceMin(int value) {
  throwIfUnusable(Op::kAllReduce);
  const Clock::time_point until = deadlineFromNow(deadline_);
  return static_cast<int>(opening(Op::kAllReduce, value, until, "MPI_Iallreduce")[0]);
}

std::vector<std::vector<std::byte>> MpiGroup::allGather(std::span<const std::byte> bytes) {
  throwIfUnusable(Op::kAllGather);
  const Clock::time_point until = deadlineFromNow(deadline_);
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw GroupError("all-gather on rank " + std::to_string(rank_) + " of " +
                         std::to_string(bytes.size()) + " bytes exceeds MPI's int count",
                     Op::kAllGather, rank_);
  }
  const auto n = static_cast<std::int64_t>(bytes.size());
  // Every rank must pass the same size: the opening gives the smallest and the largest.
  const auto [smallest, largest] =
      opening(Op::kAllGather, n, until, "MPI_Iallreduce (opening: collective and size check)");
  if (smallest != largest) {
    throw GroupError("all-gather sizes differ across ranks: smallest " + std::to_string(smallest) +
                         " bytes, largest " + std::to_string(largest) + " (rank " +
                         std::to_string(rank_) + " passed " + std::to_string(n) + ")",
                     Op::kAllGather, rank_);
  }

  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size_));
  if (n == 0) return out;
  auto gather = std::make_unique<Pending>();
  gather->sendBytes.assign(bytes.begin(), bytes.end());
  gather->recvBytes.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(size_));
  const int rc = MPI_Iallgather(gather->sendBytes.data(), static_cast<int>(n), MPI_BYTE,
                                gather->recvBytes.data(), static_cast<int>(n), MPI_BYTE, comm_,
                                &gather->request);
  if (rc != MPI_SUCCESS) throwMpiError(rc, Op::kAllGather, "MPI_Iallgather");
  wait(gather, Op::kAllGather, "MPI_Iallgather", until);
  for (int r = 0; r < size_; ++r) {
    const auto* first = gather->recvBytes.data() + static_cast<std::size_t>(r) * n;
    out[static_cast<std::size_t>(r)].assign(first, first + n);
  }
  return out;
}

}  // namespace peerconf::mpi
