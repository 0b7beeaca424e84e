// KeptThread's hand-over through one atomic word, and the process's idle fiber hosts.
#include "launch/kept_thread.h"

#include <pthread.h>

#include <mutex>
#include <vector>

namespace peerconf::harness::launch {

std::shared_ptr<KeptThread> KeptThread::start() {
  std::shared_ptr<KeptThread> kept(new KeptThread());
  kept->thread_ = std::thread([self = kept] { self->loop(); });
  return kept;
}

void KeptThread::loop() {
  for (;;) {
    state_.wait(kIdle, std::memory_order_acquire);
    if (state_.load(std::memory_order_acquire) == kStopping) return;
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    job();
    job = nullptr;  // its captures die on this thread, before the caller learns it is idle
    int busy = kBusy;
    if (!state_.compare_exchange_strong(busy, kIdle, std::memory_order_acq_rel)) return;
    state_.notify_all();
  }
}

void KeptThread::submit(std::function<void()> job) {
  waitIdle();
  job_ = std::move(job);
  state_.store(kBusy, std::memory_order_release);
  state_.notify_all();
}

void KeptThread::waitIdle() {
  for (int spin = 0; spin < 64 && state_.load(std::memory_order_acquire) == kBusy; ++spin) {
    std::this_thread::yield();
  }
  while (state_.load(std::memory_order_acquire) == kBusy) {
    state_.wait(kBusy, std::memory_order_acquire);
  }
}

void KeptThread::stop(bool join) {
  if (join) waitIdle();
  state_.store(kStopping, std::memory_order_release);
  state_.notify_all();
  if (join) {
    thread_.join();
  } else {
    thread_.detach();
  }
}

namespace {

struct Hosts {
  std::mutex mutex;
  std::vector<std::shared_ptr<KeptThread>> idle;
};

// Never destroyed: a host may be given back during static destruction, and a forked child's copy
// holds threads that do not exist in it (forgotten there, never joined).
Hosts& hosts() {
  static Hosts* const all = [] {
    auto* made = new Hosts();
    // The list's mutex held across fork (never copied locked), and the child's hosts forgotten.
    ::pthread_atfork([] { hosts().mutex.lock(); }, [] { hosts().mutex.unlock(); },
                     [] {
                       auto* forgotten = new std::vector<std::shared_ptr<KeptThread>>();
                       forgotten->swap(hosts().idle);  // never destroyed (see above)
                       hosts().mutex.unlock();
                     });
    return made;
  }();
  return *all;
}

}  // namespace

std::shared_ptr<KeptThread> FiberHosts::take() {
  Hosts& all = hosts();
  {
    std::lock_guard lock(all.mutex);
    if (!all.idle.empty()) {
      std::shared_ptr<KeptThread> host = std::move(all.idle.back());
      all.idle.pop_back();
      return host;
    }
  }
  return KeptThread::start();
}

void FiberHosts::giveBack(std::shared_ptr<KeptThread> host) {
  Hosts& all = hosts();
  std::lock_guard lock(all.mutex);
  all.idle.push_back(std::move(host));
}

void FiberHosts::stopIdle() {
  std::vector<std::shared_ptr<KeptThread>> idle;
  {
    Hosts& all = hosts();
    std::lock_guard lock(all.mutex);
    idle.swap(all.idle);
  }
  for (const std::shared_ptr<KeptThread>& host : idle) host->stop(/*join=*/true);
}

}  // namespace peerconf::harness::launch
