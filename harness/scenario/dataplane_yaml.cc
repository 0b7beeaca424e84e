// The `dataplane:` section of a scenario file, key by key, with the mark of each error.
#include "scenario/dataplane_yaml.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "layout/engine.h"
#include "layout/layout.h"
#include "layout/layout_names.h"
#include "model/dataplane_spec.h"
#include "model/scenario.h"
#include "scenario/values.h"
#include "scenario/yaml_reader.h"

namespace peerconf::harness::scenario {

using model::Late;
using model::Mark;
using model::prefillFromName;
using model::roleFromName;
using model::ScenarioError;
using model::Spec;
using model::SpecMark;
using model::Stop;
using model::workloadFromName;

namespace {

constexpr std::array<std::string_view, 13> kKeys{
    "layout", "workload", "steps",   "depth", "payload", "start_epoch", "timeout",
    "window", "history",  "prefill", "late",  "stop",    "values"};
constexpr std::array<std::string_view, 2> kValuesKeys{"type", "chosen"};
constexpr std::array<std::string_view, 5> kChosenKeys{"step", "rank", "element", "value", "bits"};
constexpr std::array<std::string_view, 5> kLateKeys{"rank", "role", "every", "steps", "delay"};
constexpr std::array<std::string_view, 2> kStopKeys{"rank", "step"};
constexpr std::uint64_t kMaxSteps = 1'000'000'000;
constexpr std::uint64_t kMaxHistory = 1'000'000;

Mark markOf(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

SpecMark specMark(const YAML::Node& node) {
  const Mark m = markOf(node);
  return {m.line, m.column};
}

class SpecParser {
 public:
  SpecParser(std::string file, int ranks) : file_(std::move(file)), ranks_(ranks) {}

  Spec parse(const YAML::Node& node) {
    Spec spec;
    const auto keys = mapping(node, "dataplane", kKeys);
    if (ranks_ < 2) fail(node, "the data plane needs at least 2 ranks, the scenario has 1");
    spec.marks[""] = specMark(node);
    for (const auto& [key, value] : keys) {
      spec.marks[key] = specMark(value);
      nodes_.emplace_back(key, value);
      parseKey(key, value, spec);
    }
    // Each late entry's delay, where the rules about a slow rank point (rules.cc).
    for (std::size_t i = 0; i < lateDelayNodes_.size(); ++i) {
      spec.marks["late." + std::to_string(i) + ".delay"] = specMark(lateDelayNodes_[i]);
    }
    checkAcrossKeys(node, spec);
    spec.history = std::min(spec.history, spec.steps);
    return spec;
  }

 private:
  // One key of `dataplane:` into `spec`.
  void parseKey(const std::string& key, const YAML::Node& value, Spec& spec) {
    const std::string where = "dataplane." + key;
    if (key == "layout") {
      spec.layout = layoutName(value, where);
      layoutNode_ = value;
    } else if (key == "workload") {
      const auto w = workloadFromName(text(value, where));
      if (!w) {
        fail(value, "'" + where +
                        "' must be exchange, allreduce, two-in-flight, graph-replay or a "
                        "workload control (two-in-flight-shared-slots, "
                        "graph-replay-captured-epoch)");
      }
      spec.workload = *w;
    } else if (key == "steps") {
      spec.steps = unsignedIn(value, where, 1, kMaxSteps);
    } else if (key == "depth") {
      spec.depth = depth(value, where);
    } else if (key == "payload") {
      spec.payload =
          static_cast<int>(unsignedIn(value, where, 1, layout::Layout::kMaxPayloadWords));
    } else if (key == "start_epoch") {
      spec.startEpoch = static_cast<std::uint32_t>(
          unsignedIn(value, where, 0, std::numeric_limits<std::uint32_t>::max()));
    } else if (key == "timeout") {
      const auto d = duration(value, where);
      if (d.count() % 1000 != 0) fail(value, "'" + where + "' must be whole milliseconds");
      spec.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(d);
    } else if (key == "window") {
      spec.window = duration(value, where);
    } else if (key == "history") {
      spec.history = unsignedIn(value, where, 0, kMaxHistory);
    } else if (key == "prefill") {
      const auto p = prefillFromName(text(value, where));
      if (!p) fail(value, "'" + where + "' must be stale-epochs, earlier-buffer or none");
      spec.prefill = *p;
    } else if (key == "late") {
      if (value.IsSequence()) {
        for (const YAML::Node& item : value) spec.late.push_back(late(item));
      } else {
        spec.late.push_back(late(value));
      }
    } else if (key == "stop") {
      spec.stop = stop(value);
    } else if (key == "values") {
      values(value, spec);
    }
  }

  // `values: fp32`, or `values: {type: fp32, chosen: [{step, rank, element, value | bits}]}`.
  void values(const YAML::Node& node, Spec& spec) {
    if (node.IsScalar()) {
      spec.values.type = valueType(node);
      return;
    }
    const auto fields = mapping(node, "dataplane.values", kValuesKeys);
    bool haveType = false;
    for (const auto& [key, value] : fields) {
      if (key == "type") {
        spec.values.type = valueType(value);
        haveType = true;
      }
    }
    if (!haveType) fail(node, "'dataplane.values' needs 'type' (" + valueTypes() + ")");
    for (const auto& [key, value] : fields) {
      if (key != "chosen") continue;
      if (!value.IsSequence() || value.size() == 0) {
        fail(value,
             "'dataplane.values.chosen' must be a non-empty list like "
             "[{step: 5, value: -0.0}]");
      }
      if (spec.values.type == layout::ValueType::kHash) {
        fail(value,
             "chosen values need a typed payload ('type' fp64, fp32, fp16, bf16 or "
             "bytes): the hash is the payload's own self-check");
      }
      if (value.size() > static_cast<std::size_t>(layout::PayloadDomain::kMaxChosen)) {
        fail(value, "at most " + std::to_string(layout::PayloadDomain::kMaxChosen) +
                        " chosen values (the GPU kernels take them as an argument)");
      }
      for (const YAML::Node& item : value) {
        spec.values.chosen[spec.values.chosenCount++] = chosen(item, spec.values.type);
        chosenNodes_.push_back(item);
      }
    }
  }

  static std::string valueTypes() {
    std::string out;
    for (std::string_view name : model::kValueTypeNames.names()) {
      out += (out.empty() ? "" : ", ") + std::string(name);
    }
    return out;
  }

  layout::ValueType valueType(const YAML::Node& node) const {
    const auto type = model::valueTypeFromName(text(node, "dataplane.values.type"));
    if (!type) fail(node, "'dataplane.values.type' must be one of: " + valueTypes());
    return *type;
  }

  // One chosen value: where (`step`, `rank`, `element`) and what (`value` or `bits`).
  layout::ChosenValue chosen(const YAML::Node& node, layout::ValueType type) const {
    const auto fields = mapping(node, "a chosen value", kChosenKeys);
    layout::ChosenValue out;
    layout::PayloadDomain domain;
    domain.type = type;
    bool haveStep = false;
    bool haveWhat = false;
    for (const auto& [key, value] : fields) {
      if (key == "step") {
        out.step = unsignedIn(value, "a chosen value's step", 0, kMaxSteps);
        haveStep = true;
      } else if (key == "rank") {
        out.rank = rank(value, "a chosen value's rank");
      } else if (key == "element") {
        out.element = static_cast<int>(
            unsignedIn(value, "a chosen value's element", 0, layout::kMaxPayloadWords * 8 - 1));
      } else {
        if (haveWhat) fail(value, "a chosen value gives 'value' or 'bits', not both");
        haveWhat = true;
        out.bits = key == "bits" ? bitsOf(value, domain) : numberOf(value, type);
      }
    }
    if (!haveStep || !haveWhat) {
      fail(node,
           "a chosen value needs 'step' and 'value' (a number, nan, inf, -inf) or 'bits' "
           "(the element's bits, like 0x8000)");
    }
    return out;
  }

  layout::Word bitsOf(const YAML::Node& node, const layout::PayloadDomain& domain) const {
    const std::string value = node.IsScalar() ? node.Scalar() : "";
    const bool hex = value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X');
    std::uint64_t out = 0;
    const char* first = value.data() + (hex ? 2 : 0);
    const auto [end, error] =
        std::from_chars(first, value.data() + value.size(), out, hex ? 16 : 10);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
        (out & ~domain.laneMask()) != 0) {
      fail(node, "a chosen value's 'bits' must be an element's bits (" +
                     std::to_string(domain.elementBits()) + " bits for " +
                     layout::valueTypeName(domain.type) + "), like 0x8000");
    }
    return out;
  }

  // A number as the bits of an element of `type`, exactly (one that the type cannot hold is
  // refused, with its bits to give instead).
  layout::Word numberOf(const YAML::Node& node, layout::ValueType type) const {
    if (type == layout::ValueType::kBytes) {
      fail(node, "raw bytes take 'bits' (0 to 0xff), not 'value'");
    }
    std::string text = node.IsScalar() ? node.Scalar() : "";
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!text.empty() && text[0] == '+') text.erase(0, 1);
    double value = 0;
    if (text == "nan" || text == ".nan") {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (text == "inf" || text == ".inf") {
      value = std::numeric_limits<double>::infinity();
    } else if (text == "-inf" || text == "-.inf") {
      value = -std::numeric_limits<double>::infinity();
    } else {
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        fail(node, "a chosen value's 'value' must be a number, nan, inf or -inf, got '" +
                       scenario::echo(text) + "'");
      }
    }
    layout::PayloadDomain domain;
    domain.type = type;
    const layout::Word bits = elementBits(value, type);
    const double back = domain.toDouble(bits);
    const bool exact = (std::isnan(value) && std::isnan(back)) ||
                       (value == back && std::signbit(value) == std::signbit(back));
    if (!exact) {
      fail(node, "'" + node.Scalar() + "' is not exactly a " + layout::valueTypeName(type) +
                     " value: give the element's bits ('bits')");
    }
    return bits;
  }

