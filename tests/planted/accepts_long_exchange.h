// AcceptsLongExchange: the production PeerBuffer (src/peer_buffer.h) with ONE planted defect: it
// reads the first size() entries of whatever the exchange returns, so a list longer than the group
// (an exchange-long fault: a transport that returns one more entry) is accepted instead of refused.
// A negative control: the suite must flag it (scenarios/controls/c1-c2-accepts-long-exchange.yaml).
#pragma once

#include "model/core_under_test.h"

namespace peerconf::planted {

// core: accepts-long-exchange
// Caught by C1 and C2: every rank returns a buffer where the one that received the longer
// exchange must raise "this" and the others "another".
harness::model::CoreFactory acceptsLongExchangeCore();

}  // namespace peerconf::planted
