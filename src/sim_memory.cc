// SimMemory (sim_memory.h): the promising semantics' view machine, without promises.
#include "sim_memory.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

namespace peerconf {

SimMemory::SimMemory(int threads, Choices& choices)
    : n_(std::max(threads, 0)),
      choices_(choices),
      threads_(static_cast<std::size_t>(n_)),
      sc_(static_cast<std::size_t>(n_), 0) {
  for (int i = 0; i < n_; ++i) {
    Thread& t = threads_[static_cast<std::size_t>(i)];
    t.clock.assign(static_cast<std::size_t>(n_), 0);
    t.clock[static_cast<std::size_t>(i)] = 1;
    t.acquired.assign(static_cast<std::size_t>(n_), 0);
    t.released.assign(static_cast<std::size_t>(n_), 0);
  }
}

SimMemory::Thread& SimMemory::at(int thread) {
  if (thread < 0 || thread >= n_) {
    throw std::out_of_range("SimMemory: no thread " + std::to_string(thread));
  }
  return threads_[static_cast<std::size_t>(thread)];
}

void SimMemory::join(Clock& into, const Epoch* from) {
  for (std::size_t u = 0; u < into.size(); ++u) into[u] = std::max(into[u], from[u]);
}

SimMemory::Key SimMemory::keyOf(const Word* word) const {
  const auto address = reinterpret_cast<std::uintptr_t>(word);
  const auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                   [](std::uintptr_t a, const Range& r) { return a < r.begin; });
  if (it == ranges_.begin()) return address;
  const Range& range = *(it - 1);
  if (address >= range.end) return address;
  return ((range.object + 1) << 48) | (address - range.begin);
}

SimMemory::Location& SimMemory::locate(Thread& t, const Word* word) {
  const auto address = reinterpret_cast<std::uintptr_t>(word);
  Thread::Local& local = t.locals[(address >> 3) % kLocals];
  Location* found = local.address == address ? local.location : nullptr;
  if (found == nullptr) {
    auto [it, fresh] = locations_.try_emplace(keyOf(word));
    found = &it->second;  // nodes stay put: a location is never erased
    if (fresh) {
      found->logs.resize(static_cast<std::size_t>(n_));
      found->clocks.assign(2 * kHistory * static_cast<std::size_t>(n_), 0);
    }
    local = Thread::Local{address, found};
  }
  Location& location = *found;
  std::vector<Message>& messages = location.messages;
  const Word now = __atomic_load_n(word, __ATOMIC_RELAXED);
  if (messages.empty() || messages.back().value != now) {
    // First seen, or written behind the model's back: that value is the word's whole history.
    const Stamp stamp = messages.empty() ? kGap : messages.back().stamp + kGap;
    messages.clear();
    messages.push_back(Message{now, stamp, -1});
    location.base = stamp;
  }
  return location;
}

SimMemory::Stamp SimMemory::floor(int thread, const Thread& t, const Location& location) const {
  // The newest stamp among the accesses this thread knows of: its own, and every other thread's
  // up to the epoch its clock has of that thread.
  Stamp newest = location.base;
  for (int u = 0; u < n_; ++u) {
    const Log& log = location.logs[static_cast<std::size_t>(u)];
    const Epoch known =
        u == thread ? std::numeric_limits<Epoch>::max() : t.clock[static_cast<std::size_t>(u)];
    Stamp stamp = log.dropped;  // none kept that early: at most the newest dropped (stronger)
    for (std::size_t i = log.accesses.size(); i-- > 0;) {
      if (log.accesses[i].epoch <= known) {
        stamp = log.accesses[i].stamp;
        break;
      }
    }
    newest = std::max(newest, stamp);
  }
  return newest;
}

void SimMemory::logAccess(int thread, const Thread& t, Location& location, Stamp stamp) {
  Log& log = location.logs[static_cast<std::size_t>(thread)];
  if (!log.accesses.empty() && log.accesses.back().stamp >= stamp) return;  // known already
  log.accesses.push_back(Access{t.clock[static_cast<std::size_t>(thread)], stamp});
  if (log.accesses.size() == 2 * kHistory) {  // dropped in halves: one move every kHistory
    log.dropped = log.accesses[kHistory - 1].stamp;
    log.accesses.erase(log.accesses.begin(),
                       log.accesses.begin() + static_cast<std::ptrdiff_t>(kHistory));
  }
}

int SimMemory::keepClock(Location& location, const Clock* first, const Epoch* second) {
  if (first == nullptr && second == nullptr) return -1;
  // The lowest slot no kept message uses (2 * kHistory slots: one is free).
  unsigned used = 0;
  for (const Message& m : location.messages) {
    if (m.clock >= 0) used |= 1u << static_cast<unsigned>(m.clock);
  }
  const int slot = std::countr_one(used);
  Epoch* into = &location.clocks[static_cast<std::size_t>(slot) * static_cast<std::size_t>(n_)];
  for (std::size_t u = 0; u < static_cast<std::size_t>(n_); ++u) {
    into[u] = std::max(first != nullptr ? (*first)[u] : 0, second != nullptr ? second[u] : 0);
  }
  return slot;
}

