// `peerconf explore --systematic FILE`: the interleavings of a small scenario enumerated instead
// of sampled. The ranks run as threads on simulated time, whose scheduler asks a chooser at every
// choice point (SimClock::setChooser): each data-plane memory operation where another rank could
// run instead, and each time the rank holding the turn blocks with several others runnable. The
// choosers walk the tree of those choices depth first with a preemption bound (CHESS's iterative
// context bounding, Musuvathi and Qadeer, PLDI 2007): an execution may switch away from a rank
// that could go on at most `preemptions` times; switches at blocking points are free. Every
// execution is judged like a suite run (checkers, then the file's expectation). The weak memory's
// choices (sim_memory.h: a load reading a value older than the newest, a racing store placed
// before a newer one) are enumerated too, at most `olderReads` of them an execution. What is not
// enumerated, and said so in the output: call points (seam and group calls) run on without a
// choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "clock.h"
#include "launch/launcher.h"

namespace peerconf::harness::explore {

struct SystematicOptions {
  std::string file;     // the scenario (its ranks run as threads, on sim)
  int preemptions = 2;  // the preemption bound (below 2 exhausts nothing)
  int olderReads = 1;   // the memory's bound: loads of an older value (or stores placed before a
                        // newer one) in one execution
  std::uint64_t maxExecutions = 20000;  // stop after this many (then: bound reached)
  std::uint64_t seed = 0;               // weak memory's draws; 0: the file's seed
  std::string scheduleOut;  // where a failing schedule goes (default: FILE's name + .schedule)
  std::string replay;       // run this schedule once instead of exploring
  bool quiet = false;
  launch::Engine engine = launch::Engine::kFibers;  // what runs the ranks (launch/launcher.h)
};

struct SystematicResult {
  std::uint64_t executions = 0;
  bool exhausted = false;         // every execution within the bound ran
  bool failed = false;            // an execution's judgement failed (its schedule written)
  bool nondeterministic = false;  // a replayed prefix offered other choices
  std::size_t longest = 0;        // choices in the longest execution
  std::string failure;            // the failing execution's summary
  std::string schedulePath;       // where its schedule was written
  int interrupted = 0;            // the signal that ended the walk early (launch/interrupt.h), or 0
  // The self-check: an execution the walk ran outside its bounds (empty: none), as a sentence.
  std::string outOfBounds;
};

// One choice of an execution: how many options there were and which was taken (0: the default,
// the holder going on, or the lowest runnable id when the holder blocked).
struct Choice {
  int options = 0;
  int taken = 0;
  bool preemptive = false;  // the holder could go on: any option but 0 is a preemption
  bool memory = false;      // the memory's: any option but 0 reads (or places) an older value
  // A scheduling choice's ranks: the one holding the turn and the one that runs (-1: memory's).
  // The walk's self-check recounts preemptions from them, not from the option indices.
  int holder = -1;
  int picked = -1;
};

// The preemptions an execution made, recounted from the ranks: a scheduling choice that ran
// another rank than the holder while the holder could go on. And its older reads: a memory choice
// that took another option than the newest. The walk holds every execution to its bounds with
// them (an explorer whose default option is not the holder going on, or whose bound counts the
// wrong choices, runs executions outside its bound: the self-check says so and fails the walk).
int preemptionsMade(const std::vector<Choice>& choices);
int olderReadsMade(const std::vector<Choice>& choices);

// A chooser that follows `prefix` (option indices), then takes option 0, recording every choice.
class PrefixChooser final : public ScheduleChooser {
 public:
  explicit PrefixChooser(std::vector<int> prefix) : prefix_(std::move(prefix)) {}
  int pick(int holder, const std::vector<int>& runnable) override;
  int choose(int options) override;
  const std::vector<Choice>& choices() const { return choices_; }
  // A prefix choice whose option was out of range here (the run did not repeat itself).
  bool diverged() const { return diverged_; }

 private:
  std::vector<int> prefix_;
  std::vector<Choice> choices_;
  bool diverged_ = false;
};

// The next prefix of the depth-first walk after an execution that made `choices`, or false when
// every execution within `preemptions` has run.
bool nextPrefix(const std::vector<Choice>& choices, int preemptions, std::vector<int>& prefix,
                int olderReads = 0);

SystematicResult exploreSystematic(const SystematicOptions& options, std::ostream& out);

// Prints the summary lines; the exit status for it (0 exhausted or bound reached with no failure,
// 1 a failing execution or non-determinism).
int printSystematic(const SystematicResult& result, const SystematicOptions& options,
                    std::ostream& out);

}  // namespace peerconf::harness::explore
