// AcceptsLongExchange: the production core over a group whose all-gather result is cut to the
// group's size, marked "PLANTED DEFECT".
#include "planted/accepts_long_exchange.h"

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "group.h"
#include "peer_buffer.h"

namespace peerconf::planted {

namespace {

// The core's group with the exchange's result cut to size() entries; everything else forwarded.
class FirstEntriesOnly : public Group {
 public:
  explicit FirstEntriesOnly(Group& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int allReduceMin(int value) override { return inner_.allReduceMin(value); }
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> bytes) override {
    std::vector<std::vector<std::byte>> entries = inner_.allGather(bytes);
    // PLANTED DEFECT: "one entry a rank": the first size() are read, the rest ignored, so a list
    // of the wrong length is never noticed.
    if (entries.size() > static_cast<std::size_t>(size())) {
      entries.resize(static_cast<std::size_t>(size()));
    }
    return entries;
  }

 private:
  Group& inner_;
};

}  // namespace

harness::model::CoreFactory acceptsLongExchangeCore() {
  return [](std::size_t nbytes, IpcBackend& backend, Group* group,
            std::string_view label) -> std::unique_ptr<harness::model::CoreBuffer> {
    using Production = harness::model::CoreBufferOf<PeerBuffer>;
    if (group == nullptr) return std::make_unique<Production>(nbytes, backend, group, label);
    // PeerBuffer keeps no group past its constructor.
    FirstEntriesOnly firstOnly(*group);
    return std::make_unique<Production>(nbytes, backend, &firstOnly, label);
  };
}

}  // namespace peerconf::planted
