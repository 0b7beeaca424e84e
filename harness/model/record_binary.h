// A compact binary form of a scenario and of a run record: what crosses between the isolating
// parent and its child a case (launch/isolation.cc), where JSON's text cost more than the case.
// Both ends are one build of one program: no version, no portability; lossless (every field of
// every struct travels, and each struct's field list fails to compile when the struct gains or
// loses one). JSON (record_json.h) stays the format of traces, reports and MPI ranks.
#pragma once

#include <string>
#include <string_view>

#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::model {

// Appends to `out` (a message may carry several).
void encodeBinary(const Scenario& scenario, std::string& out);
void encodeBinary(const RunRecord& record, std::string& out);

// Reads one value from the front of `in` and advances it past; throws std::invalid_argument when
// the bytes end early or a count cannot be right.
Scenario scenarioFromBinary(std::string_view& in);
RunRecord runRecordFromBinary(std::string_view& in);

}  // namespace peerconf::harness::model
