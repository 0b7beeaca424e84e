// Planted cores around the production PeerBuffer, each with ONE planted defect in what the
// harness sees of it: close(), the address tables, the chained cause, how the agreement is read,
// how a failing rank ends. Negative controls:
// the harness must flag each (tests/checkers/planted_cores_test.cc). The kebab-case name after
// "core:" is each one's stable name for scenario files.
#pragma once

#include "model/core_under_test.h"

namespace peerconf::planted {

// core: closes-in-destructor
// close() releases nothing; the destructor (PeerBuffer's own) frees everything. Caught by C3:
// "close() left mapping of peer N ... open: the destructor closed it" on every rank.
harness::model::CoreFactory closesInDestructorCore();

// core: swallows-one-release-failure
// close() swallows a CloseError that lists exactly one failed release (two or more still raise).
// Caught by C3 on the rank where a close/free fault fired in close(): "a close fault fired in
// close() (peer N, ...) but close() returned without raising".
harness::model::CoreFactory swallowsOneReleaseFailureCore();

// core: permuted-device-table
// After the handshake, writes the device address table rotated by one slot (slot i holds the
// address of rank i+1), so addressesDevice() disagrees with addresses() in every slot (2+ ranks).
// Caught by C4: "addressesDevice()[i] is ... but addresses()[i] is ...".
harness::model::CoreFactory permutedDeviceTableCore();

// core: unwritten-device-table
// Hands out, as addressesDevice(), a table of the right size that it allocated and never wrote
// (the copy to the device is missing); freed by close(). Caught by C4 on every rank:
// "addressesDevice()[i] is ... but addresses()[i] is ...".
harness::model::CoreFactory unwrittenDeviceTableCore();

// core: short-device-table
// Hands out, as addressesDevice(), a table of the right size whose copy was one entry short: every
// slot but the last holds the host table's address, the last was never written. Caught by C4 on
// every rank: "addressesDevice()[N-1] is ... but addresses()[N-1] is ..." (the last slot only).
harness::model::CoreFactory shortDeviceTableCore();

// core: chains-wrong-cause
// On the failing rank, replaces the chained cause with another failure (an alloc, hipError 2,
// no peer) instead of the backend error that failed. Caught by C2 on that rank: "the chained
// cause is alloc with hipErrorOutOfMemory (2), not the planted failure: the open fault fired ...".
harness::model::CoreFactory chainsWrongCauseCore();

// core: chains-wrong-peer
// On the failing rank, chains the failed call's own error (operation and code) labelled with
// another peer: the next one in rank order after the peer whose open failed (its own rank skipped;
// 3 ranks or more). Caught by C2 on that rank: "the chained cause is open (peer 1) with ..., not
// the planted failure: the open fault fired for peer 2 ...".
harness::model::CoreFactory chainsWrongPeerCore();

// core: constructs-after-no
// The production core behind a planted runner: it calls the runner's agreement (tpAgree) but
// constructs on its own readiness alone, as `tp_agree(ok, group); if ok: PeerBuffer(...)` does, so
// a ready rank constructs though the agreement said another rank was not (out=0). Caught by C5 on
// those ranks: "constructed though the runner's agreement did not return out=1 (passed in=1, saw
// out=0)" (they then wait in the exchange for the rank that never constructs).
harness::model::RunnerDecision constructsAfterNoRunner();

// core: names-missing-on-rank0
// A group timeout keeps the ranks it names (GroupTimeout::missing(), "(rank 3 did not arrive)")
// on rank 0 only: every other rank rethrows a timeout of the same call and deadline without them.
// Caught by C2 on those ranks where the file expects the names: "expected a message containing
// "(rank 3 did not arrive)", got raised GroupTimeout: ... did not complete within its deadline
// ...".
harness::model::CoreFactory namesMissingOnRank0Core();

// core: claims-every-failure
// A rank that raises because another rank failed raises "this" instead (thisRank true, no cause);
// the failing rank is unchanged. Caught by C2 on every other rank: "expected thisRank=false, got
// thisRank=true" (and the message).
harness::model::CoreFactory claimsEveryFailureCore();

// core: own-slot-holds-rank0
// On every rank but 0, addresses() holds rank 0's mapping in the rank's own slot instead of its
// local buffer (rank 0's own slot is right). Caught by C4 on those ranks: "addresses[N] is not
// this rank's local pointer".
harness::model::CoreFactory ownSlotHoldsRank0Core();

// core: closes-mappings-twice
// close() unmaps every peer itself through the backend (errors swallowed), then calls
// PeerBuffer::close(), which unmaps them again. Caught by C3: the second close of each mapping
// fails where no close fault was planted ("... (it was not held: a second release?)"), and where
// a close fault was planted on that peer, "mapping of peer N ... closed twice".
harness::model::CoreFactory closesMappingsTwiceCore();

// core: keeps-tables-after-close
// close() releases everything, but bytes(), addresses() and addressesDevice() keep what the
// handshake built: after close() they still name the freed buffer, the unmapped peers and the
// freed device table. Caught by C3 on every rank: "after close() returned, bytes() still views
// ...", "... addresses() still holds N address(es) ..." and "... addressesDevice() is still 0x...".
harness::model::CoreFactory keepsTablesAfterCloseCore();

// core: reads-agreement-inverted
// Reads the agreement's all-reduce inverted (the core sees 1 - MIN): where every rank mapped every
// peer it raises "another rank failed", having seen out=1. Caught by C5: "raised "another" TP
// rank, so it must have passed in=1 and seen out=0 (passed in=1, saw out=1)".
harness::model::CoreFactory readsAgreementInvertedCore();

// core: exits-on-own-failure
// A rank whose handshake failed on its own account ends its process, exit(1) as vLLM's CUDACHECK
// does, instead of raising (the others raise "another" as usual). Under threads the rank stops as
// a planted exit stops it (RankStopped, reported "exited"), though no exit fault was planted.
// Caught by C1 ("not every rank came back") and C8 ("reported exited, but the scenario expects no
// such rank").
harness::model::CoreFactory exitsOnOwnFailureCore();

}  // namespace peerconf::planted
