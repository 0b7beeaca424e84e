// MpiGroup: the Group seam over an Open MPI communicator, each collective non-blocking and polled
// against a deadline so that no call blocks forever.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "errors.h"
#include "group.h"

namespace peerconf::mpi {

// What a group call does when its deadline passes.
enum class OnTimeout {
  // Print the rank, operation and deadline to stderr, then MPI_Abort(comm, 3): ends every rank.
  kAbort,
  // Throw GroupTimeout. The collective stays pending (MPI forbids cancelling or freeing a
  // collective request), so the group is unusable afterwards: later calls throw GroupError and
  // the caller must drop it. Its communicator and the request's buffers are deliberately leaked.
  kThrow,
};

// A group over a private duplicate of a communicator. MPI must be initialized before construction
// and finalized only after destruction. Presence: on entering a call each rank sends every peer
// an empty message (point to point on the duplicate, tag kPresenceTag), and once the call has
// completed it receives theirs (they were sent before the peers' part of the collective, so they
// are there or about to be). When a call times out, the peers whose message for this call has not
// come are the ranks that did not arrive: GroupTimeout::missing() names them, as the thread
// group does. Collectives never match point-to-point messages, so the two do not mix. Errors from
// MPI (MPI_ERRORS_RETURN is set on the duplicate) throw GroupError carrying the MPI error class as
// code() and its text as codeText(). After an error or a kThrow timeout the group is unusable:
// every later call throws GroupError. A group is used by one thread at a time.
class MpiGroup : public Group {
 public:
  // Collective over `comm`: duplicates it (MPI_Comm_idup, bounded by `deadline` too).
  explicit MpiGroup(MPI_Comm comm, std::chrono::milliseconds deadline = kDefaultGroupDeadline,
                    OnTimeout policy = OnTimeout::kAbort);
  // Frees the duplicate (MPI_Comm_free does not synchronize in Open MPI). An unusable group
  // (timeout or MPI error), an abandoned one, or one whose duplicate was released leaves it:
  // a pending collective may still reference it.
  ~MpiGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Every call opens with one MPI_Iallreduce(MPI_MIN) of four int64 (opening below), of the same
  // shape in both collectives, so that MPI pairs whatever two calls the ranks make: a rank that
  // calls allReduceMin while a peer calls allGather (collectives in another order across ranks,
  // PyTorch 195501) gets a GroupError on every rank of that call, at once, instead of MPI's
  // undefined behaviour of two mismatched collectives (a silent mis-pairing, a truncation on one
  // rank, or a hang). allReduceMin is the opening alone (its value's MIN).
  int allReduceMin(int value) override;
  // The opening, which also checks that every rank passed the same size (GroupError on every rank
  // otherwise), then MPI_Iallgather of the bytes; one deadline covers both.
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override;

  // The private duplicate (for tests and the launcher; do not free it).
  MPI_Comm comm() const noexcept { return comm_; }
  std::chrono::milliseconds deadline() const noexcept { return deadline_; }
  OnTimeout onTimeout() const noexcept { return policy_; }
  // False after a kThrow timeout or an MPI error.
  bool usable() const noexcept { return unusableReason_.empty(); }
  // Keeps the duplicate allocated past this group's life. Call it when any rank of the group may
  // have left a collective unfinished (a timeout, a stopped rank): freeing the communicator lets
  // Open MPI reuse its context id while a peer's late messages for it are still in flight.
  void abandon() noexcept { abandoned_ = true; }
  // Hands the duplicate over to the caller, who decides whether it may be freed (the MPI
  // launcher does, once every rank of the group has said whether a collective is pending on
  // it); the group keeps working with it until destroyed and then leaves it alone.
  MPI_Comm release() noexcept {
    released_ = true;
    return comm_;
  }

 private:
  struct Pending;
  using Clock = std::chrono::steady_clock;

  // Polls `pending`'s request (the MPI call `call`) until it completes, an MPI error, or
  // `deadline`, where the policy applies.
  void wait(std::unique_ptr<Pending>& pending, Op op, const char* call, Clock::time_point deadline);
  // A call's opening (class comment): MIN over (op, -op, value, -value) on every rank, bounded by
  // `until`. Throws GroupError when the ranks called different collectives; returns the MIN and
  // the MAX of `value` over the ranks.
  std::array<std::int64_t, 2> opening(Op op, std::int64_t value, Clock::time_point until,
                                      const char* call);
  [[noreturn]] void onDeadline(Op op, const char* call);
  // Presence (see the class comment): arrive() at a call's start; settle(deadline) once its
  // collectives completed, receiving every peer's message of this call (bounded by the
  // deadline); missing() the peers whose message of this call has not come yet.
  void arrive();
  void settle(Clock::time_point deadline);
  void receivePresence();
  std::vector<int> missing();
  [[noreturn]] void throwMpiError(int code, Op op, const std::string& call);
  void throwIfUnusable(Op op) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds deadline_;
  OnTimeout policy_;
  std::string unusableReason_;
  bool abandoned_ = false;
  bool released_ = false;
  long calls_ = 0;              // the calls this rank has entered
  std::vector<long> arrivals_;  // by peer: the presence messages received from it
};

// Communicators this process created through MpiGroup or track() and has not freed yet: each
// carries an attribute whose delete callback (run by MPI_Comm_free) counts it down, so the count
// follows what MPI itself was told to free. For tests that check nothing leaks over a long run.
long liveCommunicators() noexcept;
// Counts `comm` in liveCommunicators() until it is freed (a communicator made outside MpiGroup,
// e.g. the launcher's MPI_Comm_split). Call once per communicator, never on MPI_COMM_WORLD.
void track(MPI_Comm comm);

}  // namespace peerconf::mpi
