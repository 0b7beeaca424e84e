// The planted cores around the production PeerBuffer; each defect is marked "PLANTED DEFECT".
#include "planted/wrapped_defects.h"

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "errors.h"
#include "launch/rank_runner.h"
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

class OwnSlotHoldsRank0 : public Wrapped {
 public:
  OwnSlotHoldsRank0(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label)
      : Wrapped(nbytes, backend, group, label), table_(buffer_.addresses()) {
    // PLANTED DEFECT: the own slot is filled from rank 0's entry, right on rank 0 only.
    const auto rank = static_cast<std::size_t>(group != nullptr ? group->rank() : 0);
    if (rank != 0 && rank < table_.size()) table_[rank] = table_[0];
  }
  const std::vector<std::int64_t>& addresses() const override { return table_; }
  // Its copy goes with close(), as PeerBuffer's own table does: the one defect is the own slot.
  void close() override {
    table_.clear();
    buffer_.close();
  }

 private:
  std::vector<std::int64_t> table_;
};

class ClosesMappingsTwice : public Wrapped {
 public:
  ClosesMappingsTwice(std::size_t nbytes, IpcBackend& backend, Group* group, std::string_view label)
      : Wrapped(nbytes, backend, group, label), rank_(group != nullptr ? group->rank() : 0) {}
  void close() override {
    // PLANTED DEFECT: unmaps the peers itself, then PeerBuffer::close() unmaps them again. (Empty
    // after the first close(): a second close() stays a no-op.)
    const std::vector<std::int64_t>& mapped = buffer_.addresses();
    for (std::size_t peer = 0; peer < mapped.size(); ++peer) {
      if (static_cast<int>(peer) == rank_) continue;
      try {
        backend_.closeMemHandle(static_cast<DevicePtr>(mapped[peer]), static_cast<int>(peer));
      } catch (const std::exception&) {
        // "Best effort": PeerBuffer::close() reports failures.
      }
    }
    buffer_.close();
  }

 private:
  int rank_;
};

class KeepsTablesAfterClose : public Wrapped {
 public:
  KeepsTablesAfterClose(std::size_t nbytes, IpcBackend& backend, Group* group,
                        std::string_view label)
      : Wrapped(nbytes, backend, group, label),
        bytes_(buffer_.bytes()),
        addresses_(buffer_.addresses()),
        table_(buffer_.addressesDevice()) {}
  // PLANTED DEFECT: what the kernels' launches need is kept by the wrapper and never cleared:
  // after close() released the mappings, the buffer and the table, bytes() still views the freed
  // buffer, addresses() holds the unmapped peers' addresses and addressesDevice() the freed table.
  DeviceBytes bytes() const override { return bytes_; }
  const std::vector<std::int64_t>& addresses() const override { return addresses_; }
  DevicePtr addressesDevice() const override { return table_; }

 private:
  DeviceBytes bytes_;
  std::vector<std::int64_t> addresses_;
  DevicePtr table_;
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
harness::model::CoreFactory ownSlotHoldsRank0Core() { return factoryOf<OwnSlotHoldsRank0>(); }
harness::model::CoreFactory closesMappingsTwiceCore() { return factoryOf<ClosesMappingsTwice>(); }
harness::model::CoreFactory keepsTablesAfterCloseCore() {
  return factoryOf<KeepsTablesAfterClose>();
}

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

harness::model::CoreFactory chainsWrongPeerCore() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    try {
      return std::make_unique<harness::model::CoreBufferOf<PeerBuffer>>(nbytes, backend, group,
                                                                        label);
    } catch (const HandshakeError& e) {
      const int rank = group != nullptr ? group->rank() : 0;
      const int size = group != nullptr ? group->size() : 1;
      if (!e.thisRank() || !e.cause() || size < 3) throw;
      try {
        std::rethrow_exception(e.cause());
      } catch (const BackendError& cause) {
        if (cause.peer() == kNoPeer) throw e;
        // PLANTED DEFECT: the failed call's own error (operation, code, text) is chained, but
        // labelled with the next peer in rank order (its own rank skipped), as a loop that names
        // the peer after advancing its index does.
        int wrong = (cause.peer() + 1) % size;
        if (wrong == rank) wrong = (wrong + 1) % size;
        throw HandshakeError(
            rank, true,
            std::make_exception_ptr(BackendError(cause.op(), cause.rank(), wrong, cause.code(),
                                                 cause.codeText(), cause.call(), cause.where())),
            e.cleanupErrors());
      } catch (...) {
        throw e;
      }
    }
  };
}

harness::model::RunnerDecision constructsAfterNoRunner() {
  // PLANTED DEFECT: the agreement's answer is never read.
  return [](bool ready, bool /*everyone*/) { return ready; };
}

harness::model::CoreFactory namesMissingOnRank0Core() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    try {
      return std::make_unique<harness::model::CoreBufferOf<PeerBuffer>>(nbytes, backend, group,
                                                                        label);
    } catch (const GroupTimeout& e) {
      if (e.rank() == 0 || e.missing().empty()) throw;
      // PLANTED DEFECT: diagnostics are rank 0's: every other rank rethrows the timeout of the
      // same call and deadline without the ranks it named.
      GroupTimeout bare(e.op(), e.rank(), e.deadlineSeconds());
      if (e.cause()) bare.attachCause(e.cause());
      throw bare;
    }
  };
}

harness::model::CoreFactory claimsEveryFailureCore() {
  return replacingHandshakeError(
      [](const HandshakeError& e, int rank) -> std::optional<HandshakeError> {
        if (e.thisRank()) return std::nullopt;
        // PLANTED DEFECT: a rank that learnt of another rank's failure reports it as its own.
        return HandshakeError(rank, true, nullptr, e.cleanupErrors());
      });
}

namespace {

// The core's group with the agreement's result read inverted; everything else forwarded.
class InvertedMin : public Group {
 public:
  explicit InvertedMin(Group& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  // PLANTED DEFECT: the MIN read the wrong way round (the all-reduce itself, as recorded, is
  // right).
  int allReduceMin(int value) override { return inner_.allReduceMin(value) != 0 ? 0 : 1; }
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override {
    return inner_.allGather(bytes);
  }

 private:
  Group& inner_;
};

}  // namespace

harness::model::CoreFactory readsAgreementInvertedCore() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    using Production = harness::model::CoreBufferOf<PeerBuffer>;
    if (group == nullptr) return std::make_unique<Production>(nbytes, backend, group, label);
    // PeerBuffer keeps no group past its constructor.
    InvertedMin inverted(*group);
    return std::make_unique<Production>(nbytes, backend, &inverted, label);
  };
}

harness::model::CoreFactory exitsOnOwnFailureCore() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    try {
      return std::make_unique<harness::model::CoreBufferOf<PeerBuffer>>(nbytes, backend, group,
                                                                        label);
    } catch (const HandshakeError& e) {
      if (!e.thisRank()) throw;
      // PLANTED DEFECT: CUDACHECK -> exit(1) on the rank that failed. A thread cannot end its
      // process: it stops as a planted exit stops it, after the agreement told the others.
      throw harness::launch::RankStopped{harness::model::RankStatus::kExited,
                                         harness::model::Point::kAgree, 1};
    }
  };
}

}  // namespace peerconf::planted