  // The bits of `value` as an element of `type` (rounded; numberOf checks it round-trips).
  static layout::Word elementBits(double value, layout::ValueType type) {
    if (type == layout::ValueType::kFp64) {
      layout::Word bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      return bits;
    }
    const auto f = static_cast<float>(value);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    if (type == layout::ValueType::kFp32) return bits;
    if (type == layout::ValueType::kBf16) {
      return std::isnan(f) ? 0x7fc0u | ((bits >> 16) & 0x8000u) : bits >> 16;
    }
    // fp16: exact values only (numberOf refuses the rest): sign, exponent, top 10 mantissa bits.
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    if (std::isnan(f)) return sign | 0x7e00u;
    if (std::isinf(f)) return sign | 0x7c00u;
    if (f == 0.0f) return sign;
    const int exponent = static_cast<int>((bits >> 23) & 0xffu) - 127;
    const std::uint32_t mantissa = bits & 0x7fffffu;
    if (exponent > 15) return sign | 0x7c00u;  // too large: inf (not exact, refused)
    if (exponent >= -14) {
      return sign | (static_cast<std::uint32_t>(exponent + 15) << 10) | (mantissa >> 13);
    }
    if (exponent < -24) return sign;  // too small: 0 (not exact, refused)
    return sign | ((mantissa | 0x800000u) >> (-exponent - 1));
  }

