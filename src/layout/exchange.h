// The exchange workload over the reference family's rank (workloads.h has it for any layout).
#pragma once

#include "layout/observer.h"
#include "layout/protocol.h"
#include "layout/workloads.h"

namespace peerconf::layout {

template <PEERCONF_MEM_OPS Mem, class Observer = NullObserver>
struct Exchange : ExchangeOf<Protocol<Mem, Observer>> {
  using Proto = Protocol<Mem, Observer>;
};

}  // namespace peerconf::layout
