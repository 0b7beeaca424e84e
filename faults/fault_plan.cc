// FaultPlan and RankFaults: per-rank fault state and its seeded draws.
#include "faults/fault_plan.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <utility>

#include "clock.h"
#include "errors.h"

namespace peerconf::faults {

using Fault = FaultSpec;
using FaultSite = Site;

namespace {

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

// One stream per (seed, rank, fault index): each input is mixed in turn so that neighbouring
// seeds, ranks and indices give unrelated streams.
std::uint64_t streamSeed(std::uint64_t seed, int rank, std::size_t index) {
  std::uint64_t s = mix(seed + kGolden);
  s = mix(s ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank)) + 2 * kGolden));
  return mix(s ^ (static_cast<std::uint64_t>(index) + 3 * kGolden));
}

// splitmix64's next value, as a double in [0, 1).
double nextUniform(std::uint64_t& state) {
  state += kGolden;
  return static_cast<double>(mix(state) >> 11) * 0x1.0p-53;
}

bool matchesPeer(const Fault& fault, int peer) { return !fault.peer || *fault.peer == peer; }

std::string origin(const Fault& fault, std::size_t index) {
  std::string out = " [fault #" + std::to_string(index);
  if (fault.mark.line > 0) out += ", line " + std::to_string(fault.mark.line);
  return out + "]";
}

}  // namespace

RankFaults::RankFaults(std::shared_ptr<const std::vector<FaultSpec>> faults, int rank,
                       std::uint64_t seed, FaultLog& log)
    : faults_(std::move(faults)), rank_(rank), seed_(seed), log_(log) {
  for (std::size_t i = 0; i < faults_->size(); ++i) {
    const Fault& fault = (*faults_)[i];
    if (fault.site == FaultSite::kHandleStale) staleExchange_ = true;
    if (fault.site == FaultSite::kHandleAliased) aliasExchange_ = true;
    if (fault.site == FaultSite::kHandleMapped) mappedExchange_ = true;
    if (fault.appliesTo(rank_)) slots_.push_back(Slot{&fault, i, streamSeed(seed_, rank_, i)});
  }
}

bool RankFaults::fires(Slot& slot) {
  const double u = nextUniform(slot.stream);
  const bool countLeft = slot.fault->count <= 0 || slot.fired < slot.fault->count;
  if (!countLeft || !(u < slot.fault->probability)) return false;
  ++slot.fired;
  fired_.insert(slot.fault->site);
  return true;
}

template <typename Eligible>
const RankFaults::Slot* RankFaults::draw(FaultSite site, Eligible eligible) {
  for (Slot& slot : slots_) {
    const auto aim = slot.fault->onBuffer;
    if (aim && static_cast<std::size_t>(*aim) != construction_) continue;
    if (slot.fault->site == site && eligible(*slot.fault) && fires(slot)) return &slot;
  }
  return nullptr;
}

void RankFaults::record(const Slot& slot, int peer, std::string detail) {
  log_.fired(siteName(slot.fault->site), peer, std::move(detail) + origin(*slot.fault, slot.index),
             static_cast<int>(slot.index), static_cast<int>(construction_));
}

std::optional<int> RankFaults::failWith(FaultSite site, int peer, std::string_view action) {
  std::lock_guard lock(mutex_);
  const Slot* slot = draw(site, [&](const Fault& f) { return matchesPeer(f, peer); });
  if (slot == nullptr) return std::nullopt;
  const int code = slot->fault->error != 0 ? slot->fault->error : defaultError(site);
  std::ostringstream detail;
  detail << action << " on rank " << rank_;
  if (peer != kNoPeer) detail << " (peer " << peer << ")";
  detail << " fails with " << hipErrorName(code) << " (" << code << ")";
  record(*slot, peer, detail.str());
  return code;
}

std::optional<int> RankFaults::failAlloc() {
  return failWith(FaultSite::kAlloc, kNoPeer, "allocUncached");
}
std::optional<int> RankFaults::failGetHandle() {
  return failWith(FaultSite::kGetHandle, kNoPeer, "getMemHandle");
}
std::optional<int> RankFaults::failOpen(int peer) {
  return failWith(FaultSite::kOpen, peer, "openMemHandle");
}
std::optional<int> RankFaults::failClose(int peer) {
  return failWith(FaultSite::kClose, peer, "closeMemHandle");
}
std::optional<int> RankFaults::failFree() {
  return failWith(FaultSite::kFree, kNoPeer, "freeDeviceMem of the local buffer");
}
std::optional<int> RankFaults::failAllocTable() {
  return failWith(FaultSite::kAllocTable, kNoPeer, "allocDevice of the address table");
}
std::optional<int> RankFaults::failCopyTable() {
  return failWith(FaultSite::kCopyTable, kNoPeer, "copyToDevice of the address table");
}

void RankFaults::setConstruction(std::size_t number) {
  std::lock_guard lock(mutex_);
  construction_ = number;
}

