// FaultyBackend: seam-mode throws, runtime-mode hooks, and the stale scratch buffer.
#include "faults/faulty_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace peerconf::faults {

using FaultSite = Site;

// Marks the runtime call the decorator is making for the length of one inner call (kRuntime), so
// the hook fails only that call, at most once. verify() catches a runtime that never consulted
// the hook while a fault was planted for the site: the fault would silently never fire.
class FaultyBackend::Arm {
 public:
  Arm(FaultyBackend& backend, RuntimeCall call, FaultSite site)
      : backend_(backend), call_(call), site_(site) {
    if (backend_.mode_ == Mode::kRuntime) {
      backend_.armedSite_.store(site);
      backend_.armed_.store(static_cast<int>(call));
    }
  }
  Arm(const Arm&) = delete;
  Arm& operator=(const Arm&) = delete;
  ~Arm() { backend_.armed_.store(-1); }

  void verify() const {
    if (backend_.mode_ != Mode::kRuntime) return;
    if (backend_.armed_.load() != static_cast<int>(call_)) return;
    if (!backend_.faults_.names(site_)) return;
    throw std::logic_error(
        "FaultyBackend (runtime mode): the runtime never consulted the fault "
        "hook of device " +
        std::to_string(backend_.device_) + " for a " + std::string(siteName(site_)) +
        " call; is the inner backend running on the mocked HIP runtime?");
  }

 private:
  FaultyBackend& backend_;
  RuntimeCall call_;
  FaultSite site_;
};

FaultyBackend::FaultyBackend(IpcBackend& inner, RankFaults& faults, RankControl& control, Mode mode)
    : inner_(inner), faults_(faults), control_(control), mode_(mode), device_(faults.rank()) {
  if (mode_ == Mode::kRuntime) {
    hooks_ = &mockHipHooks();
    hooks_->install(device_, [this](RuntimeCall call, int, int peerDevice) noexcept {
      return hook(call, peerDevice);
    });
  }
}

FaultyBackend::FaultyBackend(IpcBackend& inner, RankFaults& faults, RankControl& control,
                             RuntimeHooks& hooks)
    : inner_(inner),
      faults_(faults),
      control_(control),
      mode_(Mode::kRuntime),
      hooks_(&hooks),
      device_(faults.rank()) {
  hooks_->install(device_, [this](RuntimeCall call, int, int peerDevice) noexcept {
    return hook(call, peerDevice);
  });
}

FaultyBackend::~FaultyBackend() {
  if (hooks_ != nullptr) hooks_->remove(device_);
}

int FaultyBackend::hook(RuntimeCall call, int peerDevice) noexcept {
  int expected = static_cast<int>(call);
  if (!armed_.compare_exchange_strong(expected, -1)) return 0;
  std::optional<int> code;
  switch (call) {
    case RuntimeCall::kMalloc:
      code = armedSite_.load() == FaultSite::kAllocTable ? faults_.failAllocTable()
                                                         : faults_.failAlloc();
      break;
    case RuntimeCall::kMemcpy:
      if (armedSite_.load() == FaultSite::kCopyTable) code = faults_.failCopyTable();
      break;
    case RuntimeCall::kGetHandle:
      code = faults_.failGetHandle();
      break;
    case RuntimeCall::kOpen:
      code = faults_.failOpen(peerDevice);
      break;
    case RuntimeCall::kClose:
      code = faults_.failClose(peerDevice);
      break;
    case RuntimeCall::kFree:
      code = faults_.failFree();
      break;
    default:
      break;
  }
  if (code.value_or(0) != 0) injected_.store(true);
  return code.value_or(0);
}

void FaultyBackend::leave(Leftover::Kind kind, DevicePtr ptr, int peer) {
  for (const Leftover& l : leftovers_) {
    if (l.kind == kind && l.ptr == ptr) return;  // already held once: release it once
  }
  leftovers_.push_back({kind, ptr, peer});
}

void FaultyBackend::released(Leftover::Kind kind, DevicePtr ptr) {
  std::erase_if(leftovers_, [&](const Leftover& l) { return l.kind == kind && l.ptr == ptr; });
}

void FaultyBackend::fail(Op op, int peer, int code, const char* call) const {
  throw BackendError(op, faults_.rank(), peer, code, hipErrorName(code),
                     std::string(call) + " (injected at the seam)");
}

