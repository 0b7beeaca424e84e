// Builds rank logs step by step the way the core, decorated by the launcher, records them.
#include "synthetic_run.h"

#include <string>
#include <vector>

#include "model/text.h"

namespace peerconf::harness::checkers::testing {

using model::Event;
using model::EventKind;
using model::Fault;
using model::FaultSite;
using model::Finding;
using model::hexPtr;
using model::LedgerRecord;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Verdict;

namespace {

std::string ptrDetail(std::uint64_t value) { return "ptr=" + hexPtr(value); }

std::uint64_t ownPtr(int rank) { return 0x10000000ull * static_cast<std::uint64_t>(rank + 1); }
std::uint64_t tablePtr(int rank) { return ownPtr(rank) + 0x100000ull; }
std::uint64_t mappingPtr(int rank, int peer) {
  return 0x800000000ull + 0x1000000ull * static_cast<std::uint64_t>(rank) +
         0x10000ull * static_cast<std::uint64_t>(peer);
}
std::uint64_t generation(int rank) { return 10 + static_cast<std::uint64_t>(rank); }

// One rank's run of the handshake as the core performs it.
class RankBuilder {
 public:
  RankBuilder(int rank, int ranks, std::size_t bytes) : ranks_(ranks), bytes_(bytes) {
    result_.rank = rank;
    result_.ledgerAvailable = true;
    t_ = 1000 + 137 * rank;
  }

  void event(EventKind kind, std::string what, int peer = -1, std::string detail = {}) {
    t_ += 20000;
    result_.events.push_back(
        Event{t_, result_.rank, kind, std::move(what), peer, std::move(detail)});
  }
  void call(const std::string& what, int peer = -1, std::string in = {}, std::string out = {}) {
    event(EventKind::kCall, what, peer, std::move(in));
    event(EventKind::kReturn, what, peer, std::move(out));
  }
  void ledger(std::string op, std::uint64_t ptr, std::size_t size, int owner, std::uint64_t gen,
              int error = 0) {
    result_.ledger.push_back(LedgerRecord{std::move(op), ptr, size, owner, gen, error});
  }

  // Allocation, exchange and the opens up to (not including) `failPeer` (-1: every peer).
  void construct(int failPeer = -1) {
    const int rank = result_.rank;
    event(EventKind::kPhaseBegin, "construct");
    call("allocUncached", -1, "nbytes=" + std::to_string(bytes_), ptrDetail(ownPtr(rank)));
    ledger("alloc", ownPtr(rank), bytes_, rank, generation(rank));
    event(EventKind::kPhaseBegin, "exchange");
    call("getMemHandle", -1, ptrDetail(ownPtr(rank)));
    call("allGather", -1, "bytes=64", "ranks=" + std::to_string(ranks_));
    event(EventKind::kPhaseEnd, "exchange");
    event(EventKind::kPhaseBegin, "open");
    for (int peer = 0; peer < ranks_; ++peer) {
      if (peer == rank) continue;
      if (peer == failPeer) {
        event(EventKind::kFault, "open", peer, "openMemHandle fails with error 1");
        event(EventKind::kCall, "openMemHandle", peer);
        event(EventKind::kThrow, "openMemHandle", peer, openError(peer));
        break;
      }
      call("openMemHandle", peer, {}, ptrDetail(mappingPtr(rank, peer)));
      ledger("open", mappingPtr(rank, peer), bytes_, peer, generation(peer));
      opened_.push_back(peer);
    }
    event(EventKind::kPhaseEnd, "open");
    if (failPeer < 0) {
      const std::size_t tableBytes = static_cast<std::size_t>(ranks_) * 8;
      call("allocDevice", -1, "nbytes=" + std::to_string(tableBytes), ptrDetail(tablePtr(rank)));
      ledger("alloc", tablePtr(rank), tableBytes, rank, generation(rank));
      table_ = true;
      call("copyToDevice", -1, ptrDetail(tablePtr(rank)));
    }
  }

