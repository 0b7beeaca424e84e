// CoreUnderTest: what the harness constructs on each rank. The production PeerBuffer by default;
// tests and `peerconf explore`'s demonstrations swap in copies of the core with planted defects
// to show that the checkers catch them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "group.h"
#include "ipc_backend.h"
#include "peer_buffer.h"

namespace peerconf::harness::model {

// The part of PeerBuffer's interface the harness uses.
class CoreBuffer {
 public:
  virtual ~CoreBuffer() = default;
  virtual int size() const = 0;
  virtual DeviceBytes bytes() const = 0;
  virtual const std::vector<std::int64_t>& addresses() const = 0;
  // The device table the kernels read (C4 reads it back and compares it with addresses()).
  virtual DevicePtr addressesDevice() const = 0;
  virtual void close() = 0;
};

// Constructs one rank's buffer, collectively, exactly as PeerBuffer's constructor does. The
// harness destroys the buffer itself, after the close phase (the "destroy" phase), so that C3
// can tell what close() released from what the destructor did.
using CoreFactory =
    std::function<std::unique_ptr<CoreBuffer>(std::size_t nbytes, IpcBackend&, Group*)>;

// Adapts any class with PeerBuffer's interface.
template <typename Buffer>
class CoreBufferOf : public CoreBuffer {
 public:
  CoreBufferOf(std::size_t nbytes, IpcBackend& backend, Group* group)
      : buffer_(nbytes, backend, group) {}
  int size() const override { return buffer_.size(); }
  DeviceBytes bytes() const override { return buffer_.bytes(); }
  const std::vector<std::int64_t>& addresses() const override { return buffer_.addresses(); }
  DevicePtr addressesDevice() const override { return buffer_.addressesDevice(); }
  void close() override { buffer_.close(); }
  Buffer& buffer() { return buffer_; }

 private:
  Buffer buffer_;
};

template <typename Buffer>
CoreFactory coreFactoryOf() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group) -> std::unique_ptr<CoreBuffer> {
    return std::make_unique<CoreBufferOf<Buffer>>(nbytes, backend, group);
  };
}

// The production core.
inline CoreFactory productionCore() { return coreFactoryOf<PeerBuffer>(); }

}  // namespace peerconf::harness::model
