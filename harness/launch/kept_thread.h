// KeptThread: a thread kept between runs that runs one job at a time (the rank pool's threads, the
// fibers' host), and the process's fiber hosts: starting a thread a run costs a clone and a
// wake-up on each side, a large part of a short case.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace peerconf::harness::launch {

class KeptThread : public std::enable_shared_from_this<KeptThread> {
 public:
  // Made by start() only: the thread holds its KeptThread alive through a shared_ptr, so that an
  // abandoned one (stop without join) may finish on its own.
  static std::shared_ptr<KeptThread> start();
  ~KeptThread() = default;
  KeptThread(const KeptThread&) = delete;
  KeptThread& operator=(const KeptThread&) = delete;

  // Runs `job` on the thread once the job before it has returned.
  void submit(std::function<void()> job);
  // Blocks until the thread's job has returned (at once when it has none).
  void waitIdle();
  // Ends the thread after its current job; joins it when `join`, else leaves it to end on its own
  // (a job stuck past a run's bound: never waited on).
  void stop(bool join);

 private:
  KeptThread() = default;
  void loop();

  enum State : int { kIdle, kBusy, kStopping };
  std::thread thread_;
  std::atomic<int> state_{kIdle};  // std::atomic's wait and notify: a futex only when one waits
  std::function<void()> job_;      // written by submit while kIdle, read by the thread in kBusy
};

// The hosts of fiber runs (the fiber engine's one OS thread a run): kept threads taken for a run
// and given back after it, so that a case starts no thread. A host a run abandoned (a rank stuck
// without a clock point past the run's bound) is never given back; a forked child starts afresh
// (threads do not survive fork).
class FiberHosts {
 public:
  static std::shared_ptr<KeptThread> take();
  static void giveBack(std::shared_ptr<KeptThread> host);
  // Ends and joins every idle host (a run's host stays its run's). Called before a fork: a process
  // forked with threads alive may not start threads under ThreadSanitizer, and the isolated
  // child's runs start their own hosts.
  static void stopIdle();
};

}  // namespace peerconf::harness::launch
