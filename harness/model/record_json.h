// JSON (de)serialization of run records: the MPI launcher gathers per-rank results and writes
// per-rank event streams with it; reports can re-read a finished run. Lossless: every field of
// RunRecord, RankResult, Event, LedgerRecord and Scenario survives a round trip.
//
// These live in peerconf::harness, next to the types, so that unqualified calls find them.
#pragma once

#include <nlohmann/json.hpp>

#include "model/run_record.h"
#include "model/scenario.h"
#include "model/verdict.h"

namespace peerconf::harness::model {

// Readers are lenient about absent keys (defaults of the struct) and strict about wrong types
// and unknown enum names: they throw nlohmann::json::exception or std::invalid_argument.

nlohmann::json toJson(const Event& event);
Event eventFromJson(const nlohmann::json& json);

nlohmann::json toJson(const LedgerRecord& record);
LedgerRecord ledgerRecordFromJson(const nlohmann::json& json);

nlohmann::json toJson(const RankResult& result);
RankResult rankResultFromJson(const nlohmann::json& json);

// The whole scenario (faults and expectation included) so a report can be written without the
// file; a rerun re-loads scenario.file anyway.
nlohmann::json toJson(const Scenario& scenario);
Scenario scenarioFromJson(const nlohmann::json& json);

nlohmann::json toJson(const RunRecord& record);
RunRecord runRecordFromJson(const nlohmann::json& json);

nlohmann::json toJson(const Verdict& verdict);
Verdict verdictFromJson(const nlohmann::json& json);

// Text that any JSON consumer accepts: invalid UTF-8 in messages (a corrupted handle's bytes
// in a runtime's error text, say) is replaced instead of making dump() throw.
std::string dumpJson(const nlohmann::json& json, int indent = -1);

}  // namespace peerconf::harness::model