DevicePtr FaultyBackend::allocUncached(std::size_t nbytes) {
  openPointDue_ = true;
  // A death, exit or hang at `alloc` happens inside the call, once the runtime answered: after
  // the buffer was allocated (and is held: the harness releases it after the run), or after its
  // failure was met (an OOM kill while allocating).
  DevicePtr ptr = 0;
  try {
    faults_.throwForeign(SeamCall::kAlloc);
    if (mode_ == Mode::kSeam) {
      if (auto code = faults_.failAlloc()) fail(Op::kAlloc, kNoPeer, *code, "allocUncached");
      ptr = inner_.allocUncached(nbytes);
    } else {
      Arm arm(*this, RuntimeCall::kMalloc, FaultSite::kAlloc);
      ptr = inner_.allocUncached(nbytes);
      arm.verify();
    }
  } catch (...) {
    faults_.atPoint(Point::kAlloc, control_);
    throw;
  }
  local_[ptr] = nbytes;
  poison(ptr, std::min(nbytes, kPoisonBytes));
  faults_.atPoint(Point::kAlloc, control_);
  return ptr;
}

DevicePtr FaultyBackend::allocDevice(std::size_t nbytes) {
  faults_.throwForeign(SeamCall::kAllocTable);
  DevicePtr ptr = 0;
  if (mode_ == Mode::kSeam) {
    if (auto code = faults_.failAllocTable()) fail(Op::kAlloc, kNoPeer, *code, "allocDevice");
    ptr = inner_.allocDevice(nbytes);
  } else {
    Arm arm(*this, RuntimeCall::kMalloc, FaultSite::kAllocTable);
    ptr = inner_.allocDevice(nbytes);
    arm.verify();
  }
  poison(ptr, nbytes);
  return ptr;
}

void FaultyBackend::poison(DevicePtr ptr, std::size_t nbytes) {
  // Outside any armed call: no fault meets these copies. A copy the runtime refuses leaves the
  // memory as it was (best effort: the core's own calls are what is under test).
  static const std::vector<std::uint64_t> block(8192, kPoisonWord);
  constexpr std::size_t kBlockBytes = 8192 * sizeof(std::uint64_t);
  try {
    for (std::size_t at = 0; at < nbytes; at += kBlockBytes) {
      inner_.copyToDevice(ptr + at, block.data(), std::min(kBlockBytes, nbytes - at));
    }
  } catch (const std::exception&) {
  }
}

namespace {

// A digest of a handle's bytes (splitmix64's mixer over its words): what the signature names.
std::uint64_t digest(const IpcHandle& handle) {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (std::size_t i = 0; i < IpcHandle::kSize; i += sizeof(std::uint64_t)) {
    std::uint64_t word = 0;
    std::memcpy(&word, handle.bytes.data() + i, sizeof word);
    h ^= word + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
  }
  return h;
}

}  // namespace

void FaultyBackend::sign(DevicePtr ptr, const IpcHandle& handle) {
  const auto local = local_.find(ptr);
  if (local == local_.end() || local->second < kSignatureBytes) return;
  const std::uint64_t signature[2] = {kSignatureMark, digest(handle)};
  try {
    inner_.copyToDevice(ptr, signature, kSignatureBytes);
  } catch (const std::exception&) {
    // Unsigned: a peer's check then reports this buffer as not reached, naming the write.
    mappingFindings_.push_back("could not sign the exported buffer (the check of its peers fails)");
  }
}

void FaultyBackend::checkMapping(DevicePtr mapped, int peer) {
  const auto exported = faults_.exported(peer);
  if (!exported || exported->bytes < kSignatureBytes) return;
  std::uint64_t seen[2] = {0, 0};
  std::string reaches;
  try {
    inner_.copyToHost(seen, mapped, kSignatureBytes);
  } catch (const std::exception& e) {
    reaches = "nothing it can read (" + std::string(e.what()) + ")";
  }
  if (reaches.empty() && seen[0] == kSignatureMark && seen[1] == digest(exported->handle)) return;
  if (reaches.empty()) {
    reaches = seen[0] == kSignatureMark
                  ? "a buffer exported with another handle (another registration's or another "
                    "peer's)"
                  : "memory no rank exported for this exchange (another live allocation, or "
                    "one freed)";
  }
  mappingFindings_.push_back("the mapping of peer " + std::to_string(peer) +
                             " reaches another allocation than the buffer peer " +
                             std::to_string(peer) + " exported: " + reaches);
}

void FaultyBackend::copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) {
  faults_.throwForeign(SeamCall::kCopyTable);
  if (mode_ == Mode::kSeam) {
    if (auto code = faults_.failCopyTable()) fail(Op::kCopy, kNoPeer, *code, "copyToDevice");
    inner_.copyToDevice(dst, src, nbytes);
    return;
  }
  Arm arm(*this, RuntimeCall::kMemcpy, FaultSite::kCopyTable);
  inner_.copyToDevice(dst, src, nbytes);
  arm.verify();
}

