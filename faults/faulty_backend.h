// FaultyBackend: the IpcBackend decorator that plants a rank's alloc, get-handle, open, close,
// free, alloc-table and copy-table failures, applies the open point, and makes the stale handle
// for handle-stale.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "faults/fault_plan.h"
#include "faults/rank_control.h"
#include "faults/runtime_hooks.h"
#include "ipc_backend.h"

namespace peerconf::faults {

// Which sites fail is the same in both modes; how they fail differs:
// - kSeam: the decorator throws BackendError(op, rank, peer, code, hipErrorName(code)) itself,
//   without calling the inner backend (real GPUs, where the runtime has no hooks).
// - kRuntime: the decorator installs a hook for this rank's device (device == rank under the
//   mocked HIP runtime) while it lives, and the real backend code path meets the runtime's error.
//   The hook fires only inside the decorator's own call of the matching kind (so allocDevice of
//   the address table never sees an alloc fault, the table's free never a free fault, and the
//   stale scratch buffer nothing), at most once per call; open/close faults naming a peer fire
//   only when the runtime reports that peer as the mapped buffer's owner device.
//
// Sites: alloc = allocUncached only; free = freeDeviceMem of a pointer allocUncached returned;
// get-handle, open(rank -> peer), close(rank -> peer); alloc-table = allocDevice and copy-table =
// copyToDevice (the core's only uses of them are the device address table; copyToHost is never
// faulted). A failed alloc-table allocates nothing and a failed copy-table leaves the table
// allocated, in both modes. Point kOpen is applied at the first
// openMemHandle of each handshake (a handshake starts at allocUncached); a death, exit or hang at
// kOpen that names a peer inside the open of that peer, after the runtime answered (so after an
// open fault of the same call fired). Points kAlloc and kGetHandle (deaths, exits and hangs only)
// are applied inside allocUncached and getMemHandle the same way, once the runtime answered (after
// an alloc or get-handle fault, or a foreign exception, of that call). Point kClose is NOT
// applied here: the core releases inside a noexcept path that swallows exceptions, so a thread
// launcher's die/hang could not leave it; the launcher calls RankFaults::atPoint(kClose) itself
// right before PeerBuffer::close().
//
// foreign-exception: the call it names throws ForeignException (not a peerconf::Error) before the
// inner call, in both modes (a runtime cannot throw a C++ exception through its hook), so nothing
// is allocated or mapped by it: allocUncached, getMemHandle, openMemHandle (of `peer`, inside the
// open point), allocDevice, copyToDevice.
//
// handle-stale: when the scenario has any handle-stale fault (on any rank), getMemHandle hands a
// stale handle to this rank's FaultyGroup through RankFaults. An earlier registration's: when this
// rank exported a buffer in an earlier construction of the run (`buffers:`, one at a time) and
// freed it since, and that buffer is a block of its own (kStaleScratchBytes at least), its handle
// is the stale one (a peer receiving it gets the handle of that peer's earlier buffer: refused
// while nothing took its place, stale-large; opened onto the next buffer once that took its
// address and was exported: stale-large-place-taken, and on CUDA a bigger next buffer too,
// stale-large-place-bigger-exported; `validate` refuses a file where it may). Otherwise
// getMemHandle first allocates a scratch buffer through the inner backend, takes its handle and
// frees it, then hands that now-stale handle over. The scratch is freed before the exchange, so
// nothing stays allocated, and the handle is a real one the runtime issued, for memory that no
// longer exists. The scratch is a block of its own (kStaleScratchBytes, or the buffer's size if
// larger), so the handle is stale on every runtime: below 2 MiB CUDA, and the mocked runtime like
// it, sub-allocate from a 2 MiB chunk, and a freed block's handle OPENS while the chunk lives, onto
// whatever occupies that place now (tests/conformance/runtime_table.yaml: stale-small-chunk-live,
// stale-small-reaches; ROCm/aiter PR 3838's hazard); from 2 MiB on a freed block's handle is
// refused (stale-large, stale-huge) while its place stays empty. It does while the peers open it:
// this rank allocates nothing of the scratch's size between the scratch's free and the end of the
// construction (the address table is a small block), and the next block of that size, which would
// take the place (large-block-reuse, stale-large-place-taken), comes in a later construction, after
// every peer's open of this one.
//
// handle-aliased: when the scenario has any handle-aliased fault, getMemHandle also makes, through
// the inner backend, a block beside another (so their chunk lives on), takes its handle, frees it,
// and allocates another block that takes its place (runtime_table.yaml small-block-reuse), which
// stays allocated until this rank frees its buffer (or the harness, after the run: a Leftover);
// the freed block's handle goes to FaultyGroup. On CUDA and on the mock it opens, onto that live
// block (stale-small-reaches), which holds no signature: the mapping check below names it.
//
// handle-mapped: when the scenario has any handle-mapped fault, getMemHandle hands FaultyGroup the
// handle this rank exported for its previous buffer if that buffer is still alive (`buffers:`,
// alive together), else an all-zero handle (no peer substitutes it). A peer that maps that buffer
// opens it again: the runtime returns its mapping (runtime_table.yaml open-twice), which holds the
// previous buffer's signature, so the mapping check below names it.
//
// What each mapping reaches (every outcome, both runtimes): getMemHandle writes a signature into
// the first 16 bytes of the buffer it exports (a mark and a digest of the handle), and
// openMemHandle reads back what the new mapping of a peer holds there and compares it with what
// that peer exported for this exchange (RankFaults::exported, recorded by FaultyGroup before any
// handle fault): a mapping onto anything else (another live allocation a reclaimed block's handle
// now names, another registration's buffer, another peer's) is a mapping finding (C4). A correct
// core cannot see this at the seam; the harness must.
//
// Fresh memory: allocUncached and allocDevice fill what they return with a poison word (a
// buffer's first kPoisonBytes, a table whole), so that what the core never wrote is never what it
// should have written: fresh device memory is recycled, not cleared (runtime_table.yaml
// fresh-small-in-live-chunk: an unwritten address table held an earlier table's addresses).
//
// Leftovers: an injected close or free failure leaves the real mapping or buffer held (kSeam: the
// inner call is never made; kRuntime: the runtime fails before any side effect). The core sees
// the failure as planned, and a mapping never closed would stay for the process's life (on GPUs a
// later scenario could meet it). So the decorator remembers each such resource (leftovers()),
// forgets it if the core later releases it after all, and the launcher releases what remains
// through the plain backend once the rank's run is over and its ledger was taken
// (releaseLeftovers): below the recording decorator, so the core's record never shows it.
// The size of handle-stale's scratch block at least: a block of its own on every runtime.
inline constexpr std::size_t kStaleScratchBytes = std::size_t{4} << 20;
// How much of a new buffer allocUncached poisons (a table is poisoned whole).
inline constexpr std::size_t kPoisonBytes = std::size_t{4} << 20;
// The word poison fills fresh memory with: no device address, not zero, and no tag of a
// generation a run agrees on (layout/generation.cc skips one the abort word holds).
inline constexpr std::uint64_t kPoisonWord = 0xBADC0FFEE0DDF00DULL;
// The first word of an exported buffer's signature ("PEERSIG!"); the second is the handle's digest.
inline constexpr std::uint64_t kSignatureMark = 0x2147495352454550ULL;
inline constexpr std::size_t kSignatureBytes = 2 * sizeof(std::uint64_t);

class FaultyBackend : public IpcBackend {
 public:
  enum class Mode { kSeam, kRuntime };

