// The harness side of the mocked HIP runtime: the ledger of what every device allocated, opened,
// closed and freed, leak queries, fault hooks, device resets, the job id, and the sweep of
// what older builds left in /dev/shm.
// Everything here is per process: under mpirun each rank sees its own ledger.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mock_hip/hip_runtime_api.h"

namespace peerconf::mock_hip {

// ---- Ledger ------------------------------------------------------------------------------------

enum class LedgerOp { kAlloc, kFree, kOpen, kClose, kGetHandle, kSetDevice, kMemcpy };
std::string_view ledgerOpName(LedgerOp op);

// One call as the runtime saw it. Every alloc/free/open/close is recorded, failed or not; the other
// ops are recorded only when they fail. `device` is the device the entry belongs to: the
// allocating device for alloc/free, the mapping device for open/close, otherwise the calling
// thread's current device.
struct LedgerEntry {
  LedgerOp op;
  int device;
  std::uint64_t ptr;         // the allocation or mapping (0 when the call failed before one)
  std::size_t size;          // bytes allocated or mapped (requested size for a failed alloc)
  int ownerDevice;           // device that allocated the memory (-1 when unknown)
  std::uint64_t generation;  // the allocation's generation (0 when unknown)
  int error;                 // hipError_t, 0 on success
  std::uint64_t timeNs;      // steady clock
};

// This process's entries for `device`, in call order (empty for a device out of range).
std::vector<LedgerEntry> ledger(int device);
void clearLedgers();

// What `device` still holds: allocations not freed (op kAlloc entries), mappings not closed
// (op kOpen entries), oldest first. The leak checker's view.
std::vector<LedgerEntry> liveAllocations(int device);
std::vector<LedgerEntry> liveMappings(int device);

// ---- Fault hooks -------------------------------------------------------------------------------

enum class Call { kSetDevice, kMalloc, kFree, kGetHandle, kOpen, kClose, kMemcpy };
std::string_view callName(Call call);

// Runs at the entry of each call made while `device` is current (for hipSetDevice: the device
// being selected). `peerDevice` is the owner device of the handle or mapping for open/close, else
// -1. A non-zero return (a hipError_t) makes the call fail with that code before any side effect;
// the failure is recorded in the ledger. The hook runs outside the runtime's lock and may be called
// from several threads at once.
using FaultHook = std::function<int(Call call, int device, int peerDevice)>;
void setFaultHook(int device, FaultHook hook);
void clearFaultHooks();

// ---- GPUs shared by devices -------------------------------------------------------------------

// Ranks sharing a GPU (--ranks-per-gpu): each keeps a mocked device of its own, so its ledger,
// fault hook and "own handle" refusal stay the rank's (as a process's context on a real GPU), while
// placeOnGpu puts several devices on one GPU's memory: hipMemGetInfo on any of them counts the
// live allocations of every device on that GPU (in this process), so a rank's check of the free
// memory sees its siblings' buffers as it would on a real GPU. Unplaced, a device is a GPU of its
// own (gpuOf(device) == device). A placement lasts until resetAll().
void placeOnGpu(int device, int gpu);
int gpuOf(int device);

// ---- Device memory -----------------------------------------------------------------------------

// The memory of `device` (scenario key device_memory): hipMemGetInfo reports it as the total, and
// an allocation on the device that does not fit in what is left (the live allocations of every
// device on its GPU counted, as hipMemGetInfo counts them) fails with hipErrorOutOfMemory, as a
// real GPU's would: the buffer, the address table, a second buffer alike. Unset, a device has
// kDefaultDeviceMemory. Lasts until resetAll().
inline constexpr std::size_t kDefaultDeviceMemory = std::size_t{64} << 30;
void setDeviceMemory(int device, std::size_t bytes);
std::size_t deviceMemory(int device);

// ---- Resets ------------------------------------------------------------------------------------

// Frees every allocation and unmaps every mapping `device` still holds in this process, without
// ledger entries (the ledger shows what ranks did; a reset is the harness cleaning up after a
// simulated dead rank).
void resetDevice(int device);
// resetDevice for every device, then clearLedgers(), clearFaultHooks(), every placeOnGpu and
// every setDeviceMemory.
void resetAll();

// Where device memory lives. kSegments: a memfd a segment, mapped and unmapped as the
// allocations and opens come and go (segmentName below), which other processes can open (MPI,
// forked ranks). kArena: ranks as threads of one process only (simulated time): the segments are
// ranges of one in-process file mapped once (mock_hip/arena.h), with the same handles, stale
// handles, chunks, shared peer mappings, ledger, capacity and fresh contents, and no system call
// a run; a segment past the arena's room is a memfd. Chosen at beginRun.
enum class DeviceMemory { kSegments, kArena };

// A run of ranks as threads, drawn from `seed`: clears the ledgers and, when no allocation or
// mapping is left from before (none is after resetAll), restarts the allocation numbers
// ("generations") at a number drawn from the seed, maps from detail::placementBase(seed) on (the
// arena: from a start drawn from the seed) and makes `memory` where new segments go. A run that
// makes the same calls in the same order (simulated time) then gets the same device pointers and
// allocation numbers in every process, whatever ran before it. With something left, numbers,
// addresses and the kind of memory go on from where they are (nothing may be reused).
void beginRun(std::uint64_t seed, DeviceMemory memory = DeviceMemory::kSegments);
// Where new segments go now.
DeviceMemory deviceMemoryKind();

// ---- Job id ------------------------------------------------------------------------------------

// Every rank of one run must share the job id: hipIpcOpenMemHandle refuses handles of another job.
// Default: PEERCONF_MOCK_JOB (hex) if set, else a random value chosen once per process. Ranks as
// threads share it for free. Ranks as processes: forked children inherit it if the parent called
// job() before forking; under mpirun, rank 0 calls job(), broadcasts it, and every rank calls
// setJob(value) before its first allocation. Allocations keep the job they were made under.
std::uint64_t job();
void setJob(std::uint64_t job);

// ---- A rank's thread state ---------------------------------------------------------------------

// What the runtime keeps per calling thread, as the real one does: the current device
// (hipSetDevice) and the last error with its detail. An engine that runs ranks as fibers of one
// thread keeps one of these per rank and exchanges it with the thread's at every switch
// (exchangeThreadState swaps the two: the same call puts a rank's state in and takes it out again).
struct ThreadState {
  int device = 0;
  hipError_t lastError = hipSuccess;
  std::string detail;
};
void exchangeThreadState(ThreadState& other);

// ---- Errors, handles, segments -----------------------------------------------------------------

// Why this thread's most recent mock HIP call failed (empty if it succeeded), e.g. "handle belongs
// to job 1f..., this process runs job 2a...". Appended by the backend to its error text.
std::string lastErrorDetail();

// The fields a mock IPC handle carries (magic, version and checksum are implicit).
struct HandleInfo {
  std::uint64_t job;
  int ownerPid;
  int ownerDevice;
  std::uint64_t generation;  // unique per allocation within the owner process, never reused
  std::size_t size;
  // Random per segment (never 0), part of the segment's name: a handle whose nonce is not the
  // segment's is refused like a stale handle, and the name cannot be guessed in advance.
  std::uint64_t nonce = 0;
  // The segment holding the allocation (its generation) and the allocation's offset in it: a
  // block below 2 MiB is carved from a shared 2 MiB chunk, as on CUDA. 0: the allocation's own
  // segment (generation), offset 0.
  std::uint64_t segment = 0;
  std::size_t offset = 0;
  // A block of its own segment (2 MiB or more): its address in the owner process, its place. A
  // freed block's handle opens onto the block of the same owner and size now at that place, as on
  // CUDA (runtime_table.yaml stale-large-place-taken); 0: none said (the handle of a chunk's
  // block, which carries its segment instead).
  std::uint64_t place = 0;
};
// nullopt when the bytes are not a valid mock handle (bad magic, version or checksum, or non-zero
// reserved bytes: only what encodeHandle produces decodes).
std::optional<HandleInfo> decodeHandle(const hipIpcMemHandle_t& handle);
// A well-formed handle with the given fields (to forge stale or foreign handles in tests).
hipIpcMemHandle_t encodeHandle(const HandleInfo& info);
// `handle` with its checksum recomputed over the bytes before it, whatever they hold (to forge
// handles that pass the checksum, as one who read handle.cc could: the tests and the fuzzer).
hipIpcMemHandle_t resealHandle(hipIpcMemHandle_t handle);

// The name of a segment (a large allocation, or a chunk of small ones):
// "/peerconf.<job as 16 hex digits>.<pid>.<segment generation>.<nonce as 16 hex digits>".
//
// Segment lifetime and exposure. A segment is anonymous memory (memfd_create), never a file: the
// name only labels it ("/memfd:peerconf.... (deleted)" in /proc/<pid>/fd), so the kernel frees it
// with the last descriptor or mapping of it, whatever ends its processes (a signal, SIGKILL, a
// crash): nothing is ever left in /dev/shm. The allocating process keeps the descriptor until
// its last block's hipFree; another process of the job opens a handle through the owner's
// /proc/<pid>/fd (the
// descriptor whose target is the handle's name), which only the same user (or root) can read,
// and only while the owner lives and the segment is not freed, as HIP lets any process of the
// job open a live allocation's handle. In-process opens map the kept descriptor. The nonce is
// drawn at random for each segment (getrandom) and is part of the name, so a handle with
// another nonce names no segment; an opener maps a segment only if it is this user's, mode 0600
// and exactly the size its handle says; handles carry the job id and the nonce and are refused
// across jobs, generations and nonces.
std::string segmentName(std::uint64_t job, int pid, std::uint64_t generation, std::uint64_t nonce);
std::string segmentName(const HandleInfo& info);

// Removes the /dev/shm/peerconf.* files that builds before memfd segments left, where they
// provably belong to job `job` and their creator is dead: the job id in the name is `job`, the file
// is this user's with mode 0600 (as those builds created them), and the creating pid in the name
// is not alive (ESRCH) in this pid namespace. Everything else is left alone: files of other jobs
// (another run, user, container or pid namespace sharing /dev/shm, whose pids mean nothing here),
// and ones whose owner lives. Returns how many it removed. Runs for this process's job() once, at
// its first mock HIP call.
std::size_t sweepStaleSegments(std::uint64_t job);
// sweepStaleSegments(job()).
std::size_t sweepStaleSegments();

}  // namespace peerconf::mock_hip