bool RankFaults::notReady() {
  std::lock_guard lock(mutex_);
  const Slot* slot = draw(FaultSite::kNotReady, [](const Fault&) { return true; });
  if (slot == nullptr) return false;
  record(*slot, kNoPeer,
         "rank " + std::to_string(rank_) +
             "'s setup fails before the constructor: its runner is not ready");
  return true;
}

bool RankFaults::failGroup(Point at) {
  std::lock_guard lock(mutex_);
  const Slot* slot = draw(FaultSite::kGroupFail, [&](const Fault& f) { return f.at == at; });
  if (slot == nullptr) return false;
  record(*slot, kNoPeer,
         std::string(at == Point::kAgree ? "all-reduce" : "all-gather") + " fails on rank " +
             std::to_string(rank_) + " at " + std::string(pointName(at)) +
             " (locally, before sending)");
  return true;
}

bool RankFaults::reorderCollectives(Point at) {
  std::lock_guard lock(mutex_);
  const Slot* slot = draw(FaultSite::kCollectiveOrder, [&](const Fault& f) { return f.at == at; });
  if (slot == nullptr) return false;
  record(*slot, kNoPeer,
         at == Point::kAgree
             ? "rank " + std::to_string(rank_) +
                   " enters an all-gather (another exchange) while its peers are in the agreement"
             : "rank " + std::to_string(rank_) +
                   " enters the agreement (an all-reduce) while its peers are in the exchange");
  return true;
}

bool RankFaults::corruptHandle(int peer) {
  if (peer == rank_) return false;
  std::lock_guard lock(mutex_);
  const Slot* slot =
      draw(FaultSite::kHandleCorrupt, [&](const Fault& f) { return matchesPeer(f, peer); });
  if (slot == nullptr) return false;
  record(*slot, peer,
         "handle of peer " + std::to_string(peer) + " as received by rank " +
             std::to_string(rank_) + " is corrupted (every byte inverted)");
  return true;
}

bool RankFaults::receivesInstead(FaultSite site, int peer, const std::string& what) {
  if (peer == rank_) return false;
  std::lock_guard lock(mutex_);
  const Slot* slot = draw(site, [&](const Fault& f) { return matchesPeer(f, peer); });
  if (slot == nullptr) return false;
  record(
      *slot, peer,
      "rank " + std::to_string(rank_) + " receives for peer " + std::to_string(peer) + " " + what);
  return true;
}

bool RankFaults::staleHandle(int peer) {
  return receivesInstead(FaultSite::kHandleStale, peer,
                         "the handle of an earlier, freed buffer of that peer");
}

bool RankFaults::aliasedHandle(int peer) {
  return receivesInstead(FaultSite::kHandleAliased, peer,
                         "the handle of a freed block of that peer whose place another of its "
                         "live allocations took");
}

void RankFaults::putAliasedHandle(const IpcHandle& handle) {
  std::lock_guard lock(mutex_);
  aliased_ = handle;
}

std::optional<IpcHandle> RankFaults::takeAliasedHandle() {
  std::lock_guard lock(mutex_);
  return std::exchange(aliased_, std::nullopt);
}

bool RankFaults::mappedHandle(int peer) {
  return receivesInstead(FaultSite::kHandleMapped, peer,
                         "the handle that peer exported for its previous buffer, which rank " +
                             std::to_string(rank_) + " still maps");
}

void RankFaults::putMappedHandle(const IpcHandle& handle) {
  std::lock_guard lock(mutex_);
  mapped_ = handle;
}

std::optional<IpcHandle> RankFaults::takeMappedHandle() {
  std::lock_guard lock(mutex_);
  return std::exchange(mapped_, std::nullopt);
}

std::optional<EntryPart> RankFaults::corruptEntry(int peer, bool failureRecord) {
  if (peer == rank_) return std::nullopt;
  std::lock_guard lock(mutex_);
  const Slot* slot =
      draw(FaultSite::kEntryCorrupt, [&](const Fault& f) { return matchesPeer(f, peer); });
  if (slot == nullptr) return std::nullopt;
  const EntryPart part = slot->fault->part;
  std::string what;
  switch (part) {
    case EntryPart::kMagic:
      what = "the magic's second byte inverted";
      break;
    case EntryPart::kKind:
      what = "the kind byte inverted";
      break;
    case EntryPart::kTail:
      what = failureRecord ? "the last byte of the failure record's (empty) handle set to 0xff"
                           : "the last byte of the label set to 0xff";
      break;
  }
  record(*slot, peer,
         std::string(failureRecord ? "failure record" : "exchange entry") + " of peer " +
             std::to_string(peer) + " as received by rank " + std::to_string(rank_) +
             " is damaged: " + what);
  return part;
}

bool RankFaults::lengthenExchange(std::size_t entries) {
  std::lock_guard lock(mutex_);
  const Slot* slot = draw(FaultSite::kExchangeLong, [](const Fault&) { return true; });
  if (slot == nullptr) return false;
  record(*slot, kNoPeer,
         "the exchange as received by rank " + std::to_string(rank_) + " holds " +
             std::to_string(entries + 1) + " entries for a group of " + std::to_string(entries) +
             " (one more: a copy of its own entry)");
  return true;
}