  std::string layoutName(const YAML::Node& value, const std::string& where) const {
    std::string name = text(value, where);
    if (layout::findLayout(name) == nullptr) {
      std::string names;
      for (const std::string& known : layout::registeredLayoutNames()) {
        names += (names.empty() ? "" : ", ") + known;
      }
      fail(value, "unknown layout '" + name + "'; expected one of: " + names +
                      (name.find('/') != std::string::npos
                           ? " (a team's own layout is known only to the executable that "
                             "registers it: scenarios/README.md, \"Your own layout\")"
                           : ""));
    }
    return name;
  }

  // Any count here: whether the layout takes it (a power of two for one whose slots go by the
  // 32-bit epoch) is the layout's to say, asked once every key is known (checkLayout).
  int depth(const YAML::Node& value, const std::string& where) const {
    return static_cast<int>(unsignedIn(value, where, 1, layout::Layout::kMaxDepth));
  }

  // `stop: {rank: R, step: S}`.
  Stop stop(const YAML::Node& value) {
    const auto fields = mapping(value, "dataplane.stop", kStopKeys);
    Stop stop;
    bool haveRank = false;
    bool haveStep = false;
    for (const auto& [k, v] : fields) {
      if (k == "rank") {
        stop.rank = rank(v, "dataplane.stop.rank");
        haveRank = true;
      } else {
        stop.step = unsignedIn(v, "dataplane.stop.step", 0, kMaxSteps);
        haveStep = true;
      }
    }
    if (!haveRank || !haveStep) fail(value, "'dataplane.stop' needs 'rank' and 'step'");
    stopNode_ = value;
    return stop;
  }

