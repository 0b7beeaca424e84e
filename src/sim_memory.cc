// SimMemory (sim_memory.h): the promising semantics' view machine, without promises.
#include "sim_memory.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

namespace peerconf {

namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kPageBytes = 16384;  // a page of cells: about this, at least one cell

constexpr std::size_t roundUp(std::size_t bytes, std::size_t to) {
  return (bytes + to - 1) / to * to;
}

}  // namespace

SimMemory::SimMemory(int threads, Choices& choices)
    : n_(std::max(threads, 0)),
      choices_(choices),
      masks_((static_cast<std::size_t>(n_) + 63) / 64),
      logsAt_(roundUp(sizeof(Cell) + masks_ * sizeof(std::uint64_t), alignof(Log))),
      clocksAt_(logsAt_ + static_cast<std::size_t>(n_) * sizeof(Log)),
      stride_(roundUp(clocksAt_ + kKept * static_cast<std::size_t>(n_) * sizeof(Epoch), kLine)),
      pageShift_(static_cast<std::size_t>(
          std::bit_width(std::max<std::size_t>(kPageBytes / stride_, 1)) - 1)),
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

void SimMemory::PageFree::operator()(std::byte* page) const noexcept {
  ::operator delete[](page, std::align_val_t{kLine});
}

SimMemory::Page SimMemory::newPage() const {
  const std::size_t bytes = stride_ << pageShift_;
  auto* page = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{kLine}));
  std::memset(page, 0, bytes);  // a zero cell is a word never seen: no message, no log
  return Page(page);
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

SimMemory::Cell& SimMemory::cellOf(std::uintptr_t address) {
  const auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                   [](std::uintptr_t a, const Range& r) { return a < r.begin; });
  Key key = address;
  if (it != ranges_.begin() && address < (it - 1)->end) {
    const Range& range = *(it - 1);
    const std::uintptr_t offset = address - range.begin;
    if (offset % sizeof(Word) == 0) {
      std::vector<Page>& pages = range.table->pages;
      const std::size_t index = offset / sizeof(Word);
      const std::size_t page = index >> pageShift_;
      if (page >= pages.size()) pages.resize(page + 1);
      if (pages[page] == nullptr) pages[page] = newPage();
      return cellAt(pages[page].get(), index & ((std::size_t{1} << pageShift_) - 1));
    }
    key = ((range.object + 1) << 48) | offset;
  }
  auto [found, fresh] = loose_.try_emplace(key, nullptr);
  if (fresh) {
    if (loosePages_.empty() || looseUsed_ == (std::size_t{1} << pageShift_)) {
      loosePages_.push_back(newPage());
      looseUsed_ = 0;
    }
    found->second = &cellAt(loosePages_.back().get(), looseUsed_++);
  }
  return *found->second;
}

SimMemory::Cell& SimMemory::locate(Thread& t, const Word* word) {
  const auto address = reinterpret_cast<std::uintptr_t>(word);
  Thread::Local& local = t.locals[(address >> 3) % kLocals];
  Cell* found = local.address == address ? local.cell : nullptr;
  if (found == nullptr) {
    found = &cellOf(address);
    local = Thread::Local{address, found};
  }
  Cell& cell = *found;
  const Word now = __atomic_load_n(word, __ATOMIC_RELAXED);
  if (cell.count == 0 || cell.messages[cell.count - 1].value != now) {
    // First seen, or written behind the model's back: that value is the word's whole history.
    const Stamp stamp = cell.count == 0 ? kGap : cell.messages[cell.count - 1].stamp + kGap;
    cell.messages[0] = Message{now, stamp};
    cell.clocks[0] = -1;
    cell.count = 1;
    cell.base = stamp;
  }
  return cell;
}