  void agree(int in, int out) {
    event(EventKind::kPhaseBegin, "agree");
    call("allReduceMin", -1, "in=" + std::to_string(in), "out=" + std::to_string(out));
    event(EventKind::kPhaseEnd, "agree");
  }

  void release() {
    const int rank = result_.rank;
    for (int peer : opened_) {
      call("closeMemHandle", peer, ptrDetail(mappingPtr(rank, peer)));
      ledger("close", mappingPtr(rank, peer), bytes_, peer, generation(peer));
    }
    opened_.clear();
    if (table_) {
      call("freeDeviceMem", -1, ptrDetail(tablePtr(rank)));
      ledger("free", tablePtr(rank), static_cast<std::size_t>(ranks_) * 8, rank, generation(rank));
      table_ = false;
    }
    call("freeDeviceMem", -1, ptrDetail(ownPtr(rank)));
    ledger("free", ownPtr(rank), bytes_, rank, generation(rank));
  }

  void finish(RankStatus status, std::string outcomeDetail) {
    result_.status = status;
    event(EventKind::kOutcome, toString(status), -1, std::move(outcomeDetail));
    result_.endNs = t_ + 5000;
  }

  std::string openError(int peer) const {
    return "open failed on rank " + std::to_string(result_.rank) + " (peer " +
           std::to_string(peer) + "): invalid argument (1)";
  }

  void advance(std::int64_t ns) { t_ += ns; }
  RankResult& result() { return result_; }
  std::int64_t now() const { return t_; }

