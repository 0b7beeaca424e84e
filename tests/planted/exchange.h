// The production core's handle exchange, for the planted copies of PeerBuffer whose one defect
// lies after it: alloc and get-handle failures travel as failure records (src/exchange_entry.h),
// exactly as src/peer_buffer.cc does, so that no copy carries the seed's exchange as a second,
// unmarked defect (seed_exchange.h is the copy that does, on purpose).
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

#include "group.h"
#include "ipc_backend.h"

namespace peerconf::planted {

struct Exchanged {
  DevicePtr local = 0;             // the local buffer (allocated by the exchange)
  std::vector<IpcHandle> handles;  // every rank's handle, indexed by rank (own slot unused)
  std::exception_ptr failure;      // a malformed entry or a wrong length: agree on it
};

// Allocates `nbytes`, exports the handle and exchanges it as PeerBuffer's constructor does. A
// failure record (this rank's or a peer's) frees the local buffer and throws HandshakeError
// ("this" with the error chained, or "another"); a group error frees it and is rethrown; a single
// rank rethrows its alloc failure after freeing.
Exchanged exchangeAsProduction(std::size_t nbytes, IpcBackend& backend, Group* group, int rank,
                               int npes);

}  // namespace peerconf::planted
