// The registry of layouts (engine.h), with the built-in ones: the reference family, one
// registration a kind, in layout_names.cc's order, the abort word's control, then the low-latency
// layout and its control.
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "layout/engine.h"
#include "layout/layout.h"
#include "layout/layout_names.h"
#include "layout/low_latency.h"
#include "layout/reference.h"
#include "layout/register.h"

namespace peerconf::layout {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, Registered, std::less<>> layouts;
  std::vector<std::string> builtins;  // in their order
};

struct LowLatencyEntry {
  const char* name;
  const char* what;
  LowLatencyKind kind;
  bool control;
};
constexpr LowLatencyEntry kLowLatencyEntries[] = {
    {"low-latency",
     "built in: NCCL's LL with the step's 32-bit epoch beside every 4 payload bytes, no fence",
     LowLatencyKind::kCorrect, false},
    {"low-latency-no-init",
     "built in: control, low-latency without its initOwn hook (an earlier buffer's words pass, C7)",
     LowLatencyKind::kNoInit, true},
    {"low-latency-first-word",
     "built in: control, low-latency whose reader waits for a pair's first word only, its writer "
     "stalled after it (the reader takes older words before the pair was stored, C7)",
     LowLatencyKind::kFirstWordOnly, true},
};

Registry& registry() {
  static Registry* instance = [] {
    auto* r = new Registry;  // never destroyed: ranks may look layouts up at exit
    for (const std::string& name : layoutNames()) {
      const LayoutKind kind = *layoutKindFromName(name);
      ReferenceFamily family;
      family.kind = kind;
      r->layouts[name] = Registered{name, "built in", isNegativeControl(kind),
                                    std::make_shared<EngineOf<ReferenceFamily>>(family)};
      r->builtins.push_back(name);
    }
    // A control of the abort word's generation (reference.h): an earlier life's abort word
    // honoured.
    r->layouts["abort-any-generation"] =
        Registered{"abort-any-generation",
                   "built in: control, the reference protocol honouring an abort word of any "
                   "generation (an earlier life's stops a later run, C8)",
                   true, std::make_shared<EngineOf<AbortAnyGeneration>>(AbortAnyGeneration{})};
    r->builtins.emplace_back("abort-any-generation");
    // A control of C8's abort judging (reference.h): an abort read off the tag's epoch bit.
    r->layouts["abort-bit-in-tag"] =
        Registered{"abort-bit-in-tag",
                   "built in: control, the reference protocol reading the abort bit off the step's "
                   "tag, so at epoch 2^31 every rank aborts mid-run though none gave up (C8)",
                   true, std::make_shared<EngineOf<AbortBitInTag>>(AbortBitInTag{})};
    r->builtins.emplace_back("abort-bit-in-tag");
    // A control of C6's re-arm judging on simulated time (reference.h): a clearing the recorded
    // order shows as safe, the memory model as landing on an unread pair.
    r->layouts["rearm-after-publish"] =
        Registered{"rearm-after-publish",
                   "built in: control, the reference protocol clearing its own receive slot after "
                   "releasing its next push, unordered against the peer's next pair (C6, sim)",
                   true, std::make_shared<EngineOf<RearmAfterPublish>>(RearmAfterPublish{})};
    r->builtins.emplace_back("rearm-after-publish");
    // A control of C6's judging of a store into a rank's own slot, on either clock (reference.h):
    // a race with the last rank's first step that a lower rank going first shows.
    r->layouts["last-rank-clears-at-start"] = Registered{
        "last-rank-clears-at-start",
        "built in: control, the reference protocol whose last rank clears its first step's "
        "receive slots before its first push, unordered against its peers' first pushes (C7)",
        true, std::make_shared<EngineOf<LastRankClearsAtStart>>(LastRankClearsAtStart{})};
    r->builtins.emplace_back("last-rank-clears-at-start");
    // The low-latency layout (low_latency.h), written against the protocol API as a team's own.
    for (const auto& [name, what, kind, control] : kLowLatencyEntries) {
      LowLatency layout;
      layout.kind = kind;
      r->layouts[name] =
          Registered{name, what, control, std::make_shared<EngineOf<LowLatency>>(layout)};
      r->builtins.emplace_back(name);
    }
    return r;
  }();
  return *instance;
}

}  // namespace

void registerEngine(std::string name, std::string what, bool control,
                    std::shared_ptr<const Engine> engine) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  Registered entry{name, std::move(what), control, std::move(engine)};
  r.layouts[std::move(name)] = std::move(entry);
}

void registerGpuLaunch(std::string_view name, GpuLaunch launch) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto found = r.layouts.find(name);
  if (found == r.layouts.end()) {
    throw std::invalid_argument("GPU kernels for layout " + std::string(name) +
                                ", which is not registered (registerLayout it first)");
  }
  found->second.gpuLaunch = std::move(launch);
}

const Registered* findLayout(std::string_view name) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto found = r.layouts.find(name);
  return found == r.layouts.end() ? nullptr : &found->second;
}

std::vector<std::string> registeredLayoutNames() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names = r.builtins;
  for (const auto& [name, entry] : r.layouts) {
    if (std::find(r.builtins.begin(), r.builtins.end(), name) == r.builtins.end()) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace peerconf::layout