void FaultyBackend::freeDeviceMem(DevicePtr ptr) {
  const auto local = local_.find(ptr);
  if (local == local_.end()) {
    inner_.freeDeviceMem(ptr);  // the address table, or memory this decorator did not allocate
    return;
  }
  // A failed free leaves the pointer tracked: the memory is still allocated.
  if (mode_ == Mode::kSeam) {
    if (auto code = faults_.failFree()) {
      leave(Leftover::Kind::kBuffer, ptr, kNoPeer);
      fail(Op::kFree, kNoPeer, *code, "freeDeviceMem");
    }
    inner_.freeDeviceMem(ptr);
    local_.erase(local);
    if (lastExport_ && lastExport_->ptr == ptr) lastExport_->freed = true;
    released(Leftover::Kind::kBuffer, ptr);
    releaseAliasTargets();
    return;
  }
  Arm arm(*this, RuntimeCall::kFree, FaultSite::kFree);
  injected_.store(false);
  try {
    inner_.freeDeviceMem(ptr);
  } catch (...) {
    if (injected_.load()) leave(Leftover::Kind::kBuffer, ptr, kNoPeer);
    throw;
  }
  local_.erase(local);
  if (lastExport_ && lastExport_->ptr == ptr) lastExport_->freed = true;
  released(Leftover::Kind::kBuffer, ptr);
  arm.verify();
  releaseAliasTargets();
}

void FaultyBackend::makeStaleHandle(DevicePtr ptr) {
  // An earlier registration's buffer, freed and a block of its own: its handle is stale as is.
  if (lastExport_ && lastExport_->freed && lastExport_->bytes >= kStaleScratchBytes) {
    faults_.putStaleHandle(lastExport_->handle);
    return;
  }
  const auto local = local_.find(ptr);
  // A block of its own, sharing no chunk with anything live: a freed small block's handle still
  // opens while its chunk lives (CUDA and the mock alike: tests/conformance/runtime_table.yaml,
  // stale-small-chunk-live), a block of kStaleScratchBytes is refused once freed (stale-large),
  // while nothing takes its place: nothing of its size is allocated before the peers' opens of
  // this construction (faulty_backend.h).
  const std::size_t nbytes =
      std::max(local != local_.end() ? local->second : std::size_t{1}, kStaleScratchBytes);
  // Straight to the inner backend with nothing armed: the scratch buffer meets no fault.
  const DevicePtr scratch = inner_.allocUncached(nbytes);
  IpcHandle stale;
  try {
    stale = inner_.getMemHandle(scratch);
  } catch (...) {
    try {
      inner_.freeDeviceMem(scratch);
    } catch (...) {
      // The getMemHandle error is the one to report; the ledger shows the leak.
    }
    throw;
  }
  inner_.freeDeviceMem(scratch);
  faults_.putStaleHandle(stale);
}

namespace {

// handle-aliased's blocks: small, so a chunk holds them (runtime_table.yaml small-block-reuse).
constexpr std::size_t kAliasBlockBytes = std::size_t{64} << 10;
constexpr const char* kAliasTargetWhy = "the live block handle-aliased's handle reached";

}  // namespace

void FaultyBackend::makeAliasedHandle() {
  // Straight to the inner backend with nothing armed: these blocks meet no fault.
  const DevicePtr anchor = inner_.allocUncached(kAliasBlockBytes);
  DevicePtr freed = 0;
  try {
    freed = inner_.allocUncached(kAliasBlockBytes);
    const IpcHandle handle = inner_.getMemHandle(freed);
    inner_.freeDeviceMem(freed);
    freed = 0;
    const DevicePtr taker = inner_.allocUncached(kAliasBlockBytes);
    leftovers_.push_back({Leftover::Kind::kBuffer, taker, kNoPeer, kAliasTargetWhy});
    faults_.putAliasedHandle(handle);
  } catch (...) {
    try {
      if (freed != 0) inner_.freeDeviceMem(freed);
      inner_.freeDeviceMem(anchor);
    } catch (...) {
      // The first error is the one to report; the ledger shows what stayed.
    }
    throw;
  }
  inner_.freeDeviceMem(anchor);
}

void FaultyBackend::releaseAliasTargets() {
  std::vector<DevicePtr> targets;
  for (const Leftover& l : leftovers_) {
    if (l.why == kAliasTargetWhy) targets.push_back(l.ptr);
  }
  for (const DevicePtr target : targets) {
    try {
      inner_.freeDeviceMem(target);
      released(Leftover::Kind::kBuffer, target);
    } catch (const std::exception&) {
      // Still a leftover: the harness tries again after the run.
    }
  }
}

