// LeaksWhenTableFails: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect —
// when building the device address table fails (its allocation or the copy into it), it forgets
// its local buffer, which is then never freed. A negative control for the alloc-table and
// copy-table fault sites: the harness must flag it (tests/checkers/planted_cores_test.cc).
#pragma once

#include <cstddef>
#include <string_view>

#include "group.h"
#include "ipc_backend.h"
#include "model/core_under_test.h"
#include "peer_buffer.h"

namespace peerconf::planted {

class LeaksWhenTableFails : public PeerBuffer {
 public:
  LeaksWhenTableFails(std::size_t nbytes, IpcBackend& backend, Group* group,
                      std::string_view label = {});
};

// The name a scenario file or a report gives this core.
inline constexpr std::string_view kLeaksWhenTableFailsName = "leaks-when-table-fails";

// Constructs each rank's buffer as this core (for the harness's launchers).
harness::model::CoreFactory leaksWhenTableFailsCore();

}  // namespace peerconf::planted
