// JSON of the data plane's spec and results, header-only so that the record JSON of the reports
// (harness/reports/record_json.cc) serializes them with one call each: writeJson/readJson on a
// RankResult and on a Scenario. Events travel as arrays to keep long histories small.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "model/dataplane_result.h"
#include "model/dataplane_spec.h"
#include "model/run_record.h"
#include "model/scenario.h"

namespace peerconf::harness::model {

namespace detail {

template <typename T>
inline void read(const nlohmann::json& j, const char* key, T& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

inline DataplaneOutcome outcomeFromName(const std::string& name) {
  if (std::optional<DataplaneOutcome> outcome = kDataplaneOutcomeNames.find(std::string_view(name)))
    return *outcome;
  throw std::invalid_argument("data-plane json: unknown outcome '" + name + "'");
}

}  // namespace detail

inline nlohmann::json toJson(const DataplaneEvent& e) {
  return nlohmann::json::array({static_cast<int>(e.kind), e.peer, e.slot, e.step, e.epoch, e.tag,
                                e.aux, e.tNs, e.t2Ns, static_cast<int>(e.check), e.want, e.source,
                                e.tagless ? 1 : 0});
}

// An array of 13 numbers (11: a record written before re-arms and tagless reads).
inline DataplaneEvent dataplaneEventFromJson(const nlohmann::json& j) {
  if (!j.is_array() || (j.size() != 13 && j.size() != 11)) {
    throw std::invalid_argument("data-plane json: an event is an array of 13 numbers");
  }
  DataplaneEvent e;
  const int kind = j.at(0).get<int>();
  if (kind < 0 || kind > static_cast<int>(DataplaneEventKind::kRearm)) {
    throw std::invalid_argument("data-plane json: unknown event kind " + std::to_string(kind));
  }
  e.kind = static_cast<DataplaneEventKind>(kind);
  e.peer = j.at(1).get<int>();
  e.slot = j.at(2).get<int>();
  e.step = j.at(3).get<std::uint64_t>();
  e.epoch = j.at(4).get<std::uint32_t>();
  e.tag = j.at(5).get<std::uint64_t>();
  e.aux = j.at(6).get<std::uint64_t>();
  e.tNs = j.at(7).get<std::int64_t>();
  e.t2Ns = j.at(8).get<std::int64_t>();
  e.check = static_cast<std::uint8_t>(j.at(9).get<int>());
  e.want = j.at(10).get<std::uint64_t>();
  if (j.size() == 13) {
    e.source = j.at(11).get<int>();
    e.tagless = j.at(12).get<int>() != 0;
  }
  return e;
}

inline nlohmann::json toJson(const Result& r) {
  nlohmann::json j;
  j["layout"] = r.layout;
  j["workload"] = r.workload;
  j["ranks"] = r.ranks;
  j["depth"] = r.depth;
  j["slots"] = r.slots;
  j["payloadWords"] = r.payloadWords;
  j["generation"] = r.generation;
  j["startEpoch"] = r.startEpoch;
  j["stepsPlanned"] = r.stepsPlanned;
  j["stepsDone"] = r.stepsDone;
  j["elapsedNs"] = r.elapsedNs;
  j["timeoutNs"] = r.timeoutNs;
  j["clockDomain"] = r.clockDomain;
  j["outcome"] = toString(r.outcome);
  j["detail"] = r.detail;
  j["waitWhat"] = r.waitWhat;
  j["waitPeer"] = r.waitPeer;
  j["waitSlot"] = r.waitSlot;
  j["waitEpoch"] = r.waitEpoch;
  j["waitStep"] = r.waitStep;
  j["abortedBy"] = r.abortedBy;
  j["pairsRead"] = r.pairsRead;
  j["pairsGenuine"] = r.pairsGenuine;
  j["overwrites"] = r.overwrites;
  j["stale"] = r.stale;
  j["wrongResults"] = r.wrongResults;
  nlohmann::json findings = nlohmann::json::array();
  for (const InBandFinding& f : r.findings) {
    findings.push_back({{"violation", toString(f.violation)},
                        {"rank", f.rank},
                        {"peer", f.peer},
                        {"slot", f.slot},
                        {"step", f.step},
                        {"epoch", f.epoch},
                        {"text", f.text}});
  }
  j["findings"] = std::move(findings);
  j["historySteps"] = r.historySteps;
  nlohmann::json history = nlohmann::json::array();
  for (const DataplaneEvent& e : r.history) history.push_back(toJson(e));
  j["history"] = std::move(history);
  return j;
}

inline Result resultFromJson(const nlohmann::json& j) {
  using detail::read;
  Result r;
  read(j, "layout", r.layout);
  read(j, "workload", r.workload);
  read(j, "ranks", r.ranks);
  read(j, "depth", r.depth);
  read(j, "slots", r.slots);
  read(j, "payloadWords", r.payloadWords);
  read(j, "generation", r.generation);
  read(j, "startEpoch", r.startEpoch);
  read(j, "stepsPlanned", r.stepsPlanned);
  read(j, "stepsDone", r.stepsDone);
  read(j, "elapsedNs", r.elapsedNs);
  read(j, "timeoutNs", r.timeoutNs);
  read(j, "clockDomain", r.clockDomain);
  if (j.contains("outcome")) {
    r.outcome = detail::outcomeFromName(j.at("outcome").get<std::string>());
  }
  read(j, "detail", r.detail);
  read(j, "waitWhat", r.waitWhat);
  read(j, "waitPeer", r.waitPeer);
  read(j, "waitSlot", r.waitSlot);
  read(j, "waitEpoch", r.waitEpoch);
  read(j, "waitStep", r.waitStep);
  read(j, "abortedBy", r.abortedBy);
  read(j, "pairsRead", r.pairsRead);
  read(j, "pairsGenuine", r.pairsGenuine);
  read(j, "overwrites", r.overwrites);
  read(j, "stale", r.stale);
  read(j, "wrongResults", r.wrongResults);
  if (auto it = j.find("findings"); it != j.end() && !it->is_null()) {
    for (const nlohmann::json& f : *it) {
      InBandFinding finding;
      const std::string violation = f.at("violation").get<std::string>();
      if (violation != "C6" && violation != "C7") {
        throw std::invalid_argument("data-plane json: unknown violation '" + violation + "'");
      }
      finding.violation = violation == "C6" ? Violation::kOverwrite : Violation::kStale;
      read(f, "rank", finding.rank);
      read(f, "peer", finding.peer);
      read(f, "slot", finding.slot);
      read(f, "step", finding.step);
      read(f, "epoch", finding.epoch);
      read(f, "text", finding.text);
      r.findings.push_back(std::move(finding));
    }
  }
  read(j, "historySteps", r.historySteps);
  if (auto it = j.find("history"); it != j.end() && !it->is_null()) {
    r.history.reserve(it->size());
    for (const nlohmann::json& e : *it) r.history.push_back(dataplaneEventFromJson(e));
  }
  return r;
}

inline nlohmann::json toJson(const Spec& s) {
  nlohmann::json late = nlohmann::json::array();
  for (const Late& l : s.late) {
    late.push_back({{"rank", l.rank},
                    {"role", toString(l.role)},
                    {"every", l.every},
                    {"steps", l.steps},
                    {"delayUs", l.delay.count()}});
  }
  nlohmann::json j;
  j["layout"] = s.layout;
  j["workload"] = toString(s.workload);
  j["steps"] = s.steps;
  j["depth"] = s.depth;
  j["payload"] = s.payload;
  j["startEpoch"] = s.startEpoch;
  j["timeoutMs"] = s.timeout ? nlohmann::json(s.timeout->count()) : nlohmann::json(nullptr);
  j["windowUs"] = s.window.count();
  j["history"] = s.history;
  j["prefill"] = toString(s.prefill);
  j["late"] = std::move(late);
  if (s.values.type != layout::ValueType::kHash || s.values.chosenCount > 0) {
    nlohmann::json chosen = nlohmann::json::array();
    for (int c = 0; c < s.values.chosenCount; ++c) {
      const layout::ChosenValue& v = s.values.chosen[c];
      chosen.push_back(
          {{"step", v.step}, {"rank", v.rank}, {"element", v.element}, {"bits", v.bits}});
    }
    j["values"] = {{"type", kValueTypeNames.name(s.values.type, "hash")},
                   {"chosen", std::move(chosen)}};
  }
  j["stop"] = s.stop ? nlohmann::json{{"rank", s.stop->rank}, {"step", s.stop->step}}
                     : nlohmann::json(nullptr);
  return j;
}

inline Spec specFromJson(const nlohmann::json& j) {
  using detail::read;
  Spec s;
  read(j, "layout", s.layout);
  if (j.contains("workload")) {
    const auto w = workloadFromName(j.at("workload").get<std::string>());
    if (!w) throw std::invalid_argument("data-plane json: unknown workload");
    s.workload = *w;
  }
  read(j, "steps", s.steps);
  read(j, "depth", s.depth);
  read(j, "payload", s.payload);
  read(j, "startEpoch", s.startEpoch);
  if (auto it = j.find("timeoutMs"); it != j.end() && !it->is_null()) {
    s.timeout = std::chrono::milliseconds(it->get<std::int64_t>());
  }
  if (auto it = j.find("windowUs"); it != j.end() && !it->is_null()) {
    s.window = std::chrono::microseconds(it->get<std::int64_t>());
  }
  read(j, "history", s.history);
  if (j.contains("prefill")) {
    const auto p = prefillFromName(j.at("prefill").get<std::string>());
    if (!p) throw std::invalid_argument("data-plane json: unknown prefill");
    s.prefill = *p;
  }
  if (auto it = j.find("late"); it != j.end() && !it->is_null()) {
    for (const nlohmann::json& l : *it) {
      Late late;
      read(l, "rank", late.rank);
      const auto role = roleFromName(l.at("role").get<std::string>());
      if (!role) throw std::invalid_argument("data-plane json: unknown role");
      late.role = *role;
      read(l, "every", late.every);
      read(l, "steps", late.steps);
      late.delay = std::chrono::microseconds(l.at("delayUs").get<std::int64_t>());
      s.late.push_back(std::move(late));
    }
  }
  if (auto it = j.find("values"); it != j.end() && !it->is_null()) {
    const auto type = valueTypeFromName(it->at("type").get<std::string>());
    if (!type) throw std::invalid_argument("data-plane json: unknown value type");
    s.values.type = *type;
    for (const nlohmann::json& c : it->at("chosen")) {
      if (s.values.chosenCount >= layout::PayloadDomain::kMaxChosen) {
        throw std::invalid_argument("data-plane json: too many chosen values");
      }
      layout::ChosenValue& v = s.values.chosen[s.values.chosenCount++];
      v.step = c.at("step").get<std::uint64_t>();
      v.rank = c.at("rank").get<int>();
      v.element = c.at("element").get<int>();
      v.bits = c.at("bits").get<std::uint64_t>();
    }
  }
  if (auto it = j.find("stop"); it != j.end() && !it->is_null()) {
    s.stop = Stop{it->at("rank").get<int>(), it->at("step").get<std::uint64_t>()};
  }
  return s;
}

// The hooks record_json.cc calls: the data plane's part of a RankResult under "dataPlane".
// With several buffers, buffers 1, 2, ...'s under "laterDataPlanes" (absent when none).
inline void writeJson(const RankResult& result, nlohmann::json& j) {
  if (result.dataPlane) j["dataPlane"] = toJson(*result.dataPlane);
  if (!result.laterDataPlanes.empty()) {
    nlohmann::json later = nlohmann::json::array();
    for (const Result& one : result.laterDataPlanes) later.push_back(toJson(one));
    j["laterDataPlanes"] = std::move(later);
  }
}
inline void readJson(const nlohmann::json& j, RankResult& result) {
  if (auto it = j.find("dataPlane"); it != j.end() && !it->is_null()) {
    result.dataPlane = resultFromJson(*it);
  }
  if (auto it = j.find("laterDataPlanes"); it != j.end() && it->is_array()) {
    for (const nlohmann::json& one : *it) result.laterDataPlanes.push_back(resultFromJson(one));
  }
}

}  // namespace peerconf::harness::model