 private:
  int ranks_;
  std::size_t bytes_;
  std::int64_t t_ = 0;
  RankResult result_;
  std::vector<int> opened_;
  bool table_ = false;
};

RunRecord baseRecord(int ranks, const std::string& file, const std::string& name) {
  RunRecord record;
  record.scenario.file = file;
  record.scenario.name = name;
  record.scenario.ranks = ranks;
  record.scenario.bufferBytes = 1 << 16;
  record.scenario.seed = 7;
  record.scenario.deadline = std::chrono::milliseconds(1000);
  record.launcher = "threads";
  record.runtime = "mock";
  record.seed = 7;
  return record;
}

}  // namespace

RunRecord successRun(int ranks) {
  RunRecord record = baseRecord(ranks, "scenarios/handshake/clean.yaml", "clean");
  record.scenario.expect.outcome = Outcome::kSuccess;
  for (int rank = 0; rank < ranks; ++rank) {
    RankBuilder builder(rank, ranks, record.scenario.bufferBytes);
    builder.construct();
    if (ranks > 1) builder.agree(1, 1);
    builder.event(EventKind::kPhaseEnd, "construct");
    builder.event(EventKind::kPhaseBegin, "check");
    builder.event(EventKind::kPhaseEnd, "check");
    RankResult& result = builder.result();
    result.tableChecked = true;
    for (int slot = 0; slot < ranks; ++slot) {
      result.hostTable.push_back(
          static_cast<std::int64_t>(slot == rank ? ownPtr(rank) : mappingPtr(rank, slot)));
    }
    result.deviceTable = result.hostTable;
    builder.event(EventKind::kPhaseBegin, "close");
    builder.release();
    builder.event(EventKind::kPhaseEnd, "close");
    result.ledgerAtClose = static_cast<std::int64_t>(result.ledger.size());
    builder.event(EventKind::kPhaseBegin, "destroy");
    builder.event(EventKind::kPhaseEnd, "destroy");
    builder.finish(RankStatus::kOk, {});
    record.ranks.push_back(std::move(builder.result()));
  }
  record.wallNs = 12'000'000;
  return record;
}

RunRecord openFailureRun(int ranks, int failingRank, int peer) {
  RunRecord record = baseRecord(ranks, "scenarios/handshake/open_fail.yaml", "open_fail");
  Fault fault;
  fault.site = FaultSite::kOpen;
  fault.ranks = {failingRank};
  fault.peer = peer;
  fault.error = 1;
  record.scenario.faults.push_back(fault);
  record.scenario.expect.outcome = Outcome::kRaise;
  record.scenario.expect.messages[failingRank] = {MessageKind::kThis, {}};
  record.scenario.expect.others = MessageExpectation{MessageKind::kAnother, {}};
  record.firedSites = {"open"};
  for (int rank = 0; rank < ranks; ++rank) {
    const bool failing = rank == failingRank;
    RankBuilder builder(rank, ranks, record.scenario.bufferBytes);
    builder.construct(failing ? peer : -1);
    builder.agree(failing ? 0 : 1, 0);
    builder.release();
    builder.event(EventKind::kPhaseEnd, "construct");
    RankResult& result = builder.result();
    result.errorType = "HandshakeError";
    result.thisRank = failing;
    result.message = std::string("peer memory handshake failed on ") +
                     (failing ? "this" : "another") + " TP rank";
    if (failing) {
      result.cause = builder.openError(peer);
      result.causeCode = 1;
      result.causeOp = "open";
      result.causePeer = peer;
    }
    builder.finish(RankStatus::kRaised, result.message);
    record.ranks.push_back(std::move(builder.result()));
  }
  record.wallNs = 15'000'000;
  return record;
}

RunRecord hangRun(int ranks, int hungRank) {
  RunRecord record = baseRecord(ranks, "scenarios/handshake/hang_agree.yaml", "hang_agree");
  Fault fault;
  fault.site = FaultSite::kHang;
  fault.ranks = {hungRank};
  fault.at = Point::kAgree;
  record.scenario.faults.push_back(fault);
  record.scenario.expect.outcome = Outcome::kReported;
  record.scenario.expect.reported = {hungRank};
  record.scenario.expect.others = MessageExpectation{MessageKind::kGroup, {}};
  record.firedSites = {"hang"};
  for (int rank = 0; rank < ranks; ++rank) {
    RankBuilder builder(rank, ranks, record.scenario.bufferBytes);
    builder.construct();
    builder.event(EventKind::kPhaseBegin, "agree");
    RankResult& result = builder.result();
    if (rank == hungRank) {
      builder.event(EventKind::kFault, "hang", -1, "hangs at agree");
      builder.event(EventKind::kCall, "allReduceMin", -1, "in=1");
      result.status = RankStatus::kHung;
      result.endNs = builder.now();
    } else {
      builder.event(EventKind::kCall, "allReduceMin", -1, "in=1");
      const std::string timeout = "all-reduce on rank " + std::to_string(rank) +
                                  " did not complete within its deadline of 1.000000 s";
      builder.advance(1'000'000'000);  // the deadline passes inside the all-reduce
      builder.event(EventKind::kThrow, "allReduceMin", -1, timeout);
      builder.event(EventKind::kPhaseEnd, "agree");
      builder.release();
      builder.event(EventKind::kPhaseEnd, "construct");
      result.errorType = "GroupTimeout";
      result.message = timeout;
      builder.finish(RankStatus::kRaised, timeout);
    }
    record.ranks.push_back(std::move(builder.result()));
  }
  record.wallNs = 1'200'000'000;
  return record;
}

RunRecord withoutLedgers(RunRecord record) {
  for (RankResult& rank : record.ranks) {
    rank.ledger.clear();
    rank.ledgerAvailable = false;
  }
  return record;
}

bool hasFinding(const Verdict& verdict, int rank, std::string_view text) {
  for (const Finding& finding : verdict.findings) {
    if (finding.rank == rank && finding.text.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string dump(const Verdict& verdict) {
  std::string out = toString(verdict.property) + " " +
                    (verdict.status == Verdict::Status::kPass   ? "pass"
                     : verdict.status == Verdict::Status::kFail ? "FAIL"
                                                                : "n/a") +
                    ": " + verdict.summary + "\n";
  for (const Finding& finding : verdict.findings) {
    out += "  rank " + std::to_string(finding.rank) + ": " + finding.text + "\n";
  }
  return out;
}

}  // namespace peerconf::harness::checkers::testing
