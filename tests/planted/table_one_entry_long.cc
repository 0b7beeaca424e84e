// TableOneEntryLong: the production handshake with its table building replaced, marked
// "PLANTED DEFECT".
#include "planted/table_one_entry_long.h"

#include <cstdint>

#include "handshake.h"

namespace peerconf::planted {

namespace {

class LongTable : public Handshake {
 protected:
  void buildTable() override {
    const std::size_t entries = addresses().size();
    // PLANTED DEFECT: one entry more than the group ("room for a sentinel"), never written.
    addressesDevice() = backend().allocDevice((entries + 1) * sizeof(std::int64_t));
    backend().copyToDevice(addressesDevice(), addresses().data(), entries * sizeof(std::int64_t));
  }
};

}  // namespace

TableOneEntryLong::TableOneEntryLong(std::size_t nbytes, IpcBackend& backend, Group* group,
                                     std::string_view label)
    : PeerBuffer(nbytes, backend, group, LongTable(), label) {}

}  // namespace peerconf::planted
