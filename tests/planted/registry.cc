// The table of planted cores. Adding one: its files in this folder (picked up by CMakeLists.txt),
// its header below, and one line in kPlanted; then list it in scenarios/README.md.
#include "planted/registry.h"

#include "planted/accepts_long_exchange.h"
#include "planted/crashes_on_open.h"
#include "planted/escapes_non_error.h"
#include "planted/leaks_on_exchange_timeout.h"
#include "planted/leaks_on_failure.h"
#include "planted/leaks_when_table_fails.h"
#include "planted/planted_runtime.h"
#include "planted/raises_only_on_failing_rank.h"
#include "planted/returns_alone_on_timeout.h"
#include "planted/reuses_first_mapping.h"
#include "planted/seed_exchange.h"
#include "planted/skips_agreement.h"
#include "planted/skips_buffer_match.h"
#include "planted/swaps_peer_addresses.h"
#include "planted/table_one_entry_long.h"
#include "planted/trusts_own_vote.h"
#include "planted/waits_out_deadline.h"
#include "planted/wrapped_defects.h"

namespace peerconf::planted {

namespace {

struct Planted {
  const char* name;  // what `core:` says
  const char* what;  // the defect, and the checker that must catch it
  harness::model::CoreFactory factory;
  harness::model::RunnerDecision runner = {};     // a planted runner in front of the core, if any
  harness::model::RuntimeDecorator runtime = {};  // a planted runtime under the harness, if any
};

}  // namespace

void addPlantedCores(harness::launch::CoreRegistry& registry) {
  using harness::model::coreFactoryOf;
  const Planted kPlanted[] = {
      {"leaks-on-failure", "a failed open forgets the mappings opened before it (C3)",
       coreFactoryOf<LeaksOnFailure>()},
      {"raises-only-on-failing-rank",
       "a rank whose own opens succeeded returns though the agreement failed (C1, C2)",
       coreFactoryOf<RaisesOnlyOnFailingRank>()},
      {"skips-agreement", "never calls tpAgree: only the failing rank raises (C1, C2, C5)",
       coreFactoryOf<SkipsAgreement>()},
      {"trusts-own-vote",
       "a failed agreement call (group error, timeout) reads as the rank's own vote (C5)",
       coreFactoryOf<TrustsOwnVote>()},
      {"swaps-peer-addresses", "the first two peers trade slots in the address table (C4)",
       coreFactoryOf<SwapsPeerAddresses>()},
      {"reuses-first-mapping",
       "a later registration's address table takes the first live buffer's peer pointers (C4, "
       "C8: a data plane per buffer)",
       coreFactoryOf<ReusesFirstMapping>()},
      {"closes-in-destructor",
       "close() releases nothing; the destructor releases everything afterwards (C3)",
       closesInDestructorCore()},
      {"swallows-one-release-failure",
       "close() swallows the first failed release instead of raising a CloseError naming it (C3)",
       swallowsOneReleaseFailureCore()},
      {"permuted-device-table",
       "the device address table holds the host table's slots permuted (C4)",
       permutedDeviceTableCore()},
      {"unwritten-device-table", "the device address table is never copied (C4)",
       unwrittenDeviceTableCore()},
      {"short-device-table",
       "the device address table is copied one entry short: its last slot is never written (C4)",
       shortDeviceTableCore()},
      {"chains-wrong-cause",
       "the failing rank chains an error other than the planted one as the cause (C2)",
       chainsWrongCauseCore()},
      {"chains-wrong-peer",
       "the failing rank chains the failed open's error (operation and code) naming another peer "
       "(C2)",
       chainsWrongPeerCore()},
      {"constructs-after-no",
       "the production core behind a runner that constructs on its own readiness, though the "
       "runner's agreement said another rank was not ready (C5)",
       harness::model::productionCore(), constructsAfterNoRunner()},
      {"names-missing-on-rank0",
       "a group timeout names the ranks that never arrived on rank 0 only; every other rank "
       "rethrows it without them (C2)",
       namesMissingOnRank0Core()},
      {"claims-every-failure",
       "a rank that raises because another rank failed claims the failure as its own (C2)",
       claimsEveryFailureCore()},
      {"own-slot-holds-rank0",
       "on every rank but 0, the own slot of addresses() holds rank 0's mapping instead of the "
       "local buffer (C4)",
       ownSlotHoldsRank0Core()},
      {"closes-mappings-twice",
       "close() unmaps every peer itself, then PeerBuffer::close() unmaps them again (C3)",
       closesMappingsTwiceCore()},
      {"keeps-tables-after-close",
       "close() releases everything but bytes(), addresses() and addressesDevice() still name "
       "the freed buffer, the unmapped peers and the freed table (C3)",
       keepsTablesAfterCloseCore()},
      {"reads-agreement-inverted",
       "reads the agreement's all-reduce inverted: raises \"another\" after every rank agreed "
       "(C1, C5)",
       readsAgreementInvertedCore()},
      {"exits-on-own-failure",
       "a rank whose own open failed ends its process (exit(1), CUDACHECK) instead of raising "
       "(C1, C2, C8)",
       exitsOnOwnFailureCore()},
      {"escapes-non-error",
       "a failed open escapes as a plain std::exception, without agreement or cleanup (C2, C3)",
       escapesNonErrorCore()},
      {"seed-exchange",
       "the seed's exchange: an alloc or get-handle failure raises before the exchange and the "
       "other ranks wait for it until the deadline (C2)",
       coreFactoryOf<SeedExchange>()},
      {"accepts-long-exchange",
       "reads the first size() entries of the exchange: a longer list than the group is accepted "
       "instead of refused (C1, C2)",
       acceptsLongExchangeCore()},
      {"table-one-entry-long",
       "allocates the device address table one entry longer than the group: 8 bytes more device "
       "memory than the contract's (device memory that fits exactly runs out: C1, C5)",
       coreFactoryOf<TableOneEntryLong>()},
      {"crashes-on-open",
       "the last rank's first open reads far past the gathered handles: SIGSEGV (isolation, C8)",
       coreFactoryOf<CrashesOnOpen>()},
      {"waits-out-deadline",
       "after a failed agreement, a rank whose opens succeeded waits out the group's deadline for "
       "a confirmation, then raises the right message (C8 on simulated time)",
       coreFactoryOf<WaitsOutDeadline>()},
      {"leaks-when-table-fails",
       "a rank whose address table fails (alloc or copy) forgets its local buffer (C3)",
       leaksWhenTableFailsCore()},
      {"returns-alone-on-timeout",
       "a rank whose handshake times out (a peer that never came) builds its buffer alone and "
       "returns it instead of raising (C1, C2, C5)",
       returnsAloneOnTimeoutCore()},
      {"leaks-on-exchange-timeout",
       "a rank whose exchange ends in a group error (a peer that never came) raises it without "
       "freeing its local buffer (C3)",
       coreFactoryOf<LeaksOnExchangeTimeout>()},
      {"skips-buffer-match",
       "never compares what the ranks registered: a rank that constructed another buffer (order, "
       "size or label) is paired with its peers' instead of every rank raising (C1, C2)",
       coreFactoryOf<SkipsBufferMatch>()},
      {"runtime-opens-refused-handles",
       "the production core over a runtime that opens a stale or corrupted handle (the mocked "
       "runtime refuses both) onto a block of its own (the judge: fault without effect)",
       harness::model::productionCore(),
       {},
       opensRefusedHandlesRuntime()},
      {"runtime-refuses-reused-handles",
       "the production core over a runtime that refuses a handle whose place no exported buffer "
       "holds (handle-aliased's, which the mocked runtime opens) (the judge: fault without "
       "effect)",
       harness::model::productionCore(),
       {},
       refusesReusedHandlesRuntime()},
  };
  for (const Planted& core : kPlanted) {
    registry.add(core.name, core.what, core.factory, core.runner, core.runtime);
  }
}

harness::launch::CoreRegistry plantedRegistry() {
  harness::launch::CoreRegistry registry;
  addPlantedCores(registry);
  return registry;
}

}  // namespace peerconf::planted