  // Cross-key rules, once every key is known.
  void checkAcrossKeys(const YAML::Node& node, const Spec& spec) const {
    if (spec.stop && spec.stop->step >= spec.steps) {
      fail(stopNode_, "'dataplane.stop.step' " + std::to_string(spec.stop->step) +
                          " never comes: the run has " + std::to_string(spec.steps) + " steps");
    }
    for (std::size_t i = 0; i < spec.late.size(); ++i) {
      for (std::uint64_t s : spec.late[i].steps) {
        if (s >= spec.steps) {
          fail(lateNodes_[i], "a late step " + std::to_string(s) + " never comes: the run has " +
                                  std::to_string(spec.steps) + " steps");
        }
      }
    }
    if (spec.layout == "single-buffer" && spec.depth < 2) {
      fail(node,
           "layout single-buffer needs depth >= 2 (its writers wait as if there were "
           "depth slots; with depth 1 it is the reference layout)");
    }
    for (std::size_t i = 0; i < chosenNodes_.size(); ++i) {
      const layout::ChosenValue& v = spec.values.chosen[i];
      // Under two-in-flight a chosen value's step counts collectives (A of step s is 2s).
      const std::uint64_t collectives = spec.steps * model::collectivesPerStep(spec.workload);
      if (v.step >= collectives) {
        fail(chosenNodes_[i], "a chosen value's step " + std::to_string(v.step) +
                                  " never comes: the run has " + std::to_string(collectives) +
                                  (collectives == spec.steps ? " steps" : " collectives"));
      }
      const int elements = spec.payload * spec.values.elementsPerWord();
      if (v.element >= elements) {
        fail(chosenNodes_[i], "a chosen value's element " + std::to_string(v.element) +
                                  " is past the payload's " + std::to_string(elements) + " " +
                                  layout::valueTypeName(spec.values.type) + " elements (" +
                                  std::to_string(spec.payload) + " words)");
      }
    }
    checkLayout(node, spec);
  }

  // The registered layout says whether it runs this shape and workload (its invalidReason: the
  // slot count it takes, the payload, the values), at the key that names it.
  void checkLayout(const YAML::Node& node, const Spec& spec) const {
    const layout::Registered* found = layout::findLayout(spec.layout);
    if (found == nullptr) return;  // the built-in default, or refused at `layout:` already
    const std::string why = found->engine->invalidReason(model::shapeOf(spec, ranks_),
                                                         model::engineWorkload(spec.workload));
    if (why.empty()) return;
    // At the first key the reason names ("depth must be ..."), else at `layout:`.
    for (const auto& [key, value] : nodes_) {
      if (key != "layout" && why.find(key) != std::string::npos) {
        fail(value, "layout " + spec.layout + " cannot run this data plane: " + why);
      }
    }
    fail(layoutNode_ ? *layoutNode_ : node,
         "layout " + spec.layout + " cannot run this data plane: " + why);
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    throw ScenarioError(file_, markOf(node), message);
  }

