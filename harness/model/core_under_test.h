// CoreUnderTest: what the harness constructs on each rank. The production PeerBuffer by default;
// tests and `peerconf explore`'s demonstrations swap in copies of the core with planted defects
// to show that the checkers catch them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
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

// Constructs one rank's buffer, collectively, exactly as PeerBuffer's constructor does, with the
// label its caller gives it ("" = none; `buffers:`). The harness destroys the buffer itself, after
// the close phase (the "destroy" phase), so that C3 can tell what close() released from what the
// destructor did.
using CoreFactory = std::function<std::unique_ptr<CoreBuffer>(std::size_t nbytes, IpcBackend&,
                                                              Group*, std::string_view label)>;

// Constructs a Buffer with the label where it takes one (PeerBuffer and the planted cores do);
// a class with the seed's three-argument constructor only registers every buffer unlabelled.
template <typename Buffer>
Buffer constructCore(std::size_t nbytes, IpcBackend& backend, Group* group,
                     std::string_view label) {
  if constexpr (std::is_constructible_v<Buffer, std::size_t, IpcBackend&, Group*,
                                        std::string_view>) {
    return Buffer(nbytes, backend, group, label);
  } else {
    return Buffer(nbytes, backend, group);
  }
}

// Adapts any class with PeerBuffer's interface.
template <typename Buffer>
class CoreBufferOf : public CoreBuffer {
 public:
  CoreBufferOf(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label = {})
      : buffer_(constructCore<Buffer>(nbytes, backend, group, label)) {}
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
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<CoreBuffer> {
    return std::make_unique<CoreBufferOf<Buffer>>(nbytes, backend, group, label);
  };
}

// The production core.
inline CoreFactory productionCore() { return coreFactoryOf<PeerBuffer>(); }

// Whether the rank runner in front of the core constructs, given this rank's readiness and what
// the runner's agreement said (`everyone`: every rank was ready). Unset (the default): the seed's
// runner, which constructs only when every rank was ready. A planted runner (tests/planted, named
// by `core:` like a planted core) reads it wrong: a negative control of C5's runner check.
using RunnerDecision = std::function<bool(bool ready, bool everyone)>;

// A planted runtime: wraps the rank's real backend below the harness's fault and recording
// decorators, so that the runtime answers a call otherwise than the real one does (a handle it
// refuses opened, one it opens refused). No core can do this (it sits above the harness's
// decorators), and the judge's fault-without-effect rule has no other way to be shown refusing a
// run on the mocked runtime. Unset (the default): the real backend. A planted one (tests/planted,
// named by `core:` like a planted core) is a negative control of the judge.
using RuntimeDecorator = std::function<std::unique_ptr<IpcBackend>(IpcBackend& real)>;

}  // namespace peerconf::harness::model
