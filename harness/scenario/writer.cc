// Scenario writer: one YAML::Emitter walk in the order scenarios/README.md documents the keys.
#include "scenario/writer.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include "model/buffers.h"
#include "model/fault_sites.h"
#include "scenario/load.h"
#include "scenario/rules.h"
#include "scenario/values.h"

namespace peerconf::harness::scenario {

using model::effectiveError;
using model::Expectation;
using model::ExpectedFinding;
using model::Fault;
using model::hipErrorName;
using model::kDefaultMaxRun;
using model::Key;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::plannedBound;
using model::Scenario;
using model::takes;
using model::toString;

namespace {

using model::effectiveError;
using model::Key;
using model::takes;

bool sameMessage(const MessageExpectation& a, const MessageExpectation& b) {
  return a.kind == b.kind && a.text == b.text;
}

// The shortest decimal that reads back as exactly `value` (0.3, not 0.29999999999999999).
std::string shortest(double value) {
  char text[64];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  if (ec != std::errc()) throw std::invalid_argument("probability cannot be written");
  return std::string(text, end);
}

// A hipError_t by name when the parser knows the name, else by number.
std::string errorText(int code) {
  std::string name = hipErrorName(code);
  if (hipErrorCode(name) == code) return name;
  return std::to_string(code);
}

void emitMessage(YAML::Emitter& out, const MessageExpectation& message) {
  if (message.kind == MessageKind::kText) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "text" << YAML::Value << YAML::DoubleQuoted
        << message.text << YAML::EndMap;
  } else {
    out << toString(message.kind);
  }
}

// A fault over a set of peers as written (`peers:`), from its (rank, peer) pairs: the ranks in
// order, and the peers as a list where every rank has the same ones, else `cross-node` (the
// parser makes each rank's pairs from either; both give the same pairs back).
struct WrittenSet {
  std::vector<int> ranks;
  std::vector<int> peers;  // empty: cross-node
};

WrittenSet writtenSet(const Scenario& scenario, int set) {
  WrittenSet out;
  std::map<int, std::vector<int>> peersOf;
  for (const Fault& member : scenario.faults) {
    if (member.set != set) continue;
    const int rank = member.ranks.front();
    if (peersOf.count(rank) == 0) out.ranks.push_back(rank);
    peersOf[rank].push_back(member.peer.value_or(0));
  }
  const std::vector<int>& first = peersOf[out.ranks.front()];
  const bool alike = std::all_of(peersOf.begin(), peersOf.end(),
                                 [&](const auto& entry) { return entry.second == first; });
  if (alike) out.peers = first;
  return out;
}

void emitFault(YAML::Emitter& out, const Fault& fault, const WrittenSet* set = nullptr) {
  if (fault.ranks.empty()) throw std::invalid_argument("a fault without ranks cannot be written");
  out << YAML::BeginMap;
  out << YAML::Key << "site" << YAML::Value << toString(fault.site);
  const std::vector<int>& ranks = set != nullptr ? set->ranks : fault.ranks;
  if (ranks.size() == 1) {
    out << YAML::Key << "rank" << YAML::Value << ranks.front();
  } else {
    out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << ranks;
  }
  if (set != nullptr && set->peers.empty()) {
    out << YAML::Key << "peers" << YAML::Value << "cross-node";
  } else if (set != nullptr) {
    out << YAML::Key << "peers" << YAML::Value << YAML::Flow << set->peers;
  } else if (takes(fault.site, Key::kPeer) && fault.peer) {
    out << YAML::Key << "peer" << YAML::Value << *fault.peer;
  }
  if (takes(fault.site, Key::kAt)) out << YAML::Key << "at" << YAML::Value << toString(fault.at);
  if (takes(fault.site, Key::kDelay)) {
    out << YAML::Key << "delay" << YAML::Value << formatDuration(fault.delay);
  }
  if (takes(fault.site, Key::kError)) {
    out << YAML::Key << "error" << YAML::Value << errorText(effectiveError(fault));
  }
  if (fault.site == faults::Site::kBufferCount) {
    out << YAML::Key << "count" << YAML::Value << fault.registers;  // the buffers it registers
  } else if (takes(fault.site, Key::kCount) && fault.count > 0) {
    out << YAML::Key << "count" << YAML::Value << fault.count;
  }
  if (takes(fault.site, Key::kProbability) && fault.probability < 1.0) {
    out << YAML::Key << "probability" << YAML::Value << shortest(fault.probability);
  }
  if (takes(fault.site, Key::kCode)) out << YAML::Key << "code" << YAML::Value << fault.code;
  if (model::stopsInDataPlane(fault)) {
    out << YAML::Key << "step" << YAML::Value << fault.step;
  }
  if (takes(fault.site, Key::kBuffer) && model::isBufferFault(fault)) {
    out << YAML::Key << "buffer" << YAML::Value << fault.buffer;
  } else if (takes(fault.site, Key::kBuffer) && fault.onBuffer) {
    out << YAML::Key << "buffer" << YAML::Value << *fault.onBuffer;  // the buffer it is aimed at
  }
  if (takes(fault.site, Key::kSize)) {
    out << YAML::Key << "size" << YAML::Value << formatByteSize(fault.size);
  }
  if (takes(fault.site, Key::kLabel)) {
    out << YAML::Key << "label" << YAML::Value << YAML::DoubleQuoted << fault.label;
  }
  if (takes(fault.site, Key::kCall)) {
    out << YAML::Key << "call" << YAML::Value << std::string(faults::seamCallName(fault.call));
  }
  if (takes(fault.site, Key::kPart)) {
    out << YAML::Key << "part" << YAML::Value << std::string(faults::entryPartName(fault.part));
  }
  out << YAML::EndMap;
}

std::string micros(std::chrono::microseconds duration) {
  return std::to_string(duration.count()) + "us";
}

void emitDataPlane(YAML::Emitter& out, const model::Spec& spec) {
  out << YAML::BeginMap;
  out << YAML::Key << "layout" << YAML::Value << spec.layout;
  out << YAML::Key << "workload" << YAML::Value << model::toString(spec.workload);
  out << YAML::Key << "steps" << YAML::Value << spec.steps;
  out << YAML::Key << "depth" << YAML::Value << spec.depth;
  out << YAML::Key << "payload" << YAML::Value << spec.payload;
  out << YAML::Key << "start_epoch" << YAML::Value << spec.startEpoch;
  if (spec.timeout) {
    out << YAML::Key << "timeout" << YAML::Value << std::to_string(spec.timeout->count()) + "ms";
  }
  out << YAML::Key << "window" << YAML::Value << micros(spec.window);
  out << YAML::Key << "history" << YAML::Value << spec.history;
  out << YAML::Key << "prefill" << YAML::Value << model::toString(spec.prefill);
  if (spec.values.type != layout::ValueType::kHash || spec.values.chosenCount > 0) {
    // Chosen values as their bits: exact, whatever the type.
    out << YAML::Key << "values" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value
        << std::string(model::kValueTypeNames.name(spec.values.type, "hash"));
    if (spec.values.chosenCount > 0) {
      out << YAML::Key << "chosen" << YAML::Value << YAML::BeginSeq;
      for (int c = 0; c < spec.values.chosenCount; ++c) {
        const layout::ChosenValue& v = spec.values.chosen[c];
        char bits[24];
        std::snprintf(bits, sizeof bits, "0x%llx", static_cast<unsigned long long>(v.bits));
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "step" << YAML::Value << v.step;
        if (v.rank >= 0) out << YAML::Key << "rank" << YAML::Value << v.rank;
        if (v.element >= 0) out << YAML::Key << "element" << YAML::Value << v.element;
        out << YAML::Key << "bits" << YAML::Value << std::string(bits) << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  if (!spec.late.empty()) {
    out << YAML::Key << "late" << YAML::Value << YAML::BeginSeq;
    for (const model::Late& late : spec.late) {
      out << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "rank" << YAML::Value << late.rank;
      out << YAML::Key << "role" << YAML::Value << model::toString(late.role);
      if (late.every > 0) out << YAML::Key << "every" << YAML::Value << late.every;
      if (!late.steps.empty())
        out << YAML::Key << "steps" << YAML::Value << YAML::Flow << late.steps;
      out << YAML::Key << "delay" << YAML::Value << micros(late.delay);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (spec.stop) {
    out << YAML::Key << "stop" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "rank"
        << YAML::Value << spec.stop->rank << YAML::Key << "step" << YAML::Value << spec.stop->step
        << YAML::EndMap;
  }
  out << YAML::EndMap;
}

bool sameDataPlane(const model::Spec& a, const model::Spec& b) {
  if (a.layout != b.layout || a.workload != b.workload || a.steps != b.steps ||
      a.depth != b.depth || a.payload != b.payload || a.startEpoch != b.startEpoch ||
      a.timeout != b.timeout || a.window != b.window || a.history != b.history ||
      a.prefill != b.prefill || a.values.type != b.values.type ||
      a.values.chosenCount != b.values.chosenCount || a.late.size() != b.late.size() ||
      a.stop.has_value() != b.stop.has_value()) {
    return false;
  }
  for (int c = 0; c < a.values.chosenCount; ++c) {
    const layout::ChosenValue& x = a.values.chosen[c];
    const layout::ChosenValue& y = b.values.chosen[c];
    if (x.step != y.step || x.rank != y.rank || x.element != y.element || x.bits != y.bits) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.late.size(); ++i) {
    const model::Late& x = a.late[i];
    const model::Late& y = b.late[i];
    if (x.rank != y.rank || x.role != y.role || x.every != y.every || x.steps != y.steps ||
        x.delay != y.delay) {
      return false;
    }
  }
  return !a.stop || (a.stop->rank == b.stop->rank && a.stop->step == b.stop->step);
}

// The ceiling on the run's bound: `max_run` as given, else the default, raised to the bound
// where a scenario built in code needs more.
std::chrono::milliseconds effectiveMaxRun(const Scenario& scenario) {
  if (scenario.maxRun) return *scenario.maxRun;
  return std::max(kDefaultMaxRun, plannedBound(scenario));
}

void emitExpect(YAML::Emitter& out, const Scenario& scenario) {
  const Expectation& expect = scenario.expect;
  out << YAML::BeginMap;
  out << YAML::Key << "outcome" << YAML::Value
      << (expect.asDrawn ? std::string(model::kAsDrawn) : toString(expect.outcome));
  if (expect.asDrawn) {
    // The draw gives the messages and the reported ranks (model::Expectation::asDrawn).
  } else if (expect.outcome != Outcome::kSuccess && (!expect.messages.empty() || expect.others)) {
    out << YAML::Key << "messages" << YAML::Value << YAML::BeginMap;
    for (const auto& [rank, message] : expect.messages) {
      // A message the parser would fill in from `others` is left to it: the file stays short.
      if (expect.others && sameMessage(message, *expect.others)) continue;
      out << YAML::Key << rank << YAML::Value;
      emitMessage(out, message);
    }
    if (expect.others) {
      out << YAML::Key << "others" << YAML::Value;
      emitMessage(out, *expect.others);
    }
    out << YAML::EndMap;
  }
  if (expect.outcome == Outcome::kReported && !expect.asDrawn) {
    std::vector<int> reported = expect.reported;
    std::sort(reported.begin(), reported.end());
    out << YAML::Key << "reported" << YAML::Value << YAML::Flow << reported;
  }
  if (expect.outcome != Outcome::kSuccess && expect.within) {
    out << YAML::Key << "within" << YAML::Value << formatDuration(*expect.within);
  }
  if (!expect.violations.empty()) {
    // Each control names the finding its checker must produce (the only form a file accepts).
    out << YAML::Key << "violations" << YAML::Value << YAML::BeginSeq;
    for (const std::string& property : expect.violations) {
      auto named = std::find_if(expect.findings.begin(), expect.findings.end(),
                                [&](const ExpectedFinding& f) { return f.property == property; });
      if (named == expect.findings.end()) {
        throw std::invalid_argument("violation " + property +
                                    " cannot be written: it names no finding");
      }
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "property" << YAML::Value << property
          << YAML::Key << "finding" << YAML::Value << YAML::DoubleQuoted << named->text;
      if (named->may) out << YAML::Key << "appear" << YAML::Value << "may";
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!expect.refusals.empty()) {
    out << YAML::Key << "judge" << YAML::Value << YAML::BeginSeq;
    for (const model::JudgeRefusal& refusal : expect.refusals) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "rule" << YAML::Value << refusal.rule
          << YAML::Key << "finding" << YAML::Value << YAML::DoubleQuoted << refusal.text
          << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): a flat key-by-key writer
std::string writeScenario(const Scenario& scenario, const WriteOptions& options) {
  if (scenario.name.empty() || scenario.name.find_first_of(" \t\r\n") != std::string::npos) {
    throw std::invalid_argument("scenario name \"" + scenario.name +
                                "\" cannot be written: it must be a word without spaces");
  }
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << scenario.name;
  if (!scenario.description.empty()) {
    out << YAML::Key << "description" << YAML::Value << scenario.description;
  }
  out << YAML::Key << "ranks" << YAML::Value << scenario.ranks;
  if (scenario.buffers.empty()) {
    out << YAML::Key << "buffer" << YAML::Value << formatByteSize(scenario.bufferBytes);
  } else {
    out << YAML::Key << "buffers" << YAML::Value << YAML::BeginSeq;
    for (const model::BufferSpec& buffer : scenario.buffers) {
      if (!buffer.dataPlane) out << YAML::Flow;  // a block map: its data plane is one
      out << YAML::BeginMap;
      if (!buffer.label.empty()) out << YAML::Key << "label" << YAML::Value << buffer.label;
      out << YAML::Key << "size" << YAML::Value << formatByteSize(buffer.bytes);
      if (buffer.dataPlane) {
        out << YAML::Key << "dataplane" << YAML::Value;
        emitDataPlane(out, *buffer.dataPlane);
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (scenario.buffersAlive != model::BuffersAlive::kTogether) {
      out << YAML::Key << "buffers_alive" << YAML::Value
          << model::kBuffersAliveNames.name(scenario.buffersAlive);
    }
  }
  if (!scenario.deviceMemory.empty()) {
    out << YAML::Key << "device_memory" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [rank, bytes] : scenario.deviceMemory) {
      out << YAML::Key << rank << YAML::Value << formatByteSize(bytes);
    }
    out << YAML::EndMap;
  }
  if (scenario.nodes > 0) out << YAML::Key << "nodes" << YAML::Value << scenario.nodes;
  if (scenario.ranksPerGpu > 0) {
    out << YAML::Key << "ranks_per_gpu" << YAML::Value << scenario.ranksPerGpu;
  }
  out << YAML::Key << "seed" << YAML::Value << scenario.seed;
  out << YAML::Key << "deadline" << YAML::Value << formatDuration(scenario.deadline);
  // A scenario built in code (explore) whose bound passes the default ceiling says so, or its
  // file would not validate (rule 18).
  if (scenario.maxRun || effectiveMaxRun(scenario) != kDefaultMaxRun) {
    out << YAML::Key << "max_run" << YAML::Value << formatDuration(effectiveMaxRun(scenario));
  }
  if (!scenario.core.empty()) out << YAML::Key << "core" << YAML::Value << scenario.core;
  if (!scenario.launchers.empty()) {
    out << YAML::Key << "launchers" << YAML::Value << YAML::Flow << scenario.launchers;
  }
  if (!scenario.clock.empty()) out << YAML::Key << "clock" << YAML::Value << scenario.clock;
  // `runner:` only where it differs from the default (agree_first: true).
  if (!scenario.runner.agreeFirst) {
    out << YAML::Key << "runner" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
        << "agree_first" << YAML::Value << false << YAML::EndMap;
  }
  if (!scenario.faults.empty()) {
    out << YAML::Key << "faults" << YAML::Value << YAML::BeginSeq;
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const Fault& fault = scenario.faults[i];
      if (fault.set < 0) {
        emitFault(out, fault);
      } else if (static_cast<std::size_t>(fault.set) == i) {  // a set: once, at its first pair
        const WrittenSet set = writtenSet(scenario, fault.set);
        emitFault(out, fault, &set);
      }
    }
    out << YAML::EndSeq;
  }
  if (scenario.dataPlane) {
    out << YAML::Key << "dataplane" << YAML::Value;
    emitDataPlane(out, *scenario.dataPlane);
  }
  out << YAML::Key << "expect" << YAML::Value;
  emitExpect(out, scenario);
  out << YAML::EndMap;
  if (!out.good()) throw std::invalid_argument("YAML emitter: " + out.GetLastError());

  std::string text;
  if (!options.schema.empty()) text += "# yaml-language-server: $schema=" + options.schema + "\n";
  for (const std::string& line : options.header) text += (line.empty() ? "#" : "# " + line) + "\n";
  text += out.c_str();
  text += "\n";
  return text;
}

std::string writeExpect(const Expectation& expect) {
  Scenario scenario;
  scenario.expect = expect;
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "expect" << YAML::Value;
  emitExpect(out, scenario);
  out << YAML::EndMap;
  if (!out.good()) throw std::invalid_argument("YAML emitter: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

void writeScenarioFile(const Scenario& scenario, const std::string& path,
                       const WriteOptions& options) {
  const std::string text = writeScenario(scenario, options);
  const std::filesystem::path file(path);
  std::error_code error;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), error);
  if (error) throw std::runtime_error(path + ": cannot create its directory: " + error.message());
  std::ofstream stream(file, std::ios::binary | std::ios::trunc);
  stream << text;
  stream.close();
  if (!stream) throw std::runtime_error(path + ": cannot write");
}

std::string roundTripProblem(const Scenario& scenario, const std::string& file, std::string& text,
                             Scenario& back) {
  std::string why;
  try {
    text = writeScenario(scenario);
    back = parseScenario(text, file);
    if (!sameScenario(scenario, back, &why)) why = "reads back different: " + why;
  } catch (const std::exception& e) {
    why = std::string("does not validate: ") + e.what();
  }
  return why;
}

// NOLINTNEXTLINE(readability-function-size): a flat field-by-field comparison
bool sameScenario(const Scenario& a, const Scenario& b, std::string* why) {
  auto differ = [&](const std::string& what) {
    if (why != nullptr) *why = what;
    return false;
  };
  if (a.name != b.name) return differ("name");
  if (a.description != b.description) return differ("description");
  if (a.ranks != b.ranks) return differ("ranks");
  if (a.bufferBytes != b.bufferBytes) return differ("buffer");
  if (a.buffers.size() != b.buffers.size()) return differ("buffers");
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    const auto& one = a.buffers[i].dataPlane;
    const auto& other = b.buffers[i].dataPlane;
    if (a.buffers[i].bytes != b.buffers[i].bytes || a.buffers[i].label != b.buffers[i].label ||
        one.has_value() != other.has_value() || (one && !sameDataPlane(*one, *other))) {
      return differ("buffers " + std::to_string(i));
    }
  }
  if (a.buffersAlive != b.buffersAlive) return differ("buffers_alive");
  if (a.deviceMemory != b.deviceMemory) return differ("device_memory");
  if (a.ranksPerGpu != b.ranksPerGpu) return differ("ranks_per_gpu");
  if (a.nodes != b.nodes) return differ("nodes");
  if (a.seed != b.seed) return differ("seed");
  if (a.deadline != b.deadline) return differ("deadline");
  if (effectiveMaxRun(a) != effectiveMaxRun(b)) return differ("max_run");
  if (a.core != b.core) return differ("core");
  if (a.launchers != b.launchers) return differ("launchers");
  if (a.clock != b.clock) return differ("clock");
  if (a.runner.agreeFirst != b.runner.agreeFirst) return differ("runner.agree_first");
  if (a.dataPlane.has_value() != b.dataPlane.has_value() ||
      (a.dataPlane && !sameDataPlane(*a.dataPlane, *b.dataPlane))) {
    return differ("dataplane");
  }
  if (a.faults.size() != b.faults.size()) return differ("number of faults");
  for (std::size_t i = 0; i < a.faults.size(); ++i) {
    const Fault& f = a.faults[i];
    const Fault& g = b.faults[i];
    const std::string which = "fault " + std::to_string(i) + ": ";
    if (f.site != g.site) return differ(which + "site");
    if (f.ranks != g.ranks) return differ(which + "ranks");
    if (f.peer != g.peer) return differ(which + "peer");
    if (f.set != g.set) return differ(which + "peers");
    if (effectiveError(f) != effectiveError(g)) return differ(which + "error");
    if (f.delay != g.delay) return differ(which + "delay");
    if (takes(f.site, Key::kAt) && f.at != g.at) return differ(which + "at");
    if (takes(f.site, Key::kCount) && (f.count != g.count || f.registers != g.registers)) {
      return differ(which + "count");
    }
    if (takes(f.site, Key::kCode) && f.code != g.code) return differ(which + "code");
    if (takes(f.site, Key::kPart) && f.part != g.part) return differ(which + "part");
    if (takes(f.site, Key::kCall) && f.call != g.call) return differ(which + "call");
    if (model::stopsInDataPlane(f) && f.step != g.step) return differ(which + "step");
    if (f.buffer != g.buffer || f.onBuffer != g.onBuffer || f.size != g.size ||
        f.label != g.label) {
      return differ(which + "buffer, size or label");
    }
    if (f.probability != g.probability) return differ(which + "probability");
  }
  const Expectation& x = a.expect;
  const Expectation& y = b.expect;
  if (x.outcome != y.outcome || x.asDrawn != y.asDrawn) return differ("expect.outcome");
  if (x.messages.size() != y.messages.size()) return differ("expect.messages");
  for (auto i = x.messages.begin(), j = y.messages.begin(); i != x.messages.end(); ++i, ++j) {
    if (i->first != j->first || !sameMessage(i->second, j->second)) {
      return differ("expect.messages of rank " + std::to_string(i->first));
    }
  }
  if (x.others.has_value() != y.others.has_value() ||
      (x.others && !sameMessage(*x.others, *y.others))) {
    return differ("expect.messages.others");
  }
  std::vector<int> rx = x.reported, ry = y.reported;
  std::sort(rx.begin(), rx.end());
  std::sort(ry.begin(), ry.end());
  if (rx != ry) return differ("expect.reported");
  if (x.within != y.within) return differ("expect.within");
  if (x.violations != y.violations) return differ("expect.violations");
  if (x.findings.size() != y.findings.size()) return differ("expect.violations findings");
  for (std::size_t i = 0; i < x.findings.size(); ++i) {
    if (x.findings[i].property != y.findings[i].property ||
        x.findings[i].text != y.findings[i].text || x.findings[i].may != y.findings[i].may) {
      return differ("expect.violations finding of " + x.findings[i].property);
    }
  }
  if (x.refusals.size() != y.refusals.size()) return differ("expect.judge");
  for (std::size_t i = 0; i < x.refusals.size(); ++i) {
    if (x.refusals[i].rule != y.refusals[i].rule || x.refusals[i].text != y.refusals[i].text) {
      return differ("expect.judge refusal of " + x.refusals[i].rule);
    }
  }
  return true;
}

}  // namespace peerconf::harness::scenario