void RankFaults::throwForeign(SeamCall call, int peer) {
  std::string what;
  {
    std::lock_guard lock(mutex_);
    const Slot* slot = draw(FaultSite::kForeignException,
                            [&](const Fault& f) { return f.call == call && matchesPeer(f, peer); });
    if (slot == nullptr) return;
    what = "foreign exception from " + std::string(seamCallName(call)) +
           (peer != kNoPeer ? " of peer " + std::to_string(peer) : std::string()) + " on rank " +
           std::to_string(rank_) + " (a backend's own exception, not a peerconf::Error)";
    record(*slot, peer, what);
  }
  throw ForeignException(what);
}

void RankFaults::atPoint(Point at, RankControl& control) {
  const std::string where = at == Point::kAlloc       ? " inside its allocation (allocUncached)"
                            : at == Point::kGetHandle ? " inside its handle export (getMemHandle)"
                                                      : " at " + std::string(pointName(at));
  std::chrono::milliseconds late{0};
  {
    std::lock_guard lock(mutex_);
    for (Slot& slot : slots_) {
      // A delay aimed at one buffer (FaultSpec::onBuffer) is late in that construction only.
      const auto aim = slot.fault->onBuffer;
      if (aim && static_cast<std::size_t>(*aim) != construction_) continue;
      if (slot.fault->site != FaultSite::kDelay || slot.fault->at != at || !fires(slot)) continue;
      late += slot.fault->delay;
      record(slot, kNoPeer,
             "rank " + std::to_string(rank_) + " late by " +
                 std::to_string(slot.fault->delay.count()) + " ms" + where);
    }
  }
  // On the rank's thread clock: real, or simulated under a thread run on simulated time.
  if (late.count() > 0) threadClock().sleepFor(late);

  stopIf(
      at, where, [at](const Fault& f) { return f.at == at && !f.peer; }, control);
}

void RankFaults::atOpenOf(int peer, RankControl& control) {
  stopIf(
      Point::kOpen, " inside its open of peer " + std::to_string(peer),
      [peer](const Fault& f) { return f.at == Point::kOpen && f.peer == peer; }, control);
}

template <typename Eligible>
void RankFaults::stopIf(Point at, const std::string& where, Eligible eligible,
                        RankControl& control) {
  bool dies = false;
  {
    std::lock_guard lock(mutex_);
    if (const Slot* slot = draw(FaultSite::kDeath, eligible)) {
      record(*slot, slot->fault->peer.value_or(kNoPeer),
             "rank " + std::to_string(rank_) + " dies" + where);
      dies = true;
    }
  }
  if (dies) control.die(rank_, at);

  std::optional<int> exits;
  {
    std::lock_guard lock(mutex_);
    if (const Slot* slot = draw(FaultSite::kExit, eligible)) {
      exits = slot->fault->code;
      record(
          *slot, slot->fault->peer.value_or(kNoPeer),
          "rank " + std::to_string(rank_) + " exits with code " + std::to_string(*exits) + where);
    }
  }
  if (exits) control.exit(rank_, at, *exits);

  bool hangs = false;
  {
    std::lock_guard lock(mutex_);
    if (const Slot* slot = draw(FaultSite::kHang, eligible)) {
      record(*slot, slot->fault->peer.value_or(kNoPeer),
             "rank " + std::to_string(rank_) + " hangs" + where);
      hangs = true;
    }
  }
  if (hangs) control.hang(rank_, at);
}

bool RankFaults::names(FaultSite site) const {
  std::lock_guard lock(mutex_);
  return std::any_of(slots_.begin(), slots_.end(),
                     [site](const Slot& s) { return s.fault->site == site; });
}

void RankFaults::putStaleHandle(const IpcHandle& handle) {
  std::lock_guard lock(mutex_);
  stale_ = handle;
}

std::optional<IpcHandle> RankFaults::takeStaleHandle() {
  std::lock_guard lock(mutex_);
  return std::exchange(stale_, std::nullopt);
}

void RankFaults::putExported(int peer, const Exported& exported) {
  std::lock_guard lock(mutex_);
  exported_[peer] = exported;
}

std::optional<RankFaults::Exported> RankFaults::exported(int peer) const {
  std::lock_guard lock(mutex_);
  const auto it = exported_.find(peer);
  if (it == exported_.end()) return std::nullopt;
  return it->second;
}

std::set<FaultSite> RankFaults::fired() const {
  std::lock_guard lock(mutex_);
  return fired_;
}

FaultPlan::FaultPlan(std::vector<FaultSpec> faults, std::uint64_t seed)
    : faults_(std::make_shared<const std::vector<FaultSpec>>(std::move(faults))), seed_(seed) {}

std::unique_ptr<RankFaults> FaultPlan::forRank(int rank, FaultLog& log) const {
  return std::make_unique<RankFaults>(faults_, rank, seed_, log);
}

}  // namespace peerconf::faults
