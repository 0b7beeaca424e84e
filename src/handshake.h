// Handshake: PeerBuffer's constructor as its phases (allocate and export, exchange, decode, match
// the registrations, map the peers and build the table, agree), each a virtual step, so that a
// planted core (tests/planted) replaces one step and runs every other exactly as production does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf {

class Handshake {
 public:
  Handshake() = default;
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;
  // Runs once a buffer: a virtual call per phase costs nothing that matters.
  virtual ~Handshake() = default;

  // Builds `buffer` collectively over `group`, as PeerBuffer's constructor says (peer_buffer.h):
  // returns once every rank mapped every peer; otherwise releases what `buffer` holds and throws.
  // Runs once, on a buffer whose backend, rank and size are set and that holds nothing yet.
  void run(PeerBuffer& buffer, std::size_t nbytes, Group* group);

 protected:
  // The phases, in the order run() calls them. Each keeps a failure of this rank in failure()
  // where every rank must still reach the next collective step, and raises (after releasing)
  // where every rank raises together.

  // Allocates the local buffer and, with peers to tell, exports its handle.
  virtual void allocateAndExport(std::size_t nbytes);
  // Gathers every rank's handle, or failure record (exchange_entry.h), in rank order.
  virtual void exchange();
  // Turns the gathered entries into every peer's handle.
  virtual void decode();
  // Raises BufferMismatchError (after releasing) unless every rank registered rank 0's size and
  // label: every rank holds the same entries, so every rank raises it together.
  virtual void match();
  // Opens every peer and builds the device table, keeping a failure for the agreement.
  virtual void mapPeers();
  // Opens every peer in rank order (stopping at the first failure) into the address table.
  virtual void openPeers();
  // Copies the address table to the device.
  virtual void buildTable();
  // Whether every rank mapped every peer, `mapped` being this rank's part.
  virtual bool agree(bool mapped);

  // The group the handshake runs over (null for a single rank without one).
  Group* group() const noexcept { return group_; }
  // This rank's failure so far (null if none).
  const std::exception_ptr& failure() const noexcept { return failure_; }
  int rank() const noexcept { return buffer_->rank_; }
  int size() const noexcept { return buffer_->npes_; }
  const std::string& label() const noexcept { return buffer_->label_; }
  IpcBackend& backend() const noexcept { return buffer_->backend_; }
  // What the buffer holds, as release() gives it back.
  DevicePtr& local() noexcept { return buffer_->local_; }
  DeviceBytes& bytes() noexcept { return buffer_->bytes_; }
  std::vector<std::int64_t>& addresses() noexcept { return buffer_->addresses_; }
  DevicePtr& addressesDevice() noexcept { return buffer_->addressesDevice_; }
  std::vector<std::pair<int, DevicePtr>>& opened() noexcept { return buffer_->opened_; }
  // Releases everything the buffer holds and returns the failures as text.
  std::vector<std::string> release() noexcept { return buffer_->release(); }

 private:
  // Whether there are peers to exchange handles with.
  bool exchanging() const noexcept { return group_ != nullptr && size() > 1; }
  // Raises unless every rank mapped every peer (a single rank: unless it did).
  void settle();
  // Attaches this rank's own failure (if any) to a group error that follows it.
  void keepCause(GroupError& error) const noexcept;

  PeerBuffer* buffer_ = nullptr;
  Group* group_ = nullptr;
  std::exception_ptr failure_;
  Op failedOp_ = Op::kAlloc;  // what allocateAndExport was doing when it failed
  std::size_t nbytes_ = 0;    // as asked for: what this rank registers
  IpcHandle own_;
  std::vector<std::vector<std::byte>> entries_;  // as gathered, indexed by rank
  std::vector<IpcHandle> handles_;               // indexed by rank (own slot unused)
};

}  // namespace peerconf