  std::vector<std::pair<std::string, YAML::Node>> mapping(
      const YAML::Node& node, const std::string& what,
      std::span<const std::string_view> known) const {
    if (!node.IsMap()) fail(node, "'" + what + "' must be a mapping (keys: " + joined(known) + ")");
    std::vector<std::pair<std::string, YAML::Node>> out;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, "keys of '" + what + "' must be names");
      const std::string key = it->first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(it->first, "unknown key '" + scenario::echo(key) + "' in '" + what +
                            "'; expected one of: " + joined(known));
      }
      for (const auto& seen : out) {
        if (seen.first == key)
          fail(it->first, "duplicate key '" + scenario::echo(key) + "' in '" + what + "'");
      }
      out.emplace_back(key, it->second);
    }
    return out;
  }

  std::string text(const YAML::Node& node, const std::string& where) const {
    if (!node.IsScalar()) fail(node, "'" + where + "' must be a string");
    return node.Scalar();
  }

  std::uint64_t unsignedIn(const YAML::Node& node, const std::string& where, std::uint64_t low,
                           std::uint64_t high) const {
    const std::string value = node.IsScalar() && node.Tag() != "!" ? node.Scalar() : "";
    std::uint64_t out = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() || out < low ||
        out > high) {
      fail(node, "'" + where + "' must be an integer from " + std::to_string(low) + " to " +
                     std::to_string(high));
    }
    return out;
  }

  int rank(const YAML::Node& node, const std::string& where) const {
    const auto r = unsignedIn(node, where, 0, static_cast<std::uint64_t>(ranks_ - 1));
    return static_cast<int>(r);
  }

  std::chrono::microseconds duration(const YAML::Node& node, const std::string& where) const {
    const auto d = node.IsScalar() ? parseSpecDuration(node.Scalar()) : std::nullopt;
    if (!d) {
      fail(node, "'" + where +
                     "' must be a positive duration like \"500us\", \"2ms\", \"1s\" "
                     "(a plain number is milliseconds)");
    }
    return *d;
  }

  Late late(const YAML::Node& node) {
    const auto fields = mapping(node, "dataplane.late", kLateKeys);
    Late late;
    bool haveRank = false;
    bool haveRole = false;
    bool haveDelay = false;
    for (const auto& [key, value] : fields) {
      if (key == "rank") {
        late.rank = rank(value, "dataplane.late.rank");
        haveRank = true;
      } else if (key == "role") {
        const auto role = roleFromName(text(value, "dataplane.late.role"));
        if (!role) fail(value, "'dataplane.late.role' must be reader or writer");
        late.role = *role;
        haveRole = true;
      } else if (key == "every") {
        late.every = unsignedIn(value, "dataplane.late.every", 1, kMaxSteps);
      } else if (key == "steps") {
        if (!value.IsSequence() || value.size() == 0) {
          fail(value, "'dataplane.late.steps' must be a non-empty list of steps like [3, 7]");
        }
        for (const YAML::Node& s : value) {
          late.steps.push_back(unsignedIn(s, "a step of dataplane.late.steps", 0, kMaxSteps));
        }
      } else {
        late.delay = duration(value, "dataplane.late.delay");
        if (late.delay > std::chrono::seconds(10)) {
          fail(value, "'dataplane.late.delay' must be at most 10s");
        }
        haveDelay = true;
        lateDelayNodes_.push_back(value);
      }
    }
    if (!haveRank || !haveRole || !haveDelay || (late.every == 0 && late.steps.empty())) {
      fail(node,
           "a late rank needs 'rank', 'role' (reader|writer), 'delay' and 'every' (every "
           "k-th step) or 'steps' (a list)");
    }
    lateNodes_.push_back(node);
    return late;
  }

  std::string file_;
  int ranks_;
  YAML::Node stopNode_;
  std::optional<YAML::Node> layoutNode_;
  std::vector<std::pair<std::string, YAML::Node>> nodes_;  // every key given, in file order
  std::vector<YAML::Node> lateNodes_;
  std::vector<YAML::Node> lateDelayNodes_;  // each late entry's `delay`, in entry order
  std::vector<YAML::Node> chosenNodes_;
};

}  // namespace

std::optional<std::chrono::microseconds> parseSpecDuration(std::string_view text) {
  std::string_view number = text;
  double scale = 1000.0;  // a plain number is milliseconds
  for (const auto& [unit, factor] : std::array<std::pair<std::string_view, double>, 3>{
           {{"us", 1.0}, {"ms", 1000.0}, {"s", 1e6}}}) {
    if (text.size() > unit.size() && text.substr(text.size() - unit.size()) == unit) {
      number = text.substr(0, text.size() - unit.size());
      scale = factor;
      break;
    }
  }
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size()) return std::nullopt;
  const double us = value * scale;
  if (!(us >= 1.0) || us > 3.6e9 || std::abs(us - std::round(us)) > 1e-6) return std::nullopt;
  return std::chrono::microseconds(static_cast<std::int64_t>(std::llround(us)));
}

Spec parseSpec(const YAML::Node& node, int ranks, const std::string& file) {
  return SpecParser(file, ranks).parse(node);
}

}  // namespace peerconf::harness::scenario
