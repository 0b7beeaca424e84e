// C3 cleanup: every mapping closed once, every buffer freed once, close() idempotent, no leaks.
#pragma once

#include "model/run_record.h"
#include "model/verdict.h"

namespace peerconf::harness::checkers {

// For every rank that is neither dead nor hung (by status or by the scenario), from its ledger
// when ledgerAvailable, else from its seam events:
//  - every successful alloc is freed exactly once, every successful open closed exactly once;
//  - no successful free/close of what is not held (double free, double close);
//  - a failed free/close (ledger error != 0, or a kThrow) is accepted only when the scenario
//    plants a free/close fault on that rank (and, for close, that peer); the pointer then counts
//    as released, since the core does not retry;
//  - close() is judged on what it left at the end of the close phase (the ledger's first
//    ledgerAtClose entries, the events before the "destroy" phase), before the buffer object is
//    destroyed: what close() left held and the destructor then released is a finding ("close()
//    left ... : the destructor closed it"), whatever close() raised;
//  - closeTwiceOk (the second close() on the live object made no seam call);
//  - every close/free fault that fired in close() (its kFault event in the close phase) is named
//    by a CloseError that close() raised (a failure with its operation, peer and code);
//    closeErrors only where such a fault fired.
//  - no deviceLeftovers: the device held nothing the run created once the run and the
//    harness's own releases were over (rank_settle.h).
// With a ledger, a release that threw in the seam events (a fault planted at the seam, before
// the runtime) settles what the ledger still holds for that pointer under the same rules.
// Events: kCall/kReturn/kThrow of allocUncached, allocDevice, openMemHandle, closeMemHandle and
// freeDeviceMem (what = method, peer = the peer). When every return of an alloc/open and every
// call of a free/close carries "ptr=<decimal or 0x hex>" in its detail, releases are matched by
// pointer; otherwise mappings are matched by peer and buffers by count.
// N/A when no rank could be checked (all dead/hung/missing, or neither ledger nor seam events).
model::Verdict checkCleanup(const model::RunRecord& record);

}  // namespace peerconf::harness::checkers
