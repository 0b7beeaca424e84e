// The device seam: allocation and IPC mapping of peer memory. Production code reaches HIP, CUDA
// or the mocked HIP runtime only through this interface.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace peerconf {

// A device address as the kernels see it (stored as int64 in PeerBuffer::addresses).
using DevicePtr = std::uint64_t;

// An IPC handle: a fixed-size block of bytes, the same size as hipIpcMemHandle_t and
// cudaIpcMemHandle_t, so it travels through an all-gather as raw bytes.
struct IpcHandle {
  static constexpr std::size_t kSize = 64;
  std::array<std::byte, kSize> bytes{};
  friend bool operator==(const IpcHandle&, const IpcHandle&) = default;
};
static_assert(std::is_trivially_copyable_v<IpcHandle>);
static_assert(sizeof(IpcHandle) == IpcHandle::kSize);

// Every method throws BackendError (op, rank, peer, runtime code and text) on failure and never
// returns a null pointer. One object serves one rank; it is not shared between ranks.
class IpcBackend {
 public:
  IpcBackend() = default;
  IpcBackend(const IpcBackend&) = delete;
  IpcBackend& operator=(const IpcBackend&) = delete;
  virtual ~IpcBackend() = default;

  // The TP rank this backend serves (for error fields).
  virtual int rank() const = 0;
  // Allocates `nbytes` of uncached device memory that peers can map. Its contents are undefined.
  virtual DevicePtr allocUncached(std::size_t nbytes) = 0;
  // Allocates ordinary device memory (the addresses table).
  virtual DevicePtr allocDevice(std::size_t nbytes) = 0;
  // Frees memory from allocUncached or allocDevice, exactly once.
  virtual void freeDeviceMem(DevicePtr ptr) = 0;
  // Exports `ptr` (from allocUncached) for peers.
  virtual IpcHandle getMemHandle(DevicePtr ptr) = 0;
  // Maps `peer`'s exported buffer into this rank's address space; `peer` labels errors and faults.
  virtual DevicePtr openMemHandle(const IpcHandle& handle, int peer) = 0;
  // Unmaps a pointer returned by openMemHandle, exactly once.
  virtual void closeMemHandle(DevicePtr ptr, int peer) = 0;
  // Copies host bytes to device memory (synchronous).
  virtual void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) = 0;
  // Copies device bytes to host memory (synchronous).
  virtual void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) = 0;
};

}  // namespace peerconf
