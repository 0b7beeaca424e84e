// RunRecord <-> JSON. Enum values travel as names, durations as integer milliseconds, times as
// integer nanoseconds; strings are made valid UTF-8 so that json::dump() never throws.
#include "model/record_json.h"

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "faults/fault_spec.h"
#include "model/buffers.h"
#include "model/dataplane_result_json.h"
#include "model/fault_sites.h"
#include "model/text.h"

namespace peerconf::harness::model {

namespace {

using model::validUtf8;
using nlohmann::json;

// An enum's names (the table next to its enum), as the codec reads and writes them: a value or a
// name the table does not list is an error.
template <typename Enum, std::size_t N>
struct Names {
  const NameTable<Enum, N>& table;
  const char* what;

  std::string name(Enum value) const {
    if (std::optional<std::string_view> found = table.find(value)) return std::string(*found);
    throw std::invalid_argument(std::string("record json: unnamed ") + what + " value " +
                                std::to_string(static_cast<int>(value)));
  }
  Enum parse(const json& j) const {
    const std::string text = j.get<std::string>();
    if (std::optional<Enum> found = table.find(std::string_view(text))) return *found;
    throw std::invalid_argument(std::string("record json: unknown ") + what + " '" + text + "'");
  }
};

constexpr Names<EventKind, 7> kEventKinds{kEventKindNames, "event kind"};
constexpr Names<RankStatus, 6> kStatuses{kRankStatusNames, "rank status"};
constexpr Names<FaultSite, faults::kSiteNames.entries.size()> kSites{faults::kSiteNames,
                                                                     "fault site"};
constexpr Names<Point, faults::kPointNames.entries.size()> kPoints{faults::kPointNames, "point"};
constexpr Names<Outcome, 3> kOutcomes{kOutcomeNames, "outcome"};
constexpr Names<BuffersAlive, 2> kBuffersAlive{kBuffersAliveNames, "buffers_alive"};
constexpr Names<MessageKind, 5> kMessageKinds{kMessageKindNames, "message kind"};
constexpr Names<Property, 8> kProperties{kPropertyNames, "property"};
constexpr Names<Verdict::Status, 3> kVerdictStatuses{kVerdictStatusNames, "verdict status"};

// `out = json[key]` when present and not null; absent keys keep the struct's default.
template <typename T>
void read(const json& j, const char* key, T& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

void readMs(const json& j, const char* key, std::chrono::milliseconds& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) {
    out = std::chrono::milliseconds(it->get<std::int64_t>());
  }
}

json strings(const std::vector<std::string>& values) {
  json out = json::array();
  for (const std::string& v : values) out.push_back(validUtf8(v));
  return out;
}

json markJson(const Mark& mark) { return {{"line", mark.line}, {"column", mark.column}}; }
Mark markFromJson(const json& j) {
  Mark mark;
  read(j, "line", mark.line);
  read(j, "column", mark.column);
  return mark;
}

json toJson(const Fault& fault) {
  json j;
  j["site"] = kSites.name(fault.site);
  j["ranks"] = fault.ranks;
  j["peer"] = fault.peer ? json(*fault.peer) : json(nullptr);
  j["error"] = fault.error;
  j["delayMs"] = fault.delay.count();
  j["at"] = kPoints.name(fault.at);
  j["count"] = fault.count;
  j["probability"] = fault.probability;
  j["code"] = fault.code;
  // Only where it means something (a stop at `dataplane`): records of other faults stay as they
  // were.
  if (fault.at == Point::kDataplane) j["step"] = fault.step;
  // Likewise the call a foreign-exception fault throws from, and the part an entry-corrupt fault
  // damages (a child of the suite runs the scenario it is sent: without them it ran another).
  if (fault.site == faults::Site::kForeignException) {
    j["call"] = std::string(faults::seamCallName(fault.call));
  }
  if (fault.site == faults::Site::kEntryCorrupt) {
    j["part"] = std::string(faults::entryPartName(fault.part));
  }
  // Likewise only for the buffer-* faults.
  // A handshake fault aimed at one buffer (`buffer: I`).
  if (fault.onBuffer) j["onBuffer"] = *fault.onBuffer;
  if (model::isBufferFault(fault) && takes(fault.site, Key::kBuffer)) {
    j["buffer"] = fault.buffer;
    j["size"] = fault.size;
    j["label"] = validUtf8(fault.label);
  }
  // buffer-count: how many buffers its rank registers.
  if (fault.site == faults::Site::kBufferCount) j["registers"] = fault.registers;
  j["mark"] = markJson(fault.mark);
  j["set"] = fault.set;
  return j;
}

Fault faultFromJson(const json& j) {
  Fault fault;
  if (j.contains("site")) fault.site = kSites.parse(j.at("site"));
  read(j, "ranks", fault.ranks);
  if (auto it = j.find("peer"); it != j.end() && !it->is_null()) fault.peer = it->get<int>();
  read(j, "error", fault.error);
  readMs(j, "delayMs", fault.delay);
  if (j.contains("at")) fault.at = kPoints.parse(j.at("at"));
  read(j, "count", fault.count);
  read(j, "probability", fault.probability);
  read(j, "code", fault.code);
  read(j, "step", fault.step);
  read(j, "buffer", fault.buffer);
  if (auto it = j.find("onBuffer"); it != j.end() && !it->is_null()) {
    fault.onBuffer = it->get<int>();
  }
  read(j, "size", fault.size);
  read(j, "label", fault.label);
  read(j, "registers", fault.registers);
  if (auto it = j.find("call"); it != j.end()) {
    const auto call = faults::kSeamCallNames.find(it->get<std::string>());
    if (!call) throw std::invalid_argument("unknown call '" + it->get<std::string>() + "'");
    fault.call = *call;
  }
  if (auto it = j.find("part"); it != j.end()) {
    const auto part = faults::kEntryPartNames.find(it->get<std::string>());
    if (!part) throw std::invalid_argument("unknown part '" + it->get<std::string>() + "'");
    fault.part = *part;
  }
  if (j.contains("mark")) fault.mark = markFromJson(j.at("mark"));
  if (j.contains("set")) fault.set = j.at("set").get<int>();
  return fault;
}

json toJson(const MessageExpectation& message) {
  return {{"kind", kMessageKinds.name(message.kind)}, {"text", validUtf8(message.text)}};
}

MessageExpectation messageFromJson(const json& j) {
  MessageExpectation message;
  if (j.contains("kind")) message.kind = kMessageKinds.parse(j.at("kind"));
  read(j, "text", message.text);
  return message;
}

}  // namespace

json toJson(const Event& event) {
  json j{{"t", event.tNs},
         {"rank", event.rank},
         {"kind", kEventKinds.name(event.kind)},
         {"what", validUtf8(event.what)},
         {"peer", event.peer},
         {"detail", validUtf8(event.detail)}};
  if (event.fault >= 0) j["fault"] = event.fault;     // which fault fired: per-fault coverage
  if (event.buffer >= 0) j["buffer"] = event.buffer;  // in which construction it fired
  return j;
}

Event eventFromJson(const json& j) {
  Event event;
  read(j, "t", event.tNs);
  read(j, "rank", event.rank);
  if (j.contains("kind")) event.kind = kEventKinds.parse(j.at("kind"));
  read(j, "what", event.what);
  read(j, "peer", event.peer);
  read(j, "detail", event.detail);
  read(j, "fault", event.fault);
  read(j, "buffer", event.buffer);
  return event;
}

json toJson(const LedgerRecord& record) {
  return {{"op", validUtf8(record.op)},
          {"ptr", record.ptr},
          {"size", record.size},
          {"ownerDevice", record.ownerDevice},
          {"generation", record.generation},
          {"error", record.error}};
}

LedgerRecord ledgerRecordFromJson(const json& j) {
  LedgerRecord record;
  read(j, "op", record.op);
  read(j, "ptr", record.ptr);
  read(j, "size", record.size);
  read(j, "ownerDevice", record.ownerDevice);
  read(j, "generation", record.generation);
  read(j, "error", record.error);
  return record;
}

json toJson(const RankResult& result) {
  json j;
  j["rank"] = result.rank;
  j["status"] = kStatuses.name(result.status);
  j["errorType"] = validUtf8(result.errorType);
  j["message"] = validUtf8(result.message);
  j["thisRank"] = result.thisRank;
  j["cause"] = validUtf8(result.cause);
  j["causeCode"] = result.causeCode;
  j["ownSlotIsLocal"] = result.ownSlotIsLocal;
  j["addressFindings"] = strings(result.addressFindings);
  j["closeTwiceOk"] = result.closeTwiceOk;
  j["closeErrors"] = strings(result.closeErrors);
  j["leftAfterClose"] = strings(result.leftAfterClose);
  // C2's cause, C4's tables and C3's close snapshot.
  j["causeOp"] = validUtf8(result.causeOp);
  j["causePeer"] = result.causePeer;
  j["tableChecked"] = result.tableChecked;
  j["hostTable"] = result.hostTable;
  j["deviceTable"] = result.deviceTable;
  j["tableError"] = validUtf8(result.tableError);
  j["closeErrorType"] = validUtf8(result.closeErrorType);
  j["closeFailures"] = strings(result.closeFailures);
  j["ledgerAtClose"] = result.ledgerAtClose;
  j["ledgerAfterDestroy"] = result.ledgerAfterDestroy;
  j["ledgerAvailable"] = result.ledgerAvailable;
  j["mappingFindings"] = strings(result.mappingFindings);
  j["harnessReleases"] = strings(result.harnessReleases);
  j["deviceLeftovers"] = strings(result.deviceLeftovers);
  json ledger = json::array();
  for (const LedgerRecord& record : result.ledger) ledger.push_back(toJson(record));
  j["ledger"] = std::move(ledger);
  json events = json::array();
  for (const Event& event : result.events) events.push_back(toJson(event));
  j["events"] = std::move(events);
  j["endNs"] = result.endNs;
  model::writeJson(result, j);
  return j;
}

RankResult rankResultFromJson(const json& j) {
  RankResult result;
  read(j, "rank", result.rank);
  if (j.contains("status")) result.status = kStatuses.parse(j.at("status"));
  read(j, "errorType", result.errorType);
  read(j, "message", result.message);
  read(j, "thisRank", result.thisRank);
  read(j, "cause", result.cause);
  read(j, "causeCode", result.causeCode);
  read(j, "ownSlotIsLocal", result.ownSlotIsLocal);
  read(j, "addressFindings", result.addressFindings);
  read(j, "closeTwiceOk", result.closeTwiceOk);
  read(j, "closeErrors", result.closeErrors);
  read(j, "leftAfterClose", result.leftAfterClose);
  read(j, "causeOp", result.causeOp);
  read(j, "causePeer", result.causePeer);
  read(j, "tableChecked", result.tableChecked);
  read(j, "hostTable", result.hostTable);
  read(j, "deviceTable", result.deviceTable);
  read(j, "tableError", result.tableError);
  read(j, "closeErrorType", result.closeErrorType);
  read(j, "closeFailures", result.closeFailures);
  read(j, "ledgerAtClose", result.ledgerAtClose);
  read(j, "ledgerAfterDestroy", result.ledgerAfterDestroy);
  read(j, "ledgerAvailable", result.ledgerAvailable);
  read(j, "mappingFindings", result.mappingFindings);
  read(j, "harnessReleases", result.harnessReleases);
  read(j, "deviceLeftovers", result.deviceLeftovers);
  if (auto it = j.find("ledger"); it != j.end() && !it->is_null()) {
    for (const json& record : *it) result.ledger.push_back(ledgerRecordFromJson(record));
  }
  if (auto it = j.find("events"); it != j.end() && !it->is_null()) {
    for (const json& event : *it) result.events.push_back(eventFromJson(event));
  }
  read(j, "endNs", result.endNs);
  model::readJson(j, result);
  return result;
}

json toJson(const Scenario& scenario) {
  json j;
  j["file"] = validUtf8(scenario.file);
  j["name"] = validUtf8(scenario.name);
  j["description"] = validUtf8(scenario.description);
  j["ranks"] = scenario.ranks;
  j["bufferBytes"] = scenario.bufferBytes;
  json buffers = json::array();
  for (const BufferSpec& buffer : scenario.buffers) {
    json entry = {{"bytes", buffer.bytes},
                  {"label", validUtf8(buffer.label)},
                  {"mark", markJson(buffer.mark)}};
    if (buffer.dataPlane) {  // the entry's own data plane (model::dataPlaneOf)
      entry["dataPlane"] = model::toJson(*buffer.dataPlane);
      entry["dataPlaneMark"] = markJson(buffer.dataPlaneMark);
    }
    buffers.push_back(std::move(entry));
  }
  j["buffers"] = std::move(buffers);
  j["buffersAlive"] = kBuffersAlive.name(scenario.buffersAlive);
  // [rank, bytes] pairs: object keys must be strings.
  json memory = json::array();
  for (const auto& [rank, bytes] : scenario.deviceMemory) memory.push_back({rank, bytes});
  j["deviceMemory"] = std::move(memory);
  j["ranksPerGpu"] = scenario.ranksPerGpu;
  j["nodes"] = scenario.nodes;
  j["seed"] = scenario.seed;
  j["deadlineMs"] = scenario.deadline.count();
  json faults = json::array();
  for (const Fault& fault : scenario.faults) faults.push_back(toJson(fault));
  j["faults"] = std::move(faults);

  const Expectation& expect = scenario.expect;
  json e;
  e["outcome"] = kOutcomes.name(expect.outcome);
  e["asDrawn"] = expect.asDrawn;
  // Object keys must be strings: messages travel as [rank, expectation] pairs.
  json messages = json::array();
  for (const auto& [rank, message] : expect.messages) {
    messages.push_back({{"rank", rank}, {"expect", toJson(message)}});
  }
  e["messages"] = std::move(messages);
  e["others"] = expect.others ? toJson(*expect.others) : json(nullptr);
  e["reported"] = expect.reported;
  e["withinMs"] = expect.within ? json(expect.within->count()) : json(nullptr);
  e["violations"] = strings(expect.violations);
  json findings = json::array();
  for (const ExpectedFinding& finding : expect.findings) {
    findings.push_back({{"property", validUtf8(finding.property)},
                        {"text", validUtf8(finding.text)},
                        {"may", finding.may},
                        {"mark", markJson(finding.mark)}});
  }
  e["findings"] = std::move(findings);
  json refusals = json::array();
  for (const JudgeRefusal& refusal : expect.refusals) {
    refusals.push_back({{"rule", validUtf8(refusal.rule)},
                        {"text", validUtf8(refusal.text)},
                        {"mark", markJson(refusal.mark)}});
  }
  e["judge"] = std::move(refusals);
  // Where the file wrote them: a scenario that comes back from a child is compared with the
  // oracle's derivation at the same places (expectation/compare.h).
  json marks;
  marks["outcome"] = markJson(expect.marks.outcome);
  marks["reported"] = expect.marks.reported ? markJson(*expect.marks.reported) : json(nullptr);
  json messageMarks = json::array();
  for (const auto& [rank, mark] : expect.marks.messages) {
    messageMarks.push_back({{"rank", rank}, {"mark", markJson(mark)}});
  }
  marks["messages"] = std::move(messageMarks);
  marks["others"] = expect.marks.others ? markJson(*expect.marks.others) : json(nullptr);
  e["marks"] = std::move(marks);
  j["expect"] = std::move(e);
  j["core"] = validUtf8(scenario.core);
  j["maxRunMs"] = scenario.maxRun ? json(scenario.maxRun->count()) : json(nullptr);
  j["dataPlane"] = scenario.dataPlane ? model::toJson(*scenario.dataPlane) : json(nullptr);
  j["runner"] = {{"agreeFirst", scenario.runner.agreeFirst}};
  j["mark"] = markJson(scenario.mark);
  return j;
}

// NOLINTNEXTLINE(readability-function-size): a flat field-by-field decoder
Scenario scenarioFromJson(const json& j) {
  Scenario scenario;
  read(j, "file", scenario.file);
  read(j, "name", scenario.name);
  read(j, "description", scenario.description);
  read(j, "ranks", scenario.ranks);
  read(j, "bufferBytes", scenario.bufferBytes);
  if (auto it = j.find("buffers"); it != j.end() && !it->is_null()) {
    for (const json& buffer : *it) {
      BufferSpec spec;
      read(buffer, "bytes", spec.bytes);
      read(buffer, "label", spec.label);
      if (buffer.contains("mark")) spec.mark = markFromJson(buffer.at("mark"));
      if (auto dp = buffer.find("dataPlane"); dp != buffer.end() && !dp->is_null()) {
        spec.dataPlane = model::specFromJson(*dp);
      }
      if (buffer.contains("dataPlaneMark")) {
        spec.dataPlaneMark = markFromJson(buffer.at("dataPlaneMark"));
      }
      scenario.buffers.push_back(std::move(spec));
    }
  }
  if (auto it = j.find("buffersAlive"); it != j.end() && it->is_string()) {
    scenario.buffersAlive = kBuffersAlive.parse(*it);
  }
  if (auto it = j.find("deviceMemory"); it != j.end() && !it->is_null()) {
    for (const json& pair : *it) {
      scenario.deviceMemory[pair.at(0).get<int>()] = pair.at(1).get<std::size_t>();
    }
  }
  read(j, "ranksPerGpu", scenario.ranksPerGpu);
  if (j.contains("nodes")) read(j, "nodes", scenario.nodes);
  read(j, "seed", scenario.seed);
  readMs(j, "deadlineMs", scenario.deadline);
  if (auto it = j.find("faults"); it != j.end() && !it->is_null()) {
    for (const json& fault : *it) scenario.faults.push_back(faultFromJson(fault));
  }
  if (auto it = j.find("expect"); it != j.end() && !it->is_null()) {
    const json& e = *it;
    Expectation& expect = scenario.expect;
    if (e.contains("outcome")) expect.outcome = kOutcomes.parse(e.at("outcome"));
    read(e, "asDrawn", expect.asDrawn);
    if (auto m = e.find("messages"); m != e.end() && !m->is_null()) {
      for (const json& entry : *m) {
        expect.messages[entry.at("rank").get<int>()] = messageFromJson(entry.at("expect"));
      }
    }
    if (auto o = e.find("others"); o != e.end() && !o->is_null()) {
      expect.others = messageFromJson(*o);
    }
    read(e, "reported", expect.reported);
    if (auto w = e.find("withinMs"); w != e.end() && !w->is_null()) {
      expect.within = std::chrono::milliseconds(w->get<std::int64_t>());
    }
    read(e, "violations", expect.violations);
    if (auto f = e.find("findings"); f != e.end() && !f->is_null()) {
      for (const json& entry : *f) {
        ExpectedFinding finding;
        read(entry, "property", finding.property);
        read(entry, "text", finding.text);
        if (entry.contains("may")) finding.may = entry.at("may").get<bool>();
        if (entry.contains("mark")) finding.mark = markFromJson(entry.at("mark"));
        expect.findings.push_back(std::move(finding));
      }
    }
    if (auto r = e.find("judge"); r != e.end() && !r->is_null()) {
      for (const json& entry : *r) {
        JudgeRefusal refusal;
        read(entry, "rule", refusal.rule);
        read(entry, "text", refusal.text);
        if (entry.contains("mark")) refusal.mark = markFromJson(entry.at("mark"));
        expect.refusals.push_back(std::move(refusal));
      }
    }
    if (auto m = e.find("marks"); m != e.end() && m->is_object()) {
      ExpectationMarks& marks = expect.marks;
      if (m->contains("outcome")) marks.outcome = markFromJson(m->at("outcome"));
      if (auto r = m->find("reported"); r != m->end() && !r->is_null()) {
        marks.reported = markFromJson(*r);
      }
      if (auto r = m->find("messages"); r != m->end() && r->is_array()) {
        for (const json& entry : *r) {
          marks.messages[entry.at("rank").get<int>()] = markFromJson(entry.at("mark"));
        }
      }
      if (auto o = m->find("others"); o != m->end() && !o->is_null()) {
        marks.others = markFromJson(*o);
      }
    }
  }
  read(j, "core", scenario.core);
  if (auto m = j.find("maxRunMs"); m != j.end() && !m->is_null()) {
    scenario.maxRun = std::chrono::milliseconds(m->get<std::int64_t>());
  }
  if (auto it = j.find("dataPlane"); it != j.end() && !it->is_null()) {
    scenario.dataPlane = model::specFromJson(*it);
  }
  if (auto it = j.find("runner"); it != j.end() && !it->is_null()) {
    read(*it, "agreeFirst", scenario.runner.agreeFirst);
  }
  if (j.contains("mark")) scenario.mark = markFromJson(j.at("mark"));
  return scenario;
}

json toJson(const RunRecord& record) {
  json j;
  j["scenario"] = toJson(record.scenario);
  j["launcher"] = validUtf8(record.launcher);
  j["runtime"] = validUtf8(record.runtime);
  j["seed"] = record.seed;
  j["clock"] = validUtf8(record.clock);
  j["core"] = validUtf8(record.core);
  json ranks = json::array();
  for (const RankResult& result : record.ranks) ranks.push_back(toJson(result));
  j["ranks"] = std::move(ranks);
  j["wallNs"] = record.wallNs;
  j["firedSites"] = strings(record.firedSites);
  j["harnessErrors"] = strings(record.harnessErrors);
  return j;
}

RunRecord runRecordFromJson(const json& j) {
  RunRecord record;
  if (auto it = j.find("scenario"); it != j.end() && !it->is_null()) {
    record.scenario = scenarioFromJson(*it);
  }
  read(j, "launcher", record.launcher);
  read(j, "runtime", record.runtime);
  read(j, "seed", record.seed);
  read(j, "clock", record.clock);
  read(j, "core", record.core);
  if (auto it = j.find("ranks"); it != j.end() && !it->is_null()) {
    for (const json& result : *it) record.ranks.push_back(rankResultFromJson(result));
  }
  read(j, "wallNs", record.wallNs);
  read(j, "firedSites", record.firedSites);
  read(j, "harnessErrors", record.harnessErrors);
  return record;
}

json toJson(const Verdict& verdict) {
  json findings = json::array();
  for (const Finding& finding : verdict.findings) {
    findings.push_back({{"rank", finding.rank}, {"text", validUtf8(finding.text)}});
  }
  return {{"property", kProperties.name(verdict.property)},
          {"status", kVerdictStatuses.name(verdict.status)},
          {"summary", validUtf8(verdict.summary)},
          {"findings", std::move(findings)},
          {"reproduce", validUtf8(verdict.reproduce)},
          {"expectedViolation", verdict.expectedViolation},
          {"mayFail", verdict.mayFail}};
}

Verdict verdictFromJson(const json& j) {
  Verdict verdict;
  if (j.contains("property")) verdict.property = kProperties.parse(j.at("property"));
  if (j.contains("status")) verdict.status = kVerdictStatuses.parse(j.at("status"));
  read(j, "summary", verdict.summary);
  if (auto it = j.find("findings"); it != j.end() && !it->is_null()) {
    for (const json& f : *it) {
      Finding finding;
      read(f, "rank", finding.rank);
      read(f, "text", finding.text);
      verdict.findings.push_back(std::move(finding));
    }
  }
  read(j, "reproduce", verdict.reproduce);
  read(j, "expectedViolation", verdict.expectedViolation);
  if (j.contains("mayFail")) verdict.mayFail = j.at("mayFail").get<bool>();
  return verdict;
}

std::string dumpJson(const json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace peerconf::harness::model
