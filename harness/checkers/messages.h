// C2 messages: "this" on the failing rank with its backend error attached, "another" elsewhere.
#pragma once

#include <string_view>

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// The messages are the model's (model/scenario.h), which the expectation oracle names too.
using model::kAnotherRankMessage;
using model::kThisRankMessage;

// Per rank, the expectation expect.messages[rank] (else expect.others; ranks with neither, and
// ranks expected to be reported, are not checked):
//   kThis:    HandshakeError, thisRank, message == kThisRankMessage, cause non-empty, and the
//             cause is the planted failure that fired on this rank in the constructor: for a
//             runtime fault (open, alloc...; the first that fired) its operation, peer and code
//             (the fault's `error`); for a handle fault (handle-corrupt/stale), whatever code the
//             runtime answered, but the open of the named peer, and for handle-stale, where the
//             mocked runtime's ledgers show it, a refused open of an allocation the peer freed
//             (a garbage handle names none). No fault fired: a finding too;
//   kAnother: HandshakeError, !thisRank, message == kAnotherRankMessage;
//   kGroup:   GroupTimeout or GroupError;
//   kText:    the message contains the text.
// A rank with an expectation that did not raise fails. N/A when the scenario expects success.
model::Verdict checkMessages(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