SimMemory::Stamp SimMemory::floor(int thread, const Thread& t, Cell& cell) const {
  // The newest stamp among the accesses this thread knows of: its own, and every other thread's
  // up to the epoch its clock has of that thread. A thread with no log here adds nothing (its
  // log never dropped an access), so only the threads of the cell's mask are read.
  Stamp newest = cell.base;
  const std::uint64_t* masks = masksOf(cell);
  for (std::size_t m = 0; m < masks_; ++m) {
    for (std::uint64_t bits = masks[m]; bits != 0; bits &= bits - 1) {
      const std::size_t u = m * 64 + static_cast<std::size_t>(std::countr_zero(bits));
      const Log& log = logOf(cell, u);
      const Epoch known =
          u == static_cast<std::size_t>(thread) ? std::numeric_limits<Epoch>::max() : t.clock[u];
      Stamp stamp = log.dropped;  // none kept that early: at most the newest dropped (stronger)
      for (std::size_t i = log.size; i-- > 0;) {
        if (log.epochs[i] <= known) {
          stamp = log.stamps[i];
          break;
        }
      }
      newest = std::max(newest, stamp);
    }
  }
  return newest;
}

void SimMemory::logAccess(int thread, const Thread& t, Cell& cell, Stamp stamp) {
  const auto self = static_cast<std::size_t>(thread);
  Log& log = logOf(cell, self);
  if (log.size > 0 && log.stamps[log.size - 1] >= stamp) return;  // known already
  log.epochs[log.size] = t.clock[self];
  log.stamps[log.size] = stamp;
  if (++log.size == kKept) {  // dropped in halves: one move every kHistory
    log.dropped = log.stamps[kHistory - 1];
    std::copy(log.epochs + kHistory, log.epochs + kKept, log.epochs);
    std::copy(log.stamps + kHistory, log.stamps + kKept, log.stamps);
    log.size = kHistory;
  }
  masksOf(cell)[self / 64] |= std::uint64_t{1} << (self % 64);
}

int SimMemory::keepClock(Cell& cell, const Epoch* first, const Epoch* second) {
  if (first == nullptr && second == nullptr) return -1;
  // The lowest slot no kept message uses (kKept slots, at most kKept - 1 messages: one is free).
  unsigned used = 0;
  for (std::size_t i = 0; i < cell.count; ++i) {
    if (cell.clocks[i] >= 0) used |= 1u << static_cast<unsigned>(cell.clocks[i]);
  }
  const int slot = std::countr_one(used);
  Epoch* into = clockOf(cell, static_cast<std::size_t>(slot));
  for (std::size_t u = 0; u < static_cast<std::size_t>(n_); ++u) {
    into[u] = std::max(first != nullptr ? first[u] : 0, second != nullptr ? second[u] : 0);
  }
  return slot;
}

SimMemory::Word SimMemory::load(int thread, const Word* word, bool acquire) {
  Thread& t = at(thread);
  Cell& cell = locate(t, word);
  const Stamp oldest = floor(thread, t, cell);
  const std::size_t count = cell.count;
  std::size_t allowed = 0;
  while (allowed < count && cell.messages[count - 1 - allowed].stamp >= oldest) ++allowed;
  int pick = 0;
  if (allowed > 1) {
    pick = std::clamp(choices_.choose(static_cast<int>(allowed)), 0, static_cast<int>(allowed) - 1);
  }
  const std::size_t index = count - 1 - static_cast<std::size_t>(pick);
  const Message m = cell.messages[index];
  const int clock = cell.clocks[index];  // NOLINT(bugprone-signed-char-misuse): -1 is none
  logAccess(thread, t, cell, m.stamp);
  if (clock >= 0)
    join(acquire ? t.clock : t.acquired, clockOf(cell, static_cast<std::size_t>(clock)));
  return m.value;
}

SimMemory::Stamp SimMemory::place(const Cell& cell, Stamp after, std::size_t& index) {
  // Option 0: after the newest. Then every gap after `after` between two messages, newest first.
  const Message* messages = cell.messages;
  const std::size_t count = cell.count;
  index = count;
  if (messages[count - 1].stamp <= after) return messages[count - 1].stamp + kGap;  // no race
  std::pair<Stamp, std::size_t> options[kKept + 1];
  std::size_t size = 0;
  options[size++] = {messages[count - 1].stamp + kGap, count};
  for (std::size_t i = count; i-- > 0;) {
    if (messages[i].stamp <= after) break;
    const Stamp lower = std::max(i > 0 ? messages[i - 1].stamp : 0, after);
    if (messages[i].stamp - lower >= 2)
      options[size++] = {lower + (messages[i].stamp - lower) / 2, i};
  }
  int pick = 0;
  if (size > 1) {
    pick = std::clamp(choices_.choose(static_cast<int>(size)), 0, static_cast<int>(size) - 1);
  }
  index = options[static_cast<std::size_t>(pick)].second;
  return options[static_cast<std::size_t>(pick)].first;
}

