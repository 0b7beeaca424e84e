// Isolation: thread-mode runs in a child process, so that a core that crashes (a signal, an
// exit, a hang past the run's bound) fails its scenario instead of taking the harness down.
//
// The child streams every event a rank records to this process as it is recorded (into a ring
// in memory shared with this process: a crash keeps every event committed before it, and
// streaming costs no system call), then sends the run's record over a socket in a binary frame
// (model/record_binary.h; a reused child gets its scenario the same way: a case crosses as no
// text). A
// child that dies without a record, or that has not reported by the run's bound + kChildSlack (it
// is then SIGKILLed), gives a record of its own: every rank missing with the events it streamed,
// the fault sites those show firing, and a harness error naming the signal (or exit status, or the
// bound) and every rank's last event — a FAIL like any other, in every report. Each child allocates
// under a mocked-runtime job id of its own (setJob); what it allocated goes with it, however it
// ends (the mocked runtime's segments are memfds: mock_hip/control.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "launch/launcher.h"
#include "launch/thread_launcher.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::launch {

// How long past a run's bound (launcher.h) a child may take to report before it is killed: the
// launchers themselves give up on a rank 5 s past the bound (several bounds on simulated time:
// wallBounds, launcher.h); this covers that and a loaded box.
inline constexpr std::chrono::milliseconds kChildSlack{15000};

class EventRing;  // isolation.cc: the child's events, in memory shared with this process

using LaunchFunction = std::function<model::RunRecord(const model::Scenario&, std::uint64_t seed,
                                                      const LaunchOptions&)>;

// Interrupts (interrupt.h): a child ignores SIGINT, SIGTERM and SIGHUP and dies with this process;
// this process, once interrupted, SIGKILLs and reaps the child of the run under way and throws
// Interrupted (and at once, without starting one, when the interrupt came before the run).

// `launch(scenario, seed, options)` (runThreads by default) in a child process forked for this
// run alone; the record it sent, or the record of its crash. `slack`: tests only.
model::RunRecord runInChild(const model::Scenario& scenario, std::uint64_t seed,
                            const LaunchOptions& options, const LaunchFunction& launch = runThreads,
                            std::chrono::milliseconds slack = kChildSlack);

// One child that runs case after case (exploration: a fork per batch of cases, not per case).
// Forked at the first run and again after a run that ended it (a crash, a hang) or that left a
// rank behind (an abandoned rank thread could disturb the next case). `makeLaunch` runs in the
// child, once, after the fork (so that what it builds, a rank pool's threads say, is the
// child's); `options` are the options of every run.
class ChildWorker {
 public:
  ChildWorker(LaunchOptions options, std::function<LaunchFunction()> makeLaunch);
  ~ChildWorker();  // ends the child and reaps it
  ChildWorker(const ChildWorker&) = delete;
  ChildWorker& operator=(const ChildWorker&) = delete;

  model::RunRecord run(const model::Scenario& scenario, std::uint64_t seed);
  int childrenStarted() const noexcept { return started_; }

 private:
  void start();
  void stop();  // SIGKILL, reap
  // Ends the child (SIGKILL first when `kill`) and reaps it; its wait status.
  int endChild(bool kill);

  LaunchOptions options_;
  std::function<LaunchFunction()> makeLaunch_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::uint64_t job_ = 0;
  std::unique_ptr<EventRing> ring_;
  int started_ = 0;
};

}  // namespace peerconf::harness::launch