SimMemory::Word SimMemory::load(int thread, const Word* word, bool acquire) {
  Thread& t = at(thread);
  Location& location = locate(t, word);
  const std::vector<Message>& messages = location.messages;
  const Stamp oldest = floor(thread, t, location);
  std::size_t allowed = 0;
  while (allowed < messages.size() && messages[messages.size() - 1 - allowed].stamp >= oldest) {
    ++allowed;
  }
  int pick = 0;
  if (allowed > 1) {
    pick = std::clamp(choices_.choose(static_cast<int>(allowed)), 0, static_cast<int>(allowed) - 1);
  }
  const Message m = messages[messages.size() - 1 - static_cast<std::size_t>(pick)];
  logAccess(thread, t, location, m.stamp);
  if (m.clock >= 0) {
    const Epoch* released =
        &location.clocks[static_cast<std::size_t>(m.clock) * static_cast<std::size_t>(n_)];
    join(acquire ? t.clock : t.acquired, released);
  }
  return m.value;
}

SimMemory::Stamp SimMemory::place(const Location& location, Stamp after, std::size_t& index) {
  // Option 0: after the newest. Then every gap after `after` between two messages, newest first.
  const std::vector<Message>& messages = location.messages;
  index = messages.size();
  if (messages.back().stamp <= after) return messages.back().stamp + kGap;  // no race: the end
  std::vector<std::pair<Stamp, std::size_t>> options{{messages.back().stamp + kGap, index}};
  for (std::size_t i = messages.size(); i-- > 0;) {
    if (messages[i].stamp <= after) break;
    const Stamp lower = std::max(i > 0 ? messages[i - 1].stamp : 0, after);
    if (messages[i].stamp - lower >= 2)
      options.emplace_back(lower + (messages[i].stamp - lower) / 2, i);
  }
  int pick = 0;
  if (options.size() > 1) {
    pick = std::clamp(choices_.choose(static_cast<int>(options.size())), 0,
                      static_cast<int>(options.size()) - 1);
  }
  index = options[static_cast<std::size_t>(pick)].second;
  return options[static_cast<std::size_t>(pick)].first;
}

void SimMemory::store(int thread, Word* word, Word value, bool release) {
  Thread& t = at(thread);
  Location& location = locate(t, word);
  std::size_t index = 0;
  const Stamp stamp = place(location, floor(thread, t, location), index);
  const auto self = static_cast<std::size_t>(thread);
  const auto n = static_cast<std::size_t>(n_);
  int clock = -1;
  if (release) {
    clock = keepClock(location, &t.clock, nullptr);
    if (location.chains.empty()) location.chains.assign(n * n, 0);
    std::copy(t.clock.begin(), t.clock.end(),
              location.chains.begin() + static_cast<std::ptrdiff_t>(self * n));
  } else {
    // A relaxed store carries the last release fence's clock, and its release sequence's.
    const bool chained = !location.chains.empty() && location.chains[self * n + self] != 0;
    clock = keepClock(location, t.released[self] != 0 ? &t.released : nullptr,
                      chained ? &location.chains[self * n] : nullptr);
  }
  std::vector<Message>& messages = location.messages;
  if (t.overwrites != nullptr && index > 0) t.overwrites->push_back(messages[index - 1].value);
  const bool newest = index == messages.size();
  messages.insert(messages.begin() + static_cast<std::ptrdiff_t>(index),
                  Message{value, stamp, clock});
  if (newest) __atomic_store_n(word, value, __ATOMIC_RELAXED);
  if (messages.size() == 2 * kHistory) {  // dropped in halves: one move every kHistory stores
    messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(kHistory));
  }
  logAccess(thread, t, location, stamp);
  if (release) ++t.clock[self];  // what follows is not published by this release
}

void SimMemory::recordOverwrites(int thread, std::vector<Word>* into) {
  at(thread).overwrites = into;
}

void SimMemory::fence(int thread, Fence kind) {
  Thread& t = at(thread);
  const auto self = static_cast<std::size_t>(thread);
  if (kind == Fence::kAcquire || kind == Fence::kSeqCst) join(t.clock, t.acquired.data());
  if (kind == Fence::kSeqCst) {
    join(t.clock, sc_.data());
    sc_ = t.clock;
  }
  if (kind == Fence::kRelease || kind == Fence::kSeqCst) {
    t.released = t.clock;
    ++t.clock[self];
  }
}

void SimMemory::publish(int thread) {
  Thread& t = at(thread);
  for (auto& [key, location] : locations_) {
    if (location.messages.empty()) continue;
    const Stamp seen = floor(thread, t, location);
    std::vector<Message>& messages = location.messages;
    std::size_t drop = 0;
    while (drop + 1 < messages.size() && messages[drop].stamp < seen) ++drop;
    messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(drop));
    location.base = std::max(location.base, std::min(seen, messages.front().stamp));
  }
}

void SimMemory::alias(const void* base, std::size_t bytes, std::uint64_t object) {
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  const Range range{begin, begin + bytes, object};
  std::erase_if(ranges_,
                [&](const Range& r) { return r.begin < range.end && range.begin < r.end; });
  ranges_.insert(std::upper_bound(ranges_.begin(), ranges_.end(), range,
                                  [](const Range& a, const Range& b) { return a.begin < b.begin; }),
                 range);
  // An address may name another word now: every thread looks its words up again.
  for (Thread& t : threads_) std::fill(t.locals.begin(), t.locals.end(), Thread::Local{});
}

}  // namespace peerconf