void SimMemory::store(int thread, Word* word, Word value, bool release) {
  Thread& t = at(thread);
  Cell& cell = locate(t, word);
  std::size_t index = 0;
  const Stamp stamp = place(cell, floor(thread, t, cell), index);
  const auto self = static_cast<std::size_t>(thread);
  const auto n = static_cast<std::size_t>(n_);
  int clock = -1;
  if (release) {
    clock = keepClock(cell, t.clock.data(), nullptr);
    if (cell.chains == nullptr) {
      chains_.push_back(std::make_unique<Epoch[]>(n * n));  // zeroed
      cell.chains = chains_.back().get();
    }
    std::copy(t.clock.begin(), t.clock.end(), cell.chains + self * n);
  } else {
    // A relaxed store carries the last release fence's clock, and its release sequence's.
    const bool chained = cell.chains != nullptr && cell.chains[self * n + self] != 0;
    clock = keepClock(cell, t.released[self] != 0 ? t.released.data() : nullptr,
                      chained ? cell.chains + self * n : nullptr);
  }
  if (t.overwrites != nullptr && index > 0) t.overwrites->push_back(cell.messages[index - 1].value);
  const std::size_t count = cell.count;
  const bool newest = index == count;
  std::copy_backward(cell.messages + index, cell.messages + count, cell.messages + count + 1);
  std::copy_backward(cell.clocks + index, cell.clocks + count, cell.clocks + count + 1);
  cell.messages[index] = Message{value, stamp};
  cell.clocks[index] = static_cast<std::int8_t>(clock);
  cell.count = static_cast<std::uint8_t>(count + 1);
  if (newest) __atomic_store_n(word, value, __ATOMIC_RELAXED);
  if (cell.count == kKept) {  // dropped in halves: one move every kHistory stores
    std::copy(cell.messages + kHistory, cell.messages + kKept, cell.messages);
    std::copy(cell.clocks + kHistory, cell.clocks + kKept, cell.clocks);
    cell.count = kHistory;
  }
  logAccess(thread, t, cell, stamp);
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

template <typename Visit>
void SimMemory::forEachCell(Visit visit) {
  const std::size_t perPage = std::size_t{1} << pageShift_;
  for (auto& [object, table] : tables_) {
    for (const Page& page : table.pages) {
      if (page == nullptr) continue;
      for (std::size_t i = 0; i < perPage; ++i) visit(cellAt(page.get(), i));
    }
  }
  for (const auto& [key, cell] : loose_) visit(*cell);
}

void SimMemory::publish(int thread) {
  Thread& t = at(thread);
  forEachCell([&](Cell& cell) {
    if (cell.count == 0) return;
    const Stamp seen = floor(thread, t, cell);
    std::size_t drop = 0;
    while (drop + 1 < cell.count && cell.messages[drop].stamp < seen) ++drop;
    std::copy(cell.messages + drop, cell.messages + cell.count, cell.messages);
    std::copy(cell.clocks + drop, cell.clocks + cell.count, cell.clocks);
    cell.count = static_cast<std::uint8_t>(cell.count - drop);
    cell.base = std::max(cell.base, std::min(seen, cell.messages[0].stamp));
  });
}

void SimMemory::alias(const void* base, std::size_t bytes, std::uint64_t object) {
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  // The object's table: its words wherever it is mapped, made at its first alias.
  const Range range{begin, begin + bytes, object, &tables_[object]};
  std::erase_if(ranges_,
                [&](const Range& r) { return r.begin < range.end && range.begin < r.end; });
  ranges_.insert(std::upper_bound(ranges_.begin(), ranges_.end(), range,
                                  [](const Range& a, const Range& b) { return a.begin < b.begin; }),
                 range);
  // An address may name another word now: every thread looks its words up again.
  for (Thread& t : threads_) std::fill(t.locals.begin(), t.locals.end(), Thread::Local{});
}

}  // namespace peerconf
