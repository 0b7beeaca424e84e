// CrashesOnOpen: PeerBuffer over a backend whose open is the planted defect, marked
// "PLANTED DEFECT".
#include "planted/crashes_on_open.h"

#include <sys/mman.h>

#include <csignal>
#include <cstdlib>

namespace peerconf::planted {

class CrashesOnOpen::Backend : public IpcBackend {
 public:
  Backend(IpcBackend& real, bool crash) : real_(real), crash_(crash) {}

  int rank() const override { return real_.rank(); }
  DevicePtr allocUncached(std::size_t nbytes) override { return real_.allocUncached(nbytes); }
  DevicePtr allocDevice(std::size_t nbytes) override { return real_.allocDevice(nbytes); }
  void freeDeviceMem(DevicePtr ptr) override { real_.freeDeviceMem(ptr); }
  IpcHandle getMemHandle(DevicePtr ptr) override { return real_.getMemHandle(ptr); }
  DevicePtr openMemHandle(const IpcHandle& handle, int peer) override {
    if (crash_) crash();
    return real_.openMemHandle(handle, peer);
  }
  void closeMemHandle(DevicePtr ptr, int peer) override { real_.closeMemHandle(ptr, peer); }
  void copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) override {
    real_.copyToDevice(dst, src, nbytes);
  }
  void copyToHost(void* dst, DevicePtr src, std::size_t nbytes) override {
    real_.copyToHost(dst, src, nbytes);
  }

 private:
  // PLANTED DEFECT: the handle is read through an index far past the gathered handles. A wild
  // index into the heap only usually faults; this one lands in a page mapped PROT_NONE, so it
  // faults every time. The default action is restored first so that a sanitizer's SIGSEGV
  // handler (ASan reports and exits 1) does not turn the signal into an exit.
  [[noreturn]] static void crash() {
    void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) std::abort();
    std::signal(SIGSEGV, SIG_DFL);
    volatile const unsigned char* handles = static_cast<const unsigned char*>(page);
    const volatile unsigned char past = handles[64];
    (void)past;
    std::abort();  // not reached
  }

  IpcBackend& real_;
  bool crash_;
};

CrashesOnOpen::CrashesOnOpen(std::size_t nbytes, IpcBackend& backend, Group* group,
                             std::string_view label)
    : backend_(std::make_unique<Backend>(
          backend, group != nullptr && group->size() > 1 && group->rank() == group->size() - 1)),
      buffer_(std::make_unique<PeerBuffer>(nbytes, *backend_, group, label)) {}

CrashesOnOpen::~CrashesOnOpen() = default;

}  // namespace peerconf::planted
