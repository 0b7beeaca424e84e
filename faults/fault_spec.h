// The fault vocabulary: the sites a fault can name, the points of a rank's run, one fault as the
// decorators need it, and the hipError_t names scenarios and reports use. The one home of these
// names: the harness's scenario model uses these types as they are (harness/model/scenario.h).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "name_table.h"

namespace peerconf::faults {

// A fault site (DESIGN.md §5). Per-site traits (keys, timeline, whom it stops) are the harness's:
// harness/model/fault_sites.h.
enum class Site {
  kAlloc,          // allocUncached fails with `error`
  kGetHandle,      // getMemHandle fails with `error`
  kOpen,           // openMemHandle(rank -> peer) fails with `error`
  kClose,          // closeMemHandle(rank -> peer) fails with `error`
  kFree,           // freeDeviceMem fails with `error`
  kAllocTable,     // allocDevice of the device address table fails with `error`
  kCopyTable,      // copyToDevice of the address table into it fails with `error`
  kHandleCorrupt,  // the handle of `peer`, as received by `rank`, has flipped bytes
  kHandleStale,    // `rank` receives, for `peer`, a handle of an earlier (freed) buffer
  // `rank` receives, for `peer`, the handle of a freed block of that peer whose place another of
  // its live allocations took (a reclaimed block reused: ROCm/aiter PR 3838): the runtime opens
  // it, onto that allocation; the core cannot see it, the harness's mapping check must (C4).
  kHandleAliased,
  kGroupFail,  // a group call (`at`: exchange or agree) fails on `rank`
  kDelay,      // `rank` is late by `delay` at `at`
  kDeath,      // `rank` dies at `at` (thread mode: its thread stops; MPI: SIGKILL)
  kHang,       // `rank` hangs at `at` (thread mode: blocks; MPI: SIGSTOP)
  kNotReady,   // `rank`'s setup failed before the constructor: its runner is not ready
  kExit,       // `rank`'s process ends at `at` with exit status `code` (vLLM's CUDACHECK ->
               // exit(); thread mode and one shared mpirun: it stops and is reported exited)
  // What `rank` constructs differs from the scenario's `buffers:` (PyTorch PR 198024): the rank
  // runner constructs another buffer than its peers in the same place, and the core must refuse
  // the pairing on every rank together (BufferMismatchError) instead of mapping the wrong buffer.
  kBufferOrder,  // `rank` constructs the scenario's buffers in reverse order
  kBufferSize,   // `rank` constructs buffer `buffer` with `size` bytes instead of the listed size
  kBufferLabel,  // `rank` constructs buffer `buffer` with `label` instead of the listed label
  // `rank` registers `count` buffers where the list has N (count != N): the first `count` of the
  // list (count < N), or the N listed and count-N copies of the last (count > N). The ranks that
  // construct a buffer a peer never does wait for it in that exchange until the group's deadline.
  kBufferCount,
  // The exchange entry of `peer`, as received by `rank`, is damaged in `part` (not only its handle
  // bytes): the decoder's own defences must refuse it (src/exchange_entry.h).
  kEntryCorrupt,
  // One seam call (`call`) of `rank` throws an exception that is not a peerconf::Error (a
  // backend's or an allocator's own, std::bad_alloc's kind): the core must agree on it and
  // release everything as it does for its own errors.
  kForeignException,
  // The exchange as `rank` receives it holds one entry more than the group has ranks (a
  // transport or a collective that returns a longer list: README, "exchange of the wrong
  // length"): the core must refuse it as this rank's failure (a GroupError), not read the first
  // size() entries and go on.
  kExchangeLong,
  // `rank` makes its group calls in another order than its peers (PyTorch 195501): at `at:
  // exchange` it enters the agreement (the all-reduce) while they are in the exchange, at `at:
  // agree` it enters another exchange (an all-gather, as a next buffer's construction would)
  // while they are in the agreement. The group must end the mismatch on every rank (a GroupError,
  // or a GroupTimeout at its deadline), never pair the two calls.
  kCollectiveOrder,
  // `rank` receives, for `peer`, a handle it still maps: the one that peer exported for the
  // previous buffer of `buffers:` (alive, `buffers_alive: together`), which the rank opened in
  // that construction. The runtime opens it again, onto that mapping (runtime_table.yaml
  // open-twice: the same address, one close an open); the core cannot tell, the harness's mapping
  // check must (C4).
  kHandleMapped,
};

// The names scenario files use (siteName/siteFromName below read them).
inline constexpr NameTable<Site, 25> kSiteNames{{{
    {Site::kAlloc, "alloc"},
    {Site::kGetHandle, "get-handle"},
    {Site::kOpen, "open"},
    {Site::kClose, "close"},
    {Site::kFree, "free"},
    {Site::kAllocTable, "alloc-table"},
    {Site::kCopyTable, "copy-table"},
    {Site::kHandleCorrupt, "handle-corrupt"},
    {Site::kHandleStale, "handle-stale"},
    {Site::kHandleAliased, "handle-aliased"},
    {Site::kGroupFail, "group-fail"},
    {Site::kDelay, "delay"},
    {Site::kDeath, "death"},
    {Site::kHang, "hang"},
    {Site::kNotReady, "not-ready"},
    {Site::kExit, "exit"},
    {Site::kBufferOrder, "buffer-order"},
    {Site::kBufferSize, "buffer-size"},
    {Site::kBufferLabel, "buffer-label"},
    {Site::kBufferCount, "buffer-count"},
    {Site::kEntryCorrupt, "entry-corrupt"},
    {Site::kForeignException, "foreign-exception"},
    {Site::kExchangeLong, "exchange-long"},
    {Site::kCollectiveOrder, "collective-order"},
    {Site::kHandleMapped, "handle-mapped"},
}}};

// The seam and group calls of a handshake a foreign-exception fault can make throw, named as the
// sites (alloc, get-handle, open, alloc-table, copy-table) and the group points (exchange, agree)
// name them.
enum class SeamCall { kAlloc, kGetHandle, kExchange, kOpen, kAllocTable, kCopyTable, kAgree };

inline constexpr NameTable<SeamCall, 7> kSeamCallNames{{{
    {SeamCall::kAlloc, "alloc"},
    {SeamCall::kGetHandle, "get-handle"},
    {SeamCall::kExchange, "exchange"},
    {SeamCall::kOpen, "open"},
    {SeamCall::kAllocTable, "alloc-table"},
    {SeamCall::kCopyTable, "copy-table"},
    {SeamCall::kAgree, "agree"},
}}};

// Which part of an exchange entry an entry-corrupt fault damages (the entry's layout:
// src/exchange_entry.h). Each damage is one a decoder that checks less than the whole would miss.
enum class EntryPart {
  kMagic,  // the magic's second byte is inverted (the first stays intact)
  kKind,   // the kind byte is inverted: a kind no decoder knows
  kTail,   // a byte the entry's kind leaves zero is set to 0xFF: a handle entry's last label byte
           // (its NUL padding), a failure record's last handle byte (it carries no handle)
};

inline constexpr NameTable<EntryPart, 3> kEntryPartNames{{{
    {EntryPart::kMagic, "magic"},
    {EntryPart::kKind, "kind"},
    {EntryPart::kTail, "tail"},
}}};

// A point in a rank's run where delays, deaths and hangs happen.
enum class Point {
  kBeforeConstruct,  // before PeerBuffer's constructor
  kExchange,         // at the handle exchange (group all-gather)
  kOpen,             // at the first peer open
  kAgree,            // at the agreement (group all-reduce)
  kClose,            // at close()
  // Inside the exchange (deaths, hangs and exits only): before this rank posts its entry (as
  // kExchange), or after it posted it and the all-gather completed, so that every other rank
  // received it and goes on to open it.
  kExchangeSend,
  kExchangeRecv,
  // Deaths, hangs and exits only: at the start of data-plane step `step` (after a handshake that
  // succeeded on every rank), where the scenario's `dataplane.stop` would stop the rank.
  kDataplane,
  // Deaths, hangs and exits only: inside the rank's allocation of its buffer (allocUncached) or
  // its export of the handle (getMemHandle), once the runtime answered: after the call succeeded
  // or after its failure was met (an OOM kill while allocating; vLLM's CUDACHECK exit when
  // cudaIpcGetMemHandle fails).
  kAlloc,
  kGetHandle,
};

inline constexpr NameTable<Point, 10> kPointNames{{{
    {Point::kBeforeConstruct, "before-construct"},
    {Point::kExchange, "exchange"},
    {Point::kOpen, "open"},
    {Point::kAgree, "agree"},
    {Point::kClose, "close"},
    {Point::kExchangeSend, "exchange-send"},
    {Point::kExchangeRecv, "exchange-recv"},
    {Point::kDataplane, "dataplane"},
    {Point::kAlloc, "alloc"},
    {Point::kGetHandle, "get-handle"},
}}};

// Where something was written in a scenario file (1-based; 0 when unknown or built in code).
struct SourceMark {
  int line = 0;
  int column = 0;
};

// One fault: which site, on which ranks, how often, with what.
struct FaultSpec {
  Site site = Site::kOpen;
  std::vector<int> ranks;              // the ranks it applies to (never empty after parsing)
  std::optional<int> peer;             // open/close/handle-*: the peer; unset = every peer;
                                       // death/hang/exit at open: inside the open of that peer
  int error = 0;                       // alloc, get-handle, open, close, free, *-table: hipError_t
  std::chrono::milliseconds delay{0};  // delay
  Point at = Point::kBeforeConstruct;  // delay/death/hang/exit/group-fail/collective-order
  int code = 1;                        // exit: the process's exit status (exit(EXIT_FAILURE))
  std::uint64_t step = 0;              // death/hang/exit at dataplane: the data-plane step at
                                       // whose start the rank stops
  int buffer = 0;                      // buffer-size/-label: the index in `buffers:` (from 0)
  // A handshake fault's `buffer: I`: it fires only in the rank's construction I (the I-th buffer
  // of `buffers:` it constructs, from 0) and in that buffer's close and destruction. Unset: in
  // every construction (the one buffer of `buffer:`).
  std::optional<int> onBuffer;
  std::size_t size = 0;                // buffer-size: the bytes the rank constructs it with
  std::string label;                   // buffer-label: the label it constructs it with
  std::size_t registers = 0;           // buffer-count: how many buffers the rank registers
  EntryPart part = EntryPart::kMagic;  // entry-corrupt: the part of the entry it damages
  SeamCall call = SeamCall::kOpen;     // foreign-exception: the call that throws
  bool foreign = false;    // the harness's view of a foreign-exception fault as the failure of its
                           // call (harness/model/fault_sites.h, actingFault): it throws no Error
  bool reordered = false;  // the harness's view of a collective-order fault as a group-fail at
                           // its call (actingFault): every rank of the call raises at once
  int count = 0;           // fire at most this many times per rank (0 = unlimited)
  double probability = 1.0;  // chance each eligible call fires (drawn from the seed)
  SourceMark mark;           // where the fault was written (named in its kFault event)
  // A fault written over a set of peers (`peers: [...]`, `peers: cross-node`) is planted as one
  // fault a (rank, peer) pair, each with this index: that of the set's first pair in the file's
  // faults. The set fires on a rank where any of its pairs does (the core stops opening at its
  // first failed open, so the later pairs of that rank never fire); -1: a fault written alone.
  int set = -1;

