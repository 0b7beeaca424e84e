// SimMemory: the weak memory of simulated time, a model you can name. It is the view-based
// machine of the promising semantics (Kang, Hur, Lahav, Vafeiadis, Dreyer, "A promising semantics
// for relaxed-memory concurrency", POPL 2017) without promises and without read-modify-writes:
// the operational form of RC11's release/acquire/relaxed/seq_cst fragment (Lahav et al., PLDI 2017)
// that an executing simulator can run. GPU scopes follow the PTX model (Lustig et al., ASPLOS
// 2019): the caller (ClockedMemOps) runs an access or fence narrower than system scope as relaxed
// or as nothing, because every thread here is a rank on its own GPU.
//
// Every word keeps its last kHistory to 2 * kHistory stores (messages), ordered by a timestamp
// (the modification order). Each thread has views: for each word, the oldest timestamp it may
// still read (`cur`), and what an acquire fence would raise it to (`acq`); they are kept as vector
// clocks and per-word access logs (below), not as a timestamp for every word. A load may return any
// message at or after its thread's view of the word (a load satisfied early: an older value, unless
// something ordered it); an acquire load or fence takes the view the message was released with. A
// store takes any free timestamp after its thread's view (normally the end: placed before a newer
// store of another thread, it never reaches memory); a release store carries the thread's view, a
// relaxed one the view of the thread's last release fence (and of its last release store to that
// word: a release sequence). A seq_cst fence joins the thread's view with a global one, both ways.
// What it cannot produce is what needs speculation: load buffering (a load reading a store that
// its own thread's later events lead to).
//
// The real word always holds the newest message's value (what a checker, a memcpy or the next run
// sees). A word changed behind the model's back (a host write, the mocked runtime's memcpy, an
// earlier run) is seen at its next access and replaces the word's history. Choices (which message
// a load reads, where a store lands when it races) are asked of a Choices object, option 0 being
// the newest; systematic exploration enumerates them.
//
// Where a word's state lives (issue 43, item 4): an aliased object (a rank's buffer, wherever it is
// mapped) has a table indexed by (address - base) / 8, paged and allocated at first touch; a word's
// whole state (its messages, each thread's access log, the release clocks) is one block of it, so
// an access reads neighbouring cache lines rather than a hash node and a heap block a vector. Words
// outside every alias range keep a hash by address. A thread's direct-mapped cache of the words it
// touched last spares the range search. Tables live as long as the SimMemory (one run).
//
// One thread at a time: the SimClock's turn serializes every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace peerconf {

class SimMemory {
 public:
  using Word = std::uint64_t;
  // Where a load reads or a racing store lands: an option in [0, options), 0 the newest.
  class Choices {
   public:
    virtual ~Choices() = default;
    virtual int choose(int options) = 0;
  };
  enum class Fence : std::uint8_t { kAcquire, kRelease, kSeqCst };
  // A word keeps its last kHistory to 2 * kHistory stores (dropped in halves).
  static constexpr std::size_t kHistory = 4;

  SimMemory(int threads, Choices& choices);

  Word load(int thread, const Word* word, bool acquire);
  void store(int thread, Word* word, Word value, bool release);
  void fence(int thread, Fence kind);
  // A barrier's side of this thread (the end of a data plane, a group barrier after it): every
  // word it has seen or written forgets the values before the ones it saw, so no thread reads
  // them again.
  void publish(int thread);
  // The words [base, base + bytes) are `object`'s: the same object mapped at another address (a
  // peer's mapping of a rank's buffer) is the same words. Later calls replace overlapping ranges.
  void alias(const void* base, std::size_t bytes, std::uint64_t object);

  // While `into` is set (null: no longer), every store of `thread` appends to it what it
  // overwrote: the value of the message just before it in the word's modification order (issue
  // 41: C6 asks what a store into a slot that is not a push overwrote, with no load of the
  // layout's to guess it). A store whose predecessor is no longer kept appends nothing.
  void recordOverwrites(int thread, std::vector<Word>* into);