IpcHandle FaultyBackend::getMemHandle(DevicePtr ptr) {
  // A death, exit or hang at `get-handle` happens inside the call, once the runtime answered
  // (vLLM's CUDACHECK exit when cudaIpcGetMemHandle fails).
  IpcHandle handle;
  try {
    faults_.throwForeign(SeamCall::kGetHandle);
    if (faults_.staleExchange()) makeStaleHandle(ptr);
    if (faults_.aliasExchange()) makeAliasedHandle();
    // handle-mapped: the previous buffer's handle while that buffer lives (its peers mapped it in
    // that construction), else none (all zeros: nothing a peer substitutes).
    if (faults_.mappedExchange()) {
      faults_.putMappedHandle(lastExport_ && !lastExport_->freed ? lastExport_->handle
                                                                 : IpcHandle{});
    }
    if (mode_ == Mode::kSeam) {
      if (auto code = faults_.failGetHandle()) {
        fail(Op::kGetHandle, kNoPeer, *code, "getMemHandle");
      }
      handle = inner_.getMemHandle(ptr);
    } else {
      Arm arm(*this, RuntimeCall::kGetHandle, FaultSite::kGetHandle);
      handle = inner_.getMemHandle(ptr);
      arm.verify();
    }
  } catch (...) {
    faults_.atPoint(Point::kGetHandle, control_);
    throw;
  }
  sign(ptr, handle);
  if (const auto local = local_.find(ptr); local != local_.end()) {
    lastExport_ = Export{ptr, local->second, handle, false};
  }
  faults_.atPoint(Point::kGetHandle, control_);
  return handle;
}

DevicePtr FaultyBackend::openMemHandle(const IpcHandle& handle, int peer) {
  if (openPointDue_) {
    openPointDue_ = false;
    faults_.atPoint(Point::kOpen, control_);
  }
  // A death, exit or hang aimed at this peer happens inside the call, once the runtime answered:
  // after the mapping was made, or after its failure was met (an open that fails, then exits).
  DevicePtr mapped = 0;
  try {
    mapped = openInner(handle, peer);
  } catch (...) {
    faults_.atOpenOf(peer, control_);
    throw;
  }
  checkMapping(mapped, peer);
  faults_.atOpenOf(peer, control_);
  return mapped;
}

DevicePtr FaultyBackend::openInner(const IpcHandle& handle, int peer) {
  faults_.throwForeign(SeamCall::kOpen, peer);
  if (mode_ == Mode::kSeam) {
    if (auto code = faults_.failOpen(peer)) fail(Op::kOpenHandle, peer, *code, "openMemHandle");
    return inner_.openMemHandle(handle, peer);
  }
  Arm arm(*this, RuntimeCall::kOpen, FaultSite::kOpen);
  const DevicePtr mapped = inner_.openMemHandle(handle, peer);
  arm.verify();
  return mapped;
}

void FaultyBackend::closeMemHandle(DevicePtr ptr, int peer) {
  if (mode_ == Mode::kSeam) {
    if (auto code = faults_.failClose(peer)) {
      leave(Leftover::Kind::kMapping, ptr, peer);
      fail(Op::kCloseHandle, peer, *code, "closeMemHandle");
    }
    inner_.closeMemHandle(ptr, peer);
    released(Leftover::Kind::kMapping, ptr);
    return;
  }
  Arm arm(*this, RuntimeCall::kClose, FaultSite::kClose);
  injected_.store(false);
  try {
    inner_.closeMemHandle(ptr, peer);
  } catch (...) {
    if (injected_.load()) leave(Leftover::Kind::kMapping, ptr, peer);
    throw;
  }
  released(Leftover::Kind::kMapping, ptr);
  arm.verify();
}

std::vector<std::string> releaseLeftovers(IpcBackend& plain,
                                          const std::vector<FaultyBackend::Leftover>& leftovers,
                                          const std::string& why) {
  std::vector<std::string> lines;
  for (const auto& l : leftovers) {
    char ptr[32];
    std::snprintf(ptr, sizeof ptr, "0x%llx", static_cast<unsigned long long>(l.ptr));
    const bool mapping = l.kind == FaultyBackend::Leftover::Kind::kMapping;
    const std::string what = mapping ? "mapping of peer " + std::to_string(l.peer) + " at " + ptr
                                     : std::string("buffer ") + ptr;
    const std::string held = !l.why.empty() ? l.why
                             : why.empty()  ? std::string("held after an injected ") +
                                                 (mapping ? "close" : "free") + " failure"
                                           : why;
    try {
      if (mapping) {
        plain.closeMemHandle(l.ptr, l.peer);
      } else {
        plain.freeDeviceMem(l.ptr);
      }
      lines.push_back(std::string(mapping ? "closed " : "freed ") + what + " (" + held + ")");
    } catch (const std::exception& e) {
      lines.push_back(std::string("could not ") + (mapping ? "close " : "free ") + what + " (" +
                      held + "): " + e.what());
    }
  }
  return lines;
}

}  // namespace peerconf::faults