  // A resource still held for real because an injected close or free failed.
  struct Leftover {
    enum class Kind { kMapping, kBuffer };
    Kind kind = Kind::kBuffer;
    DevicePtr ptr = 0;
    int peer = kNoPeer;  // kMapping: whose buffer it maps
    std::string why;     // why it is held, when not an injected close or free failure
  };

  // `inner`, `faults` and `control` must outlive the decorator. kRuntime installs its hook in the
  // mocked HIP runtime (mockHipHooks()).
  FaultyBackend(IpcBackend& inner, RankFaults& faults, RankControl& control, Mode mode);
  // kRuntime over another hook registry (tests, or another runtime with hooks).
  FaultyBackend(IpcBackend& inner, RankFaults& faults, RankControl& control, RuntimeHooks& hooks);
  // Removes the hook (kRuntime).
  ~FaultyBackend() override;

  Mode mode() const noexcept { return mode_; }

  // What injected close/free failures left held and the core did not release since, in order.
  const std::vector<Leftover>& leftovers() const noexcept { return leftovers_; }
  // Mappings that did not reach the buffer their peer exported, one line each (C4).
  const std::vector<std::string>& mappingFindings() const noexcept { return mappingFindings_; }

  int rank() const override { return inner_.rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override;
  DevicePtr allocDevice(std::size_t nbytes) override;
  void freeDeviceMem(DevicePtr ptr) override;
  IpcHandle getMemHandle(DevicePtr ptr) override;
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override;
  void closeMemHandle(DevicePtr ptr, int peer) override;
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override;
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override {
    inner_.copyToHost(dst, src, nbytes);
  }

 private:
  class Arm;
  int hook(RuntimeCall call, int peerDevice) noexcept;
  void makeStaleHandle(DevicePtr ptr);
  void makeAliasedHandle();
  // Frees handle-aliased's live blocks (the core freed its buffer: no peer opens it any more).
  void releaseAliasTargets();
  void poison(DevicePtr ptr, std::size_t nbytes);
  void sign(DevicePtr ptr, const IpcHandle& handle);
  void checkMapping(DevicePtr mapped, int peer);
  // The open itself: its planted failure (kSeam) or the runtime's, with its hook armed (kRuntime).
  DevicePtr openInner(const IpcHandle& handle, int peer);
  void leave(Leftover::Kind kind, DevicePtr ptr, int peer);
  void released(Leftover::Kind kind, DevicePtr ptr);
  [[noreturn]] void fail(Op op, int peer, int code, const char* call) const;

  IpcBackend& inner_;
  RankFaults& faults_;
  RankControl& control_;
  Mode mode_;
  RuntimeHooks* hooks_ = nullptr;
  int device_;
  // The runtime call the decorator is making now and its hook may fail (kRuntime), or -1.
  std::atomic<int> armed_{-1};
  // The site the armed call stands for: one runtime call serves two sites (hipMalloc: alloc and
  // alloc-table; hipMemcpy: copy-table and the unfaulted copies).
  std::atomic<Site> armedSite_{Site::kAlloc};
  // Set by the hook when it failed the armed call (kRuntime): the failure was injected.
  std::atomic<bool> injected_{false};
  std::vector<Leftover> leftovers_;
  std::vector<std::string> mappingFindings_;
  std::map<DevicePtr, std::size_t> local_;  // allocUncached pointers not yet freed, and sizes
  bool openPointDue_ = true;
  // The buffer this rank exported last (an earlier registration round's, once the next begins),
  // and whether it was freed since: handle-stale's handle when it is (see makeStaleHandle),
  // handle-mapped's while it is not.
  struct Export {
    DevicePtr ptr = 0;
    std::size_t bytes = 0;
    IpcHandle handle;
    bool freed = false;
  };
  std::optional<Export> lastExport_;
};

// Releases `leftovers` through `plain` (the real backend under the decorator), each once, every one
// tried. Returns one line per leftover: what was released, or why its release failed; `why` says
// why it was held (default: an injected close or free failure).
std::vector<std::string> releaseLeftovers(IpcBackend& plain,
                                          const std::vector<FaultyBackend::Leftover>& leftovers,
                                          const std::string& why = {});

}  // namespace peerconf::faults