  // Whether `rank` is one of the ranks it applies to.
  [[nodiscard]] bool appliesTo(int rank) const {
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  }
};

// Every site and every point, in declaration order.
std::span<const Site> allSites();
std::span<const Point> allPoints();

// The names scenario files use: "get-handle", "handle-stale", ...; "before-construct", "agree", ...
std::string_view siteName(Site site);
std::string_view pointName(Point point);
std::optional<Site> siteFromName(std::string_view name);
std::optional<Point> pointFromName(std::string_view name);
std::string_view entryPartName(EntryPart part);
std::optional<EntryPart> entryPartFromName(std::string_view name);
std::string_view seamCallName(SeamCall call);

// The hipError_t an error site fails with when its fault has `error` 0 (a FaultSpec built in
// code; the parser fills the same defaults): alloc and alloc-table 2 (hipErrorOutOfMemory),
// get-handle, open, close, free and copy-table 1 (hipErrorInvalidValue); 0 for the other sites.
int defaultError(Site site);

// The hipError_t names scenarios may write and reports print: "hipErrorMapFailed" <-> 205.
// hipErrorName: "hipError(1234)" for a code this table does not know.
std::string hipErrorName(int code);
std::optional<int> hipErrorCode(std::string_view name);
// Every named code, ascending.
std::span<const std::pair<int, std::string_view>> hipErrorNames();

}  // namespace peerconf::faults
