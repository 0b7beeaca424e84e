// C4: reads what the launcher measured on each rank after a successful handshake.
#include "checkers/addresses.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "checkers/support.h"

namespace peerconf::harness::checkers {

using model::Event;
using model::EventKind;
using model::Finding;
using model::hexPtr;
using model::LedgerRecord;
using model::Outcome;
using model::Property;
using model::RankResult;
using model::RankStatus;
using model::RunRecord;
using model::Verdict;

namespace {

// The mapping each peer's open returned on this rank (the last successful open of that peer
// before the last check, else before close): from the ledger where there is one (its part before
// the close snapshot), else from the seam events ("ptr=" on openMemHandle's return).
std::map<int, std::uint64_t> openedMappings(const RankResult& result) {
  std::map<int, std::uint64_t> opened;
  if (result.ledgerAvailable) {
    const std::size_t end =
        result.ledgerAtClose >= 0
            ? std::min(static_cast<std::size_t>(result.ledgerAtClose), result.ledger.size())
            : result.ledger.size();
    for (std::size_t i = 0; i < end; ++i) {
      const LedgerRecord& entry = result.ledger[i];
      if (entry.op == "open" && entry.error == 0) opened[entry.ownerDevice] = entry.ptr;
    }
    return opened;
  }
  // The opens before the last "check" phase: the host table is the last buffer's, checked
  // there (with several buffers, `buffers:`, an earlier one's opens and closes come before it).
  std::size_t end = std::min(phaseBegin(result.events, "close"), result.events.size());
  for (std::size_t i = result.events.size(); i > 0; --i) {
    const Event& event = result.events[i - 1];
    if (event.kind == EventKind::kPhaseBegin && event.what == "check") {
      end = i - 1;
      break;
    }
  }
  for (std::size_t i = 0; i < end; ++i) {
    const Event& event = result.events[i];
    if (event.kind != EventKind::kReturn || event.what != "openMemHandle") continue;
    if (auto ptr = parsePtr(event.detail)) opened[event.peer] = *ptr;
  }
  return opened;
}

std::string slotText(const char* table, int slot, std::int64_t value) {
  return std::string(table) + "[" + std::to_string(slot) + "] is " +
         hexPtr(static_cast<std::uint64_t>(value));
}

// The device table against the host table, and every peer's slot against its mapping.
void checkTables(const RankResult& result, int ranks, std::vector<Finding>& findings) {
  const int rank = result.rank;
  const auto& host = result.hostTable;
  if (host.size() != static_cast<std::size_t>(ranks)) {
    findings.push_back({rank, "addresses() has " + std::to_string(host.size()) + " entries for " +
                                  std::to_string(ranks) + " ranks"});
  }
  if (!result.tableError.empty()) {
    findings.push_back({rank, "the device address table: " + result.tableError});
  } else {
    for (std::size_t slot = 0; slot < result.deviceTable.size(); ++slot) {
      const int s = static_cast<int>(slot);
      if (slot >= host.size()) {
        findings.push_back({rank, slotText("addressesDevice()", s, result.deviceTable[slot]) +
                                      " but addresses() has no slot " + std::to_string(s)});
      } else if (result.deviceTable[slot] != host[slot]) {
        findings.push_back({rank, slotText("addressesDevice()", s, result.deviceTable[slot]) +
                                      " but " + slotText("addresses()", s, host[slot])});
      }
    }
    if (result.deviceTable.size() != static_cast<std::size_t>(ranks)) {
      findings.push_back({rank, "read " + std::to_string(result.deviceTable.size()) +
                                    " entries of addressesDevice() for " + std::to_string(ranks) +
                                    " ranks"});
    }
  }
  const auto opened = openedMappings(result);
  for (std::size_t slot = 0; slot < host.size(); ++slot) {
    const int peer = static_cast<int>(slot);
    if (peer == rank) continue;  // the own slot: ownSlotIsLocal
    auto it = opened.find(peer);
    if (it == opened.end()) {
      findings.push_back({rank, slotText("addresses()", peer, host[slot]) +
                                    " but no mapping of peer " + std::to_string(peer) +
                                    " was opened"});
    } else if (static_cast<std::uint64_t>(host[slot]) != it->second) {
      findings.push_back({rank, slotText("addresses()", peer, host[slot]) + " but opening peer " +
                                    std::to_string(peer) + " returned " + hexPtr(it->second)});
    }
  }
}

}  // namespace

Verdict checkAddresses(const RunRecord& record) {
  Verdict verdict = startVerdict(Property::kC4Addresses, record);
  // What each mapping reached, on every outcome: a mapping onto another allocation than the one
  // its peer exported is wrong whether or not the handshake went on to fail.
  int misled = 0;
  for (const RankResult& result : record.ranks) {
    for (const std::string& text : result.mappingFindings)
      verdict.findings.push_back({result.rank, text});
    if (!result.mappingFindings.empty()) ++misled;
  }
  if (record.scenario.expect.outcome != Outcome::kSuccess) {
    if (misled > 0) {
      verdict.status = Verdict::Status::kFail;
      verdict.summary =
          std::to_string(misled) + " rank(s) mapped another allocation than a peer exported";
    } else {
      verdict.status = Verdict::Status::kNotApplicable;
      verdict.summary = "the scenario expects no buffer: no addresses to check";
    }
    return verdict;
  }
  int checked = 0, wrong = 0;
  for (int rank = 0; rank < rankCount(record); ++rank) {
    const RankResult* result = findRank(record, rank);
    if (result == nullptr || result->status != RankStatus::kOk) continue;
    ++checked;
    bool bad = false;
    if (!result->ownSlotIsLocal) {
      verdict.findings.push_back(
          {rank, "addresses[" + std::to_string(rank) + "] is not this rank's local pointer"});
      bad = true;
    }
    for (const std::string& text : result->addressFindings) {
      verdict.findings.push_back({rank, text});
      bad = true;
    }
    if (result->tableChecked) {
      const std::size_t before = verdict.findings.size();
      checkTables(*result, record.scenario.ranks, verdict.findings);
      bad = bad || verdict.findings.size() != before;
    }
    if (bad) ++wrong;
  }
  if (misled > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(misled) +
                      " rank(s) mapped another allocation than a peer exported" +
                      (wrong > 0 ? "; " + std::to_string(wrong) + " of " + std::to_string(checked) +
                                       " ranks hold a wrong address table"
                                 : std::string());
  } else if (checked == 0) {
    verdict.status = Verdict::Status::kNotApplicable;
    verdict.summary = "no rank returned a buffer (see C1)";
  } else if (wrong > 0) {
    verdict.status = Verdict::Status::kFail;
    verdict.summary = std::to_string(wrong) + " of " + std::to_string(checked) +
                      " ranks hold a wrong address table";
  } else {
    verdict.summary =
        "own slot local and every pattern landed on " + std::to_string(checked) + " rank(s)";
  }
  return verdict;
}

}  // namespace peerconf::harness::checkers
