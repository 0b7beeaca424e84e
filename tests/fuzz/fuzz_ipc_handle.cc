// libFuzzer target: decoding IPC handles in the mocked HIP runtime. Input: 64 handle bytes, then
// an optional mode byte that helps the fuzzer past the checksum (bit 0: re-seal the checksum;
// bits 1-4: put this process's pid, the live allocation's generation, this job, the live
// allocation's nonce in the fields).
// Contract: decodeHandle accepts only what encodeHandle produces (it round-trips byte for byte),
// and hipIpcOpenMemHandle maps only a handle that names the live allocation's memory: the one
// hipIpcGetMemHandle issued or, the allocation being a block carved from a shared 2 MiB chunk (as
// on CUDA), a handle of the same chunk (the same job, owner, device, chunk and nonce) with another
// block's place, size or generation, as a freed block of that chunk leaves behind: a GPU opens it
// onto whatever the chunk holds there (DESIGN.md §7; the runtime table's stale-small-reaches), and
// the mapping must show the chunk at the handle's offset. Everything else is refused with the
// output pointer untouched and nothing mapped.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"

namespace mh = peerconf::mock_hip;

namespace {

constexpr std::size_t kHandleBytes = sizeof(mh::hipIpcMemHandle_t);
static_assert(kHandleBytes == 64);
constexpr std::size_t kLiveBytes = 4096;

struct Live {
  void* base = nullptr;
  mh::hipIpcMemHandle_t issued{};
  mh::HandleInfo info{};
};

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_ipc_handle: %s (detail: %s)\n", what.c_str(),
               mh::lastErrorDetail().c_str());
  std::abort();
}

// One live allocation on device 0, exported; the fuzzer opens from device 1.
const Live& live() {
  static const Live state = [] {
    Live s;
    if (mh::hipSetDevice(0) != mh::hipSuccess ||
        mh::hipExtMallocWithFlags(&s.base, kLiveBytes, mh::hipDeviceMallocUncached) !=
            mh::hipSuccess ||
        mh::hipIpcGetMemHandle(&s.issued, s.base) != mh::hipSuccess) {
      bug("cannot set up the live allocation");
    }
    s.info = *mh::decodeHandle(s.issued);
    return s;
  }();
  return state;
}

mh::hipIpcMemHandle_t shape(const std::uint8_t* data, std::size_t size) {
  mh::hipIpcMemHandle_t h{};
  std::memcpy(h.reserved, data, size < kHandleBytes ? size : kHandleBytes);
  if (size <= kHandleBytes) return h;
  const std::uint8_t mode = data[kHandleBytes];
  if ((mode & 0x1e) != 0) {
    // Fields at their documented offsets (handle.cc): job 8, owner pid 16, generation 24,
    // nonce 40.
    if ((mode & 0x02) != 0) {
      const std::int32_t pid = static_cast<std::int32_t>(::getpid());
      std::memcpy(h.reserved + 16, &pid, sizeof pid);
    }
    if ((mode & 0x04) != 0) std::memcpy(h.reserved + 24, &live().info.generation, 8);
    if ((mode & 0x08) != 0) std::memcpy(h.reserved + 8, &live().info.job, 8);
    if ((mode & 0x10) != 0) std::memcpy(h.reserved + 40, &live().info.nonce, 8);
  }
  if ((mode & 0x01) != 0) h = mh::resealHandle(h);  // the checksum as encodeHandle computes it
  return h;
}

bool sameBytes(const mh::hipIpcMemHandle_t& a, const mh::hipIpcMemHandle_t& b) {
  return std::memcmp(a.reserved, b.reserved, kHandleBytes) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // The live allocation stays for the process's life (libFuzzer ends by exit(), after the
  // runtime's thread-local state is gone): its segment, a memfd, goes with the process.
  (void)live();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Live& state = live();
  const mh::hipIpcMemHandle_t handle = shape(data, size);

  if (const auto info = mh::decodeHandle(handle)) {
    if (!sameBytes(mh::encodeHandle(*info), handle)) {
      bug("decodeHandle accepted bytes that encodeHandle never produces");
    }
  }

  if (mh::hipSetDevice(1) != mh::hipSuccess) bug("hipSetDevice(1) failed");
  int sentinel = 0;
  void* ptr = &sentinel;
  const mh::hipError_t rc =
      mh::hipIpcOpenMemHandle(&ptr, handle, mh::hipIpcMemLazyEnablePeerAccess);
  if (rc == mh::hipSuccess) {
    if (ptr == &sentinel || ptr == nullptr || ptr == state.base) bug("bad mapping address");
    // Where the live allocation's last byte is in this mapping: at its own offset in the chunk.
    std::ptrdiff_t shift = 0;
    if (!sameBytes(handle, state.issued)) {
      const auto info = mh::decodeHandle(handle);
      const mh::HandleInfo& issued = state.info;
      const bool carved = issued.segment != issued.generation;
      if (!info || !carved || info->segment != issued.segment || info->nonce != issued.nonce ||
          info->job != issued.job || info->ownerPid != issued.ownerPid ||
          info->ownerDevice != issued.ownerDevice) {
        bug("opened a handle that names no memory of the live allocation's");
      }
      shift =
          static_cast<std::ptrdiff_t>(issued.offset) - static_cast<std::ptrdiff_t>(info->offset);
    }
    static_cast<volatile unsigned char*>(state.base)[kLiveBytes - 1] = 0x5a;
    const std::ptrdiff_t last = shift + static_cast<std::ptrdiff_t>(kLiveBytes) - 1;
    if (static_cast<volatile unsigned char*>(ptr)[last] != 0x5a) {
      bug("the mapping does not show the allocation");
    }
    if (mh::hipIpcCloseMemHandle(ptr) != mh::hipSuccess) bug("closing the mapping failed");
  } else {
    if (ptr != &sentinel) bug("a refused open wrote the output pointer");
    if (mh::lastErrorDetail().empty()) bug("a refused open gave no reason");
  }
  if (!mh::liveMappings(1).empty()) bug("a mapping is left on device 1");
  if (mh::liveAllocations(0).size() != 1) bug("the live allocation changed");
  (void)mh::hipGetLastError();
  mh::clearLedgers();  // the ledger grows with every call; keep the fuzzer's memory flat
  return 0;
}