 private:
  using Key = std::uint64_t;
  using Stamp = std::uint64_t;
  using Epoch = std::uint32_t;
  // Views are kept as vector clocks (one epoch a thread, as race detectors keep happens-before)
  // plus, at each word, the stamps each thread has read or written there with the epoch it did so
  // at: a thread's view of a word is the newest stamp any thread's known accesses reached. The same
  // views as the promising semantics', without a view a word copied at every release.
  using Clock = std::vector<Epoch>;
  static constexpr std::size_t kLocals = 256;
  static constexpr std::size_t kKept = 2 * kHistory;  // messages, a log's accesses, release clocks
  struct Message {
    Word value = 0;
    Stamp stamp = 0;
  };
  // One thread's accesses to a word, ascending, the last kHistory to 2 * kHistory: the epoch it
  // made each at and the stamp it reached.
  struct Log {
    std::uint32_t size = 0;
    Epoch epochs[kKept] = {};
    Stamp dropped = 0;  // the newest stamp of the accesses no longer kept
    Stamp stamps[kKept] = {};
  };
  // A word's whole state in one block of stride_ bytes (zero: never seen), so that what an access
  // reads is a few neighbouring cache lines, not a node and a heap block per vector: this header,
  // then masks_ words of bits (the threads with a log here: a view is joined over those only), n_
  // Logs, and kKept release clocks of n_ epochs (a message's clock names its slot).
  struct Cell {
    std::uint8_t count;         // messages kept, ascending stamps
    std::int8_t clocks[kKept];  // message i's release clock slot (-1: none)
    Stamp base;                 // the value every thread has seen (first seen, or written behind)
    Epoch* chains;              // a thread's last release store here: its clock (release
                                // sequences), n_ * n_ epochs in chains_, null until the first
    Message messages[kKept];
  };
  // Storage of cells, 1 << pageShift_ a page, zeroed, 64-byte aligned, never moved while the
  // SimMemory lives (a thread's locals point into them).
  struct PageFree {
    void operator()(std::byte* page) const noexcept;
  };
  using Page = std::unique_ptr<std::byte[], PageFree>;
  // An aliased object's words, indexed by (address - range begin) / 8: a page allocated at its
  // first touched word. Kept while the SimMemory lives (an object aliased again, at any address,
  // finds its words' histories as the model's (object, offset) key always did); dropped with it.
  struct Table {
    std::vector<Page> pages;
  };
  struct Thread {
    Clock clock;     // happens-before: the epoch of each thread's events known here
    Clock acquired;  // what an acquire fence would add (relaxed reads of released messages)
    Clock released;  // the last release fence's clock (relaxed stores carry it)
    // Where the words this thread touched last are (direct-mapped by address, emptied when an
    // alias changes what an address names): the range search spared.
    struct Local {
      std::uintptr_t address = 0;
      Cell* cell = nullptr;
    };
    std::vector<Local> locals = std::vector<Local>(kLocals);
    std::vector<Word>* overwrites = nullptr;  // recordOverwrites()
  };
  struct Range {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    std::uint64_t object = 0;
    Table* table = nullptr;  // the object's, in tables_
  };
  static constexpr Stamp kGap = 1u << 16;

  Cell& cellOf(std::uintptr_t address);
  Cell& locate(Thread& t, const Word* word);
  Page newPage() const;
  Cell& cellAt(std::byte* page, std::size_t index) const {
    return *reinterpret_cast<Cell*>(page + index * stride_);
  }
  std::uint64_t* masksOf(Cell& cell) const {
    return reinterpret_cast<std::uint64_t*>(reinterpret_cast<std::byte*>(&cell) + sizeof(Cell));
  }
  Log& logOf(Cell& cell, std::size_t thread) const {
    return reinterpret_cast<Log*>(reinterpret_cast<std::byte*>(&cell) + logsAt_)[thread];
  }
  Epoch* clockOf(Cell& cell, std::size_t slot) const {
    return reinterpret_cast<Epoch*>(reinterpret_cast<std::byte*>(&cell) + clocksAt_) +
           slot * static_cast<std::size_t>(n_);
  }
  template <typename Visit>
  void forEachCell(Visit visit);
  Thread& at(int thread);
  Stamp floor(int thread, const Thread& t, Cell& cell) const;
  Stamp place(const Cell& cell, Stamp after, std::size_t& index);
  void logAccess(int thread, const Thread& t, Cell& cell, Stamp stamp);
  int keepClock(Cell& cell, const Epoch* first, const Epoch* second);
  static void join(Clock& into, const Epoch* from);

  const int n_;
  Choices& choices_;
  // A cell's layout for n_ threads (bytes from its start; stride_ a multiple of 64).
  const std::size_t masks_;
  const std::size_t logsAt_;
  const std::size_t clocksAt_;
  const std::size_t stride_;
  const std::size_t pageShift_;
  std::vector<Thread> threads_;
  std::unordered_map<std::uint64_t, Table> tables_;  // by object (nodes stay put)
  // Words outside every alias range, or at an offset not a multiple of 8 in one, by the key the
  // model has always given them (the address; the object and byte offset), cells appended to
  // loosePages_.
  std::unordered_map<Key, Cell*> loose_;
  std::vector<Page> loosePages_;
  std::size_t looseUsed_ = 0;  // cells used in loosePages_.back()
  std::vector<std::unique_ptr<Epoch[]>> chains_;
  std::vector<Range> ranges_;  // ascending begin, disjoint
  Clock sc_;
};

}  // namespace peerconf
