// The planted cores around the production PeerBuffer; each defect is marked "PLANTED DEFECT".
#include "planted/wrapped_defects.h"

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "errors.h"
#include "peer_buffer.h"

namespace peerconf::planted {

namespace {

// Forwards everything to a production PeerBuffer; the defects override what they change.
class Wrapped : public harness::model::CoreBuffer {
 public:
  Wrapped(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label)
      : backend_(backend), buffer_(nbytes, backend, group, label) {}
  int size() const override { return buffer_.size(); }
  DeviceBytes bytes() const override { return buffer_.bytes(); }
  const std::vector<std::int64_t>& addresses() const override { return buffer_.addresses(); }
  DevicePtr addressesDevice() const override { return buffer_.addressesDevice(); }
  void close() override { buffer_.close(); }

 protected:
  IpcBackend& backend_;
  PeerBuffer buffer_;
};

class ClosesInDestructor : public Wrapped {
 public:
  using Wrapped::Wrapped;
  // PLANTED DEFECT: releases nothing; ~PeerBuffer releases it all when the object is destroyed.
  void close() override {}
};

class SwallowsOneReleaseFailure : public Wrapped {
 public:
  using Wrapped::Wrapped;
  void close() override {
    try {
      buffer_.close();
    } catch (const CloseError& e) {
      // PLANTED DEFECT: a single failed release is "not worth reporting".
      if (e.failures().size() != 1) throw;
    }
  }
};

class PermutedDeviceTable : public Wrapped {
 public:
  PermutedDeviceTable(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label)
      : Wrapped(nbytes, backend, group, label) {
    // PLANTED DEFECT: the table the kernels read is rotated by one slot.
    const auto& host = buffer_.addresses();
    std::vector<std::int64_t> rotated(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) rotated[i] = host[(i + 1) % host.size()];
    backend_.copyToDevice(buffer_.addressesDevice(), rotated.data(),
                          rotated.size() * sizeof(std::int64_t));
  }
};

class UnwrittenDeviceTable : public Wrapped {
 public:
  UnwrittenDeviceTable(std::size_t nbytes, IpcBackend& backend, Group* group,
                       std::string_view label)
      : Wrapped(nbytes, backend, group, label) {
    // PLANTED DEFECT: a table of the right size, never written.
    table_ = backend_.allocDevice(buffer_.addresses().size() * sizeof(std::int64_t));
  }
  ~UnwrittenDeviceTable() override {
    try {
      release();
    } catch (...) {
      // As ~PeerBuffer: errors are close()'s to report.
    }
  }
  DevicePtr addressesDevice() const override { return table_; }
  void close() override {
    release();
    buffer_.close();
  }

 private:
  void release() {
    if (table_ != 0) backend_.freeDeviceMem(std::exchange(table_, 0));
  }
  DevicePtr table_ = 0;
};

class ShortDeviceTable : public UnwrittenDeviceTable {
 public:
  ShortDeviceTable(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label)
      : UnwrittenDeviceTable(nbytes, backend, group, label) {
    // PLANTED DEFECT: the copy's length is one entry short (an off-by-one in the byte count), so
    // the last rank's slot is never written.
    const auto& host = buffer_.addresses();
    if (host.size() > 1) {
      backend_.copyToDevice(addressesDevice(), host.data(),
                            (host.size() - 1) * sizeof(std::int64_t));
    }
  }
};

template <typename Core>
harness::model::CoreFactory factoryOf() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    return std::make_unique<Core>(nbytes, backend, group, label);
  };
}

}  // namespace

harness::model::CoreFactory closesInDestructorCore() { return factoryOf<ClosesInDestructor>(); }
harness::model::CoreFactory swallowsOneReleaseFailureCore() {
  return factoryOf<SwallowsOneReleaseFailure>();
}
harness::model::CoreFactory permutedDeviceTableCore() { return factoryOf<PermutedDeviceTable>(); }
harness::model::CoreFactory unwrittenDeviceTableCore() { return factoryOf<UnwrittenDeviceTable>(); }
harness::model::CoreFactory shortDeviceTableCore() { return factoryOf<ShortDeviceTable>(); }

namespace {

// The production PeerBuffer whose HandshakeError passes through `replace(error, rank)`: the error
// it returns is raised instead (the planted defect), std::nullopt rethrows the original.
template <typename Replace>
harness::model::CoreFactory replacingHandshakeError(Replace replace) {
  return [replace](std::size_t nbytes, IpcBackend& backend, Group* group,
                   std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    try {
      return std::make_unique<harness::model::CoreBufferOf<PeerBuffer>>(nbytes, backend, group,
                                                                        label);
    } catch (const HandshakeError& e) {
      if (auto other = replace(e, group != nullptr ? group->rank() : 0)) throw *other;
      throw;
    }
  };
}

}  // namespace

harness::model::CoreFactory chainsWrongCauseCore() {
  return replacingHandshakeError([](const HandshakeError& e,
                                    int rank) -> std::optional<HandshakeError> {
    if (!e.thisRank()) return std::nullopt;
    // PLANTED DEFECT: chains an allocation failure instead of the error that failed.
    return HandshakeError(
        rank, true,
        std::make_exception_ptr(BackendError(Op::kAlloc, rank, kNoPeer, 2, "hipErrorOutOfMemory")),
        e.cleanupErrors());
  });
}

harness::model::CoreFactory claimsEveryFailureCore() {
  return replacingHandshakeError(
      [](const HandshakeError& e, int rank) -> std::optional<HandshakeError> {
        if (e.thisRank()) return std::nullopt;
        // PLANTED DEFECT: a rank that learnt of another rank's failure reports it as its own.
        return HandshakeError(rank, true, nullptr, e.cleanupErrors());
      });
}

}  // namespace peerconf::planted
