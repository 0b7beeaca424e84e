// ReturnsAloneOnTimeout: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect: a
// rank whose handshake ends in a group timeout (a peer that never came: a rank that registered
// fewer buffers, or this rank one more) reads it as "no peers" and builds its buffer alone, as a
// group of one, and returns it instead of raising. A negative control: the suite must flag it
// (scenarios/controls/c1-c2-c5-returns-alone-on-timeout.yaml).
#pragma once

#include "model/core_under_test.h"

namespace peerconf::planted {

// core: returns-alone-on-timeout
// Caught by C1 (the rank returns where it must raise a group error), C2 (no error) and C5 (it
// returns a buffer no agreement said yes to).
harness::model::CoreFactory returnsAloneOnTimeoutCore();

}  // namespace peerconf::planted
