// SkipsBufferMatch: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect — the
// pre-fix core of PyTorch PR 198024: it never compares what the ranks registered, so a rank that
// constructed another buffer (another order, size or label) is silently paired with its peers'
// buffers instead of every rank raising BufferMismatchError. A negative control: the suite must
// flag it (scenarios/upstream/pytorch-198024-buffer-order-prefix.yaml).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class SkipsBufferMatch : public PeerBuffer {
 public:
  SkipsBufferMatch(std::size_t nbytes, IpcBackend& backend, Group* group,
                   std::string_view label = {});
};

}  // namespace peerconf::planted
