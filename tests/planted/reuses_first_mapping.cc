// ReusesFirstMapping: the production handshake whose address table takes, for every peer, the
// mapping a cache keyed by (rank's backend, rank) kept from the rank's first live buffer, marked
// "PLANTED DEFECT".
#include "planted/reuses_first_mapping.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "handshake.h"

namespace peerconf::planted {

namespace {

// The first live buffer's peer pointers of each rank (the rank's backend tells its runs apart;
// on simulated time every rank shares one thread, so the key holds the rank too).
struct Cached {
  const std::vector<std::int64_t>* owner = nullptr;  // the buffer whose mappings they are
  std::vector<std::int64_t> addresses;
};
using CacheKey = std::pair<const IpcBackend*, int>;

std::mutex& cacheMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<CacheKey, Cached>& cache() {
  static std::map<CacheKey, Cached> entries;
  return entries;
}

class ReusesCachedPeers : public Handshake {
 protected:
  void buildTable() override {
    {
      const std::lock_guard<std::mutex> lock(cacheMutex());
      const auto found = cache().find({&backend(), rank()});
      // PLANTED DEFECT: the cache is keyed by the peer, not by the handle this registration
      // opened: every peer's slot takes the first buffer's mapping (own slot untouched), before
      // the device table is copied, so both tables agree and both name the wrong registration.
      if (found != cache().end() && found->second.addresses.size() == addresses().size()) {
        for (int peer = 0; peer < size(); ++peer) {
          if (peer == rank()) continue;
          addresses()[static_cast<std::size_t>(peer)] =
              found->second.addresses[static_cast<std::size_t>(peer)];
        }
      }
    }
    Handshake::buildTable();
  }
};

}  // namespace

ReusesFirstMapping::ReusesFirstMapping(std::size_t nbytes, IpcBackend& backend, Group* group,
                                       std::string_view label)
    : PeerBuffer(nbytes, backend, group, ReusesCachedPeers(), label), backend_(backend) {
  // Only a buffer that was built fills the cache: its destructor then empties it again.
  const std::lock_guard<std::mutex> lock(cacheMutex());
  cache().try_emplace({&backend_, rank()}, Cached{&addresses(), addresses()});
}

void ReusesFirstMapping::close() {
  forget();
  PeerBuffer::close();
}

ReusesFirstMapping::~ReusesFirstMapping() { forget(); }

void ReusesFirstMapping::forget() noexcept {
  const std::lock_guard<std::mutex> lock(cacheMutex());
  const auto found = cache().find({&backend_, rank()});
  if (found != cache().end() && found->second.owner == &addresses()) cache().erase(found);
}

}  // namespace peerconf::planted
