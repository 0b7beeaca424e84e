// `peerconf explain`: the oracle's derivation (derive.h) printed and held against the file.
// yaml-cpp reads the file (the scenario through the parser, the positions of `expect:`'s keys
// through its marks); --write-expect splices text: only the span of the `expect:` block changes.
#include "expectation/explain.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "expectation/compare.h"
#include "expectation/derive.h"
#include "model/buffers.h"
#include "model/fault_sites.h"
#include "scenario/load.h"
#include "scenario/values.h"
#include "scenario/writer.h"

namespace peerconf::harness::expectation {

using model::Expectation;
using model::ExpectedFinding;
using model::Fault;
using model::Mark;
using model::MessageExpectation;
using model::MessageKind;
using model::Outcome;
using model::Scenario;
using model::ScenarioError;
using model::toString;
using scenario::expandScenarioPaths;
using scenario::parseScenario;
using scenario::sameScenario;
using scenario::writeExpect;

namespace {

// ---- Where the file says what (yaml-cpp marks) ----

Mark toMark(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

// Where the file says what the report points to besides the comparison's items (those are the
// scenario's model::ExpectationMarks).
struct Places {
  Mark expectKey;
  Mark withinValue;
  std::vector<Mark> violations;
  Mark core;
  Mark dataplane;
  Mark launchers;
  Mark document;
};

// The marks of a text the parser accepted (so its shape is known to be right).
Places placesOf(const std::string& text) {
  Places places;
  const YAML::Node root = YAML::Load(text);
  places.document = toMark(root.Mark());
  if (!root.IsMap()) return places;
  // Every node is copied out of its iterator: yaml-cpp's `it->second` lives in a temporary proxy,
  // so a reference to it dangles at the end of the statement (ASan: stack-use-after-scope).
  for (auto it = root.begin(); it != root.end(); ++it) {
    const YAML::Node keyNode = it->first;
    const YAML::Node value = it->second;
    const std::string& key = keyNode.Scalar();
    if (key == "core") places.core = toMark(value.Mark());
    if (key == "dataplane") places.dataplane = toMark(keyNode.Mark());
    if (key == "launchers") places.launchers = toMark(value.Mark());
    if (key != "expect" || !value.IsMap()) continue;
    places.expectKey = toMark(keyNode.Mark());
    for (auto e = value.begin(); e != value.end(); ++e) {
      const YAML::Node nameNode = e->first;
      const YAML::Node entry = e->second;
      const std::string& name = nameNode.Scalar();
      if (name == "within") places.withinValue = toMark(entry.Mark());
      if (name == "violations" && entry.IsSequence()) {
        for (const YAML::Node& item : entry) places.violations.push_back(toMark(item.Mark()));
      }
    }
  }
  return places;
}

// ---- Loading, with or without `expect:` ----

bool lacksExpect(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return false;
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == "expect") return false;
    }
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

// A draft without `expect:` is parsed with one of these appended (the first that validates: the
// outcome rules depend on the faults); the placeholder is dropped, never compared or written.
// The last: a raise whose messages only the defaults can give (a buffer-count fault's `ok` ranks
// can say no text).
constexpr std::array<const char*, 4> kPlaceholders{
    "expect: {outcome: success}\n",
    "expect: {outcome: raise, messages: {others: {text: \"placeholder\"}}}\n",
    "expect: {outcome: reported, messages: {others: {text: \"placeholder\"}}}\n",
    "expect: {outcome: raise}\n"};

struct Loaded {
  Scenario scenario;
  bool hasExpect = true;
};

Loaded load(const std::string& text, const std::string& file) {
  try {
    return {parseScenario(text, file), true};
  } catch (const ScenarioError&) {
    if (!lacksExpect(text)) throw;
  }
  const std::string base = text.empty() || text.back() == '\n' ? text : text + "\n";
  const auto lines = static_cast<int>(std::count(base.begin(), base.end(), '\n'));
  std::optional<ScenarioError> error;
  for (const char* placeholder : kPlaceholders) {
    try {
      Scenario scenario = parseScenario(base + placeholder, file);
      scenario.expect = {};
      return {std::move(scenario), false};
    } catch (const ScenarioError& e) {
      // An error in the draft itself (not about the placeholder) is the one to report.
      if (!error && e.mark().line <= lines) error = e;
    }
  }
  if (error) throw ScenarioError(error->file(), error->mark(), error->message());
  return {parseScenario(text, file), true};  // throws the parser's own error
}

// ---- Wording ----

std::string fateText(const RankTimeline& timeline) {
  switch (timeline.fate.end) {
    case RankFate::End::kOk:
      if (timeline.fate.skips) return "ok (returns every buffer it constructed; raises nothing)";
      return "ok (returns a usable PeerBuffer)";
    case RankFate::End::kDead:
      return "dead (reported)";
    case RankFate::End::kHung:
      return "hung (reported)";
    case RankFate::End::kExited:
      return "exited (reported)";
    case RankFate::End::kRaised:
      break;
  }
  return toString(timeline.fate.message);
}

bool sameMessage(const std::optional<MessageExpectation>& a,
                 const std::optional<MessageExpectation>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->kind == b->kind && a->text == b->text);
}

// One rank's timeline as lines: positions without notes run together.
std::string timelineText(const RankTimeline& timeline) {
  std::string out;
  std::string quiet;
  for (const TimelineStep& step : timeline.steps) {
    if (step.notes.empty()) {
      quiet += (quiet.empty() ? "" : ", ") + step.at;
      continue;
    }
    if (!quiet.empty()) out += "    " + quiet + "\n";
    quiet.clear();
    for (const std::string& note : step.notes) out += "    " + step.at + ": " + note + "\n";
  }
  if (!quiet.empty()) out += "    " + quiet + "\n";
  return out + "    => " + timeline.end + "\n";
}

// ---- What the file states that is not derived ----

std::string dataPlaneText(const model::Spec& spec) {
  std::string out = "layout " + spec.layout + ", workload " + model::toString(spec.workload) +
                    ", " + std::to_string(spec.steps) + " steps";
  if (spec.prefill != model::Prefill::kNone) {
    out += ", prefill " + model::toString(spec.prefill);
  }
  if (!spec.late.empty()) out += ", " + std::to_string(spec.late.size()) + " late rank(s)";
  if (spec.stop) {
    out += ", rank " + std::to_string(spec.stop->rank) + " stops at step " +
           std::to_string(spec.stop->step);
  }
  return out;
}

// A data plane per buffer: "layout L of buffer I", the first buffer whose own data plane runs
// another layout than the reference ("" when none does).
std::string bufferLayout(const Scenario& scenario) {
  for (std::size_t number = 0; number < scenario.buffers.size(); ++number) {
    const auto& own = scenario.buffers[number].dataPlane;
    if (own && own->layout != "reference") {
      return own->layout + " of buffer " + std::to_string(number);
    }
  }
  return "";
}

// The data plane as explain states it, and whether it runs (`runs`: the handshake succeeds on
// every rank); with a data plane per buffer, each buffer's (its entry's own or the scenario's).
std::string dataPlanesStated(const Scenario& scenario, bool runs) {
  if (!model::dataPlanePerBuffer(scenario)) {
    return "dataplane (" + dataPlaneText(*scenario.dataPlane) + "): " +
           (runs ? "runs after the handshake derived above; C6, C7 and C8 judge it from the run "
                   "(the data plane is not derived)"
                 : "does not run: the handshake does not succeed on every rank");
  }
  // One at a time, a later round's construction may fail after the earlier rounds ran theirs.
  const std::size_t listed = scenario.buffers.size();
  const std::size_t planes = model::dataPlanesRun(scenario);
  const std::size_t running = runs ? listed : (planes < listed ? planes : 0);
  std::string each;
  for (std::size_t number = 0; number < listed; ++number) {
    const Scenario view = model::dataPlaneScenarioOf(scenario, number);
    each += (number == 0 ? "" : "; ") + std::string("buffer ") + std::to_string(number) + ": " +
            dataPlaneText(*view.dataPlane) +
            (scenario.buffers[number].dataPlane ? " (its own)" : "");
    // The `at: dataplane` faults aimed at this buffer stop their ranks in its data plane only.
    for (const Fault& fault : view.faults) {
      if (!model::stopsInDataPlane(fault) || fault.ranks.empty()) continue;
      each += ", " + rankList(fault.ranks) + " stopped at step " + std::to_string(fault.step) +
              " (" + toString(fault.site) + ", line " + std::to_string(fault.mark.line) + ")";
    }
    if (number >= running && running > 0) {
      each += number == running ? ", does not run: the rounds end at its construction"
                                : ", not constructed";
    }
  }
  const bool oneAtATime = scenario.buffersAlive == model::BuffersAlive::kOneAtATime;
  const std::string which = running == listed ? "each runs"
                            : running == 1
                                ? "buffer 0 runs its"
                                : "buffers 0-" + std::to_string(running - 1) + " run theirs";
  return "dataplane over each of the " + std::to_string(listed) + " buffers (" + each + "): " +
         (running > 0 ? which +
                            " once every rank constructed its buffer, on that "
                            "registration's peer pointers (" +
                            (oneAtATime ? "in its round, before the buffer is closed"
                                        : "every buffer constructed, the others alive") +
                            "); C6, C7 and C8 judge each buffer's from the run, naming it "
                            "(\"buffer 1: ...\"; the data plane is not derived)"
                      : std::string("does not run: the handshake does not succeed on every rank"));
}

// A late rank that times its peers out for certain, as explain states it; with a data plane per
// buffer, in each buffer's that runs (`runs`: every data plane does).
void certainTimeoutsStated(const Scenario& scenario, const Places& places, bool runs,
                           std::vector<std::string>& out) {
  // Without a derived success, only the rounds before one that ends them run theirs.
  const std::size_t listed = model::dataPlanePerBuffer(scenario) ? scenario.buffers.size() : 1;
  if (!runs && model::dataPlanesRun(scenario) == listed) return;
  for (const model::DataPlaneTimeout& timeout : model::certainDataPlaneTimeouts(scenario)) {
    const model::Spec& spec = *timeout.view.dataPlane;
    const auto mark =
        spec.marks.find("late." + std::to_string(timeout.slow.lates.front()) + ".delay");
    const Mark where =
        mark != spec.marks.end() ? Mark{mark->second.line, mark->second.column} : places.dataplane;
    out.push_back(
        at(scenario.file, where) + ": " +
        (timeout.buffer ? "buffer " + std::to_string(*timeout.buffer) + ": " : std::string()) +
        "the peers' data planes time out for certain: " +
        model::slowStepText(timeout.view, timeout.slow) +
        "; each peer's wait times out naming a late rank, or ends in the abort of a "
        "peer that timed out first; C8 needs a timeout naming it (derived from the "
        "delay)");
  }
}

std::vector<std::string> statedNotDerived(const Scenario& scenario, const Places& places,
                                          const std::vector<Draw>& draws) {
  std::vector<std::string> out;
  const std::string& file = scenario.file;
  const Expectation& expect = scenario.expect;
  if (!scenario.core.empty() && scenario.core != "production") {
    out.push_back(at(file, places.core) + ": core " + scenario.core +
                  ": a planted core; the derivation is what the production core must show (the "
                  "contract the file's expect states), and the run must show the violations "
                  "below from the planted core instead");
  }
  for (std::size_t i = 0; i < expect.findings.size(); ++i) {
    const ExpectedFinding& finding = expect.findings[i];
    const Mark mark = i < places.violations.size() ? places.violations[i] : finding.mark;
    std::string from;
    if (!scenario.core.empty() && scenario.core != "production") {
      from = ", from the planted core " + scenario.core;
    } else if (scenario.dataPlane && scenario.dataPlane->layout != "reference") {
      from = ", from the data-plane layout " + scenario.dataPlane->layout;
    } else if (const std::string layout = bufferLayout(scenario); !layout.empty()) {
      from = ", from the data-plane layout " + layout;
    } else if (!threadsRun(scenario)) {
      from = ", from the " + scenario.launchers.front() + " launcher";
    }
    out.push_back(at(file, mark) + ": violation " + finding.property + " \"" + finding.text +
                  (finding.may
                       ? "\": the run may fail " + finding.property +
                             " (a knock-on), and only with this finding, or pass it"
                       : "\": the run must fail " + finding.property + " with this finding") +
                  from + " (the checkers' findings are stated, not derived)");
  }
  for (const model::JudgeRefusal& refusal : expect.refusals) {
    out.push_back(at(file, refusal.mark) + ": judge " + refusal.rule + " \"" + refusal.text +
                  "\": a control of the judge: the judge must refuse the run for " + refusal.rule +
                  " with this finding, and for nothing else (stated, not derived)");
  }
  if (expect.within) {
    out.push_back(at(file, places.withinValue) + ": within " +
                  scenario::formatDuration(*expect.within) +
                  ": the file's bound on the whole run, held by C8 on either clock (not "
                  "derived; without it the bound is 2 x deadline + delays + 2s and, for a "
                  "raise on simulated time, one agreement round after the last fault)");
  }
  if (scenario.dataPlane) {
    // It runs after a handshake that succeeded on every rank: a success, or a stop in the data
    // plane itself (`at: dataplane`: the handshake succeeded, then the rank is reported).
    const bool stopsInIt = model::stopsOnlyInDataPlane(scenario);
    const bool runs = !draws.empty() && std::all_of(draws.begin(), draws.end(), [&](const Draw& d) {
      return d.expect.outcome == Outcome::kSuccess ||
             (stopsInIt && d.expect.outcome == Outcome::kReported);
    });
    out.push_back(at(file, places.dataplane) + ": " + dataPlanesStated(scenario, runs));
    certainTimeoutsStated(scenario, places, runs, out);
  }
  if (!threadsRun(scenario)) {
    std::string names;
    for (const std::string& name : scenario.launchers) names += (names.empty() ? "" : ", ") + name;
    out.push_back(at(file, places.launchers) + ": launchers [" + names +
                  "]: the derivation follows the thread launcher's group calls (a call past its "
                  "deadline breaks every rank's); where the launchers differ the guide's "
                  "\"Launchers\" table says how");
  }
  return out;
}

// ---- The derived `expect:` ----

// One message for `rank` that holds in every draw, or nullopt (`ok` false) when none can.
std::optional<MessageExpectation> messageForEveryDraw(const std::vector<Draw>& draws, int rank,
                                                      bool& ok) {
  ok = true;
  auto first = derivedMessage(draws.front(), rank);
  bool same = true;
  for (const Draw& draw : draws) same = same && sameMessage(derivedMessage(draw, rank), first);
  if (same) return first;
  // The text every draw's message contains: the longest common prefix of their known texts.
  std::string common;
  for (std::size_t i = 0; i < draws.size(); ++i) {
    const RankTimeline& timeline = draws[i].timelines[static_cast<std::size_t>(rank)];
    if (!derivedMessage(draws[i], rank) || timeline.messageText.empty()) {
      ok = false;
      return std::nullopt;
    }
    if (i == 0) {
      common = timeline.messageText;
    } else {
      std::size_t n = 0;
      while (n < common.size() && n < timeline.messageText.size() &&
             common[n] == timeline.messageText[n]) {
        ++n;
      }
      common.resize(n);
    }
  }
  while (!common.empty() && common.back() == ' ') common.pop_back();
  if (common.empty()) {
    ok = false;
    return std::nullopt;
  }
  return MessageExpectation{MessageKind::kText, common};
}

int preference(const MessageExpectation& message) {
  switch (message.kind) {
    case MessageKind::kAnother:
      return 0;
    case MessageKind::kGroup:
      return 1;
    case MessageKind::kThis:
      return 2;
    case MessageKind::kOk:  // as `others` where most ranks return (buffer-count)
      return 1;
    case MessageKind::kText:
      break;
  }
  return 3;
}

// The expectation to write, in the style of the suite's files: the outcome, every raising rank's
// message (the most common one as `others`), and what the file states that is not derived
// (`within`, `violations`) kept. `full` false: the messages left to the parser's defaults.
std::optional<Expectation> expectationToWrite(const Scenario& scenario,
                                              const std::vector<Draw>& draws, bool full,
                                              std::string& why) {
  Expectation out;
  out.outcome = draws.front().expect.outcome;
  for (const Draw& draw : draws) {
    if (draw.expect.outcome != out.outcome) {
      why = "the outcome depends on the draw (" + toString(out.outcome) + " when " +
            drawText(scenario, draws.front()) + ", " + toString(draw.expect.outcome) + " when " +
            drawText(scenario, draw) + "): no one expectation holds for every seed";
      return std::nullopt;
    }
  }
  out.reported = draws.front().expect.reported;
  std::sort(out.reported.begin(), out.reported.end());
  if (full) {
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      bool ok = true;
      const auto message = messageForEveryDraw(draws, rank, ok);
      if (!ok) {
        why = "rank " + std::to_string(rank) +
              "'s message depends on the draw and no text is common to every draw";
        return std::nullopt;
      }
      if (message) out.messages[rank] = *message;
    }
    std::vector<std::pair<MessageExpectation, int>> counts;
    for (const auto& entry : out.messages) {
      const MessageExpectation& message = entry.second;
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& c) { return sameMessage(c.first, message); });
      if (it == counts.end()) {
        counts.push_back({message, 1});
      } else {
        ++it->second;
      }
    }
    // As the suite's files write it: `others: another` wherever a rank says another (the ranks
    // that failed are listed), else `others: group`, else the most common message.
    auto rankOf = [](const std::pair<MessageExpectation, int>& c) {
      const int p = preference(c.first);
      return std::tuple(std::min(p, 2), -c.second, p);
    };
    std::sort(counts.begin(), counts.end(),
              [&](const auto& a, const auto& b) { return rankOf(a) < rankOf(b); });
    // `others` covers every rank not listed: only where more than one rank raises.
    if (out.messages.size() > 1) out.others = counts.front().first;
  }
  if (out.outcome != Outcome::kSuccess) out.within = scenario.expect.within;
  out.violations = scenario.expect.violations;
  out.findings = scenario.expect.findings;
  out.refusals = scenario.expect.refusals;
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, {}, "cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > scenario::kMaxFileBytes) {
    throw ScenarioError(path, {}, scenario::tooLarge());
  }
  return text.str();
}

int commentLines(const std::string& text) {
  std::istringstream in(text);
  int count = 0;
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') ++count;
  }
  return count;
}

// The file's text with `expect` spliced in, verified: it parses, says everything else the file
// said, and explains without a difference. Empty when it does not (`why` says how).
std::string verifiedSplice(const std::string& text, const Scenario& scenario,
                           const std::vector<Draw>& draws, const Expectation& expect,
                           std::string& why) {
  std::string spliced;
  try {
    spliced = spliceExpect(text, writeExpect(expect));
    Scenario reparsed = parseScenario(spliced, scenario.file);
    Scenario same = scenario;
    same.expect = reparsed.expect;
    std::string field;
    if (!sameScenario(same, reparsed, &field)) {
      why = "the written file changes " + field;
      return {};
    }
    const Comparison check = compare(reparsed, draws);
    if (!check.differences.empty()) {
      why = "the written expect still differs: " + check.differences.front();
      return {};
    }
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
  return spliced;
}

void writeFile(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  std::filesystem::path temporary = target;
  temporary += ".explain-tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error(path + ": cannot write " + temporary.string());
  }
  std::error_code error;
  std::filesystem::permissions(temporary, std::filesystem::status(target).permissions(), error);
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw std::runtime_error(path + ": cannot replace it: " + error.message());
  }
}

// Draws listed one a line up to this many; more are summarised (2^pairs of them: 128 at 7 pairs).
constexpr std::size_t kDrawsListed = 8;

// "fault #0 (open) on ranks 1-7, fault #2 (close) on rank 0": the chance pairs of the draws.
std::string chancePairsText(const Scenario& scenario, const Draw& first) {
  std::map<std::size_t, std::vector<int>> byFault;
  for (const auto& [fault, rank] : first.fired) byFault[fault].push_back(rank);
  for (const auto& [fault, rank] : first.silent) byFault[fault].push_back(rank);
  std::string out;
  for (auto& [fault, ranks] : byFault) {
    std::sort(ranks.begin(), ranks.end());
    out += (out.empty() ? "" : ", ") +
           ("fault #" + std::to_string(fault) + " (" + toString(scenario.faults[fault].site) +
            model::aimText(scenario.faults[fault]) + ") on " + rankList(ranks));
  }
  return out;
}

// One rank's fate over the draws: the one fate of every draw; else each fate once, with the chance
// pair that decides it where one does ("this where fault #0 (open) on rank 1 fires, another where
// it does not"), or how many draws give it and the first of them.
std::string fatesOverDraws(const Scenario& scenario, const std::vector<Draw>& draws, int rank) {
  std::vector<std::string> fates;
  for (const Draw& draw : draws)
    fates.push_back(fateText(draw.timelines[static_cast<std::size_t>(rank)]));
  std::vector<std::string> distinct;
  for (const std::string& fate : fates) {
    if (std::find(distinct.begin(), distinct.end(), fate) == distinct.end())
      distinct.push_back(fate);
  }
  if (distinct.size() == 1) return distinct.front();
  auto fires = [&](const Draw& draw, const std::pair<std::size_t, int>& pair) {
    return std::find(draw.fired.begin(), draw.fired.end(), pair) != draw.fired.end();
  };
  if (distinct.size() == 2) {
    std::vector<std::pair<std::size_t, int>> pairs = draws.front().fired;
    pairs.insert(pairs.end(), draws.front().silent.begin(), draws.front().silent.end());
    for (const auto& pair : pairs) {
      // The pair decides when the first fate goes with its firing in every draw (the first draw
      // fires every pair).
      bool withFiring = true;
      for (std::size_t i = 0; i < draws.size(); ++i) {
        withFiring = withFiring && (fates[i] == fates.front()) == fires(draws[i], pair);
      }
      if (!withFiring) continue;
      return fates.front() + " where " + pairText(scenario, pair) + " fires, " + distinct[1] +
             " where it does not";
    }
  }
  std::string out;
  for (const std::string& fate : distinct) {
    std::size_t count = 0;
    std::size_t firstDraw = 0;
    for (std::size_t i = 0; i < draws.size(); ++i) {
      if (fates[i] != fate) continue;
      if (count++ == 0) firstDraw = i + 1;
    }
    out += (out.empty() ? "" : ", ") + fate + " (" + std::to_string(count) + " of " +
           std::to_string(draws.size()) + " draws, the first draw " + std::to_string(firstDraw) +
           ")";
  }
  return out;
}

// The derivation: the first draw's timeline of every rank, the draws (listed, or summarised when
// there are more than kDrawsListed), the outcome(s) and each rank's fate.
// Faults aimed at other buffers than the derived construction's: those before it act in
// constructions that succeed (at their point, or at the buffer's close), those after a failing
// construction never fire.
void reportOtherAims(std::ostringstream& report, const Scenario& scenario, std::size_t derived) {
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const model::Fault& fault = scenario.faults[i];
    if (!fault.onBuffer || static_cast<std::size_t>(*fault.onBuffer) == derived) continue;
    const auto aim = static_cast<std::size_t>(*fault.onBuffer);
    report << "  fault #" << i << " (" << toString(fault.site) << model::aimText(fault) << ", line "
           << fault.mark.line << ")"
           << (aim < derived
                   ? " fires in construction " + std::to_string(aim) + ", which succeeds" +
                         (fault.site == model::FaultSite::kDelay
                              ? std::string(" (the rank is late, inside the deadline)")
                              : std::string(" (at its close)"))
                   : " never fires: construction " + std::to_string(derived) + " fails first")
           << "\n";
  }
}

void reportDerivation(std::ostringstream& report, const Scenario& scenario,
                      const std::vector<Draw>& draws) {
  const Draw& first = draws.front();
  const bool many = draws.size() > kDrawsListed;
  report << "timeline (derived"
         << (draws.size() > 1 ? many ? "; the draw where every chance failure fires"
                                     : "; the draw where " + drawText(scenario, first)
                              : "")
         << "):\n";
  // Faults aimed at buffers: the timeline is the derived construction's (model::aimedConstruction).
  if (const auto aimed = model::aimedBuffer(scenario)) {
    const auto listed = model::listedBuffers(scenario);
    const std::vector<std::size_t> aims = model::aimedBuffers(scenario);
    std::string buffers;
    for (std::size_t i = 0; i < aims.size(); ++i) {
      buffers += (i == 0 ? "" : i + 1 == aims.size() ? " and " : ", ") + std::to_string(aims[i]);
    }
    report << "  the faults are aimed at "
           << (aims.size() > 1 ? "buffers " + buffers + "; the run is derived from buffer "
                               : std::string("buffer "))
           << *aimed << " (" << model::describeBuffer(listed[*aimed].bytes, listed[*aimed].label)
           << ", "
           << (scenario.buffersAlive == model::BuffersAlive::kOneAtATime
                   ? "its own registration round"
                   : "constructed while the buffers before it are alive")
           << "): "
           << (*aimed == 0 ? std::string("it is constructed first")
                           : "construction" + std::string(*aimed > 1 ? "s 0-" : " ") +
                                 std::to_string(*aimed - 1) + " succeed" + (*aimed > 1 ? "" : "s") +
                                 " on every rank")
           << "; the timeline below is buffer " << *aimed
           << "'s, and when it fails no later buffer is constructed\n";
    reportOtherAims(report, scenario, *aimed);
  }
  // Ranks that register different numbers of buffers: the timeline is that of the first
  // construction some rank never makes (model::countMismatch).
  if (const auto count = model::countMismatch(scenario)) {
    report << "  the ranks register different numbers of buffers (buffer-count): "
           << (count->at == 0 ? std::string("no construction precedes construction 0")
               : count->at == 1
                   ? std::string("construction 0 succeeds on every rank")
                   : "constructions 0-" + std::to_string(count->at - 1) + " succeed on every rank")
           << "; the timeline below is construction " << count->at
           << "'s, which no rank completes and after which no buffer is constructed\n";
  }
  std::vector<std::string> lines;
  for (const RankTimeline& timeline : first.timelines) lines.push_back(timelineText(timeline));
  for (const auto& [ranks, lines] : groupRanks(lines)) {
    report << "  " << rankList(ranks) << ":\n" << lines;
  }
  if (many) {
    report << "draws (the seed decides; " << draws.size()
           << ": each of " + chancePairsText(scenario, first) +
                  " fires or not; draw 1: every one fires, draw "
           << draws.size() << ": none does)\n";
  } else if (draws.size() > 1) {
    report << "draws (the seed decides; " << draws.size() << "):\n";
    for (std::size_t i = 0; i < draws.size(); ++i) {
      report << "  draw " << i + 1 << ": " << drawText(scenario, draws[i]) << "\n";
    }
  }
  report << "derived: outcome ";
  std::vector<std::string> outcomes;
  for (const Draw& draw : draws) {
    std::string text = toString(draw.expect.outcome);
    if (draw.expect.outcome == Outcome::kReported) text += " " + intList(draw.expect.reported);
    if (std::find(outcomes.begin(), outcomes.end(), text) == outcomes.end()) {
      outcomes.push_back(text);
    }
  }
  for (std::size_t i = 0; i < outcomes.size(); ++i) report << (i > 0 ? " or " : "") << outcomes[i];
  report << (draws.size() > 1 && outcomes.size() == 1 ? " (every draw)" : "") << "\n";
  std::vector<std::string> perRank;
  for (int rank = 0; rank < scenario.ranks; ++rank) {
    perRank.push_back(fatesOverDraws(scenario, draws, rank));
  }
  for (const auto& [ranks, fate] : groupRanks(perRank)) {
    report << "  " << rankList(ranks) << ": " << fate << "\n";
  }
}

// The derived expect: section (written with --write-expect), or why none can be written.
void reportDerivedExpect(std::ostringstream& report, FileExplanation& out, const std::string& text,
                         const Scenario& scenario, const std::vector<Draw>& draws,
                         const ExplainOptions& options, std::string* newText) {
  std::string why;
  std::string spliced;
  for (bool full : {false, true}) {
    // The short form (messages left to the parser's defaults) only for outcome reported, the
    // way the suite's files write it; raise always lists its messages.
    if (!full && draws.front().expect.outcome != Outcome::kReported) continue;
    const auto expect = expectationToWrite(scenario, draws, full, why);
    if (!expect) break;
    spliced = verifiedSplice(text, scenario, draws, *expect, why);
    if (!spliced.empty()) {
      out.derivedExpect = writeExpect(*expect);
      break;
    }
  }
  if (!spliced.empty() && commentLines(spliced) < commentLines(text)) {
    report << "note: the comments inside the replaced expect: block ("
           << commentLines(text) - commentLines(spliced)
           << " line(s)) go with it; every other comment stays\n";
  }
  if (out.derivedExpect.empty()) {
    report << "no expect: section can be written: " << why << "\n";
  } else if (options.writeExpect && newText != nullptr) {
    *newText = spliced;
    report << "writes the derived expect: section:\n" << out.derivedExpect;
  } else {
    report << "the derived expect: section (`peerconf explain --write-expect` writes it):\n"
           << out.derivedExpect;
  }
}

// The file's `judge: [{rule: coverage, ...}]` entry, if it lists one (a control of the judge's
// coverage rule).
const model::JudgeRefusal* coverageRefusal(const Scenario& scenario) {
  for (const model::JudgeRefusal& refusal : scenario.expect.refusals) {
    if (refusal.rule == "coverage") return &refusal;
  }
  return nullptr;
}

// The result line: differs, not derived or agrees (a control of the judge's coverage rule
// agrees with the faults that never fire: they are what it expects the judge to refuse).
void reportResult(std::ostringstream& report, FileExplanation& out, bool derived,
                  bool coverageControl) {
  if (coverageControl) {
    out.result = ExplainResult::kAgrees;
    report << "result: agrees (" << out.compared << " compared; " << out.unfiredFaults
           << " certain fault(s) that never fire, as the file's control of the judge expects)\n";
  } else if (!out.differences.empty()) {
    out.result = ExplainResult::kDiffers;
    report << "result: differs (" << out.differences.size()
           << (out.differences.size() == 1 ? " difference" : " differences") << ")\n";
  } else if (!derived) {
    out.result = ExplainResult::kNotDerived;
    report << "result: not derived (nothing compared)\n";
  } else {
    out.result = ExplainResult::kAgrees;
    report << "result: agrees (" << out.compared << " compared";
    if (!out.notDerived.empty()) report << ", " << out.notDerived.size() << " stated, not derived";
    report << ")\n";
  }
}

// Over 80 lines: explain's report, section by section; to be split by section.
// NOLINTNEXTLINE(readability-function-size): to be split
FileExplanation explain(const std::string& text, const std::string& file,
                        const ExplainOptions& options, std::string* newText) {
  FileExplanation out;
  out.file = file;
  Loaded loaded;
  try {
    loaded = load(text, file);
    if (options.checkCore) options.checkCore(loaded.scenario);
  } catch (const ScenarioError& e) {
    out.result = ExplainResult::kInvalid;
    out.error = e.what();
    return out;
  }
  const Scenario& scenario = loaded.scenario;
  const Places places = placesOf(text);
  std::ostringstream report;
  report << "== " << file << " (" << scenario.name << "): " << scenario.ranks
         << (scenario.ranks == 1 ? " rank" : " ranks") << ", deadline "
         << scenario::formatDuration(scenario.deadline) << ", " << scenario.faults.size()
         << (scenario.faults.size() == 1 ? " fault" : " faults") << "\n";

  const Derivation derived = derivation(scenario);
  const std::vector<Draw>& draws = derived.draws;
  bool faultsOnly = false;  // every difference is a certain fault that never fires
  if (!derived.notDerived.empty()) {
    report << "not derived: " << derived.notDerived << "\n";
  } else {
    reportDerivation(report, scenario, draws);
  }

  if (!loaded.hasExpect) {
    const std::string line =
        at(file, places.document) +
        ": the file has no expect: section (`peerconf explain --write-expect` writes the derived "
        "one)";
    out.differences.push_back(line);
    report << line << "\n";
  } else if (derived.notDerived.empty()) {
    const Comparison comparison = compare(scenario, draws);
    out.compared = comparison.compared;
    out.differences = comparison.differences;
    faultsOnly = comparison.faultDifferences == comparison.differences.size();
    out.unfiredFaults = comparison.faultDifferences;
    report << "compared with the file's expect (" << at(file, places.expectKey) << "):\n";
    for (const std::string& line : comparison.lines) report << "  " << line << "\n";
    // A control of the judge's coverage rule needs a certain fault that never fires: where
    // every one fires, the judge has nothing to refuse and the run fails the control.
    if (const model::JudgeRefusal* coverage = coverageRefusal(scenario);
        coverage != nullptr && comparison.faultDifferences == 0) {
      const std::string line =
          at(file, coverage->mark) +
          ": judge coverage: DIFFERS: the file expects the judge to refuse the run for "
          "coverage, but every certain fault fires (a run fails the control of the judge)";
      out.differences.push_back(line);
      report << "  " << line << "\n";
      faultsOnly = false;
    }
  } else {
    report << "the file's expect (" << at(file, places.expectKey)
           << ") is not compared: nothing was derived\n";
  }
  out.notDerived = statedNotDerived(scenario, places, draws);
  if (!out.notDerived.empty()) {
    report << "stated by the file, not derived:\n";
    for (const std::string& line : out.notDerived) report << "  " << line << "\n";
  }
  if (loaded.hasExpect) report << "bounds (C8): " << boundsText(scenario) << "\n";

  // The faults that never fire are what a control of the judge's coverage rule is made of: the
  // run passes when the judge refuses it for them, so explain agrees with run there.
  const bool coverageControl = faultsOnly && coverageRefusal(scenario) != nullptr;
  if (!out.differences.empty() && derived.notDerived.empty() && coverageControl) {
    report << "the expect: section agrees, and so do the faults: the certain faults that never "
              "fire are what the file's judge: coverage control expects the judge to refuse the "
              "run for\n";
  } else if (!out.differences.empty() && derived.notDerived.empty() && faultsOnly) {
    report << "the expect: section agrees; what differs is the faults: a certain fault that "
              "never fires is the file's to fix (--write-expect writes no faults)\n";
  } else if (!out.differences.empty() && derived.notDerived.empty()) {
    reportDerivedExpect(report, out, text, scenario, draws, options, newText);
  }

  if (!out.differences.empty() && !derived.notDerived.empty()) {
    report << "no expect: section can be written: nothing was derived\n";
  }
  reportResult(report, out, derived.notDerived.empty(),
               coverageControl && derived.notDerived.empty());
  out.report = report.str();
  return out;
}

}  // namespace

std::string spliceExpect(const std::string& text, const std::string& block) {
  const YAML::Node root = YAML::Load(text);
  if (!root.IsMap() && !root.IsNull()) {
    throw std::invalid_argument("the scenario is not a mapping: no expect: block to write");
  }
  // Line starts, to turn marks into offsets.
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  const std::size_t lines = text.empty() || text.back() == '\n' ? starts.size() - 1 : starts.size();
  const bool crlf = text.find("\r\n") != std::string::npos;
  std::string ending = block;
  if (crlf) {
    ending.clear();
    for (char c : block) ending += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }

  std::optional<YAML::Mark> key;
  std::size_t nextKeyLine = lines;
  if (root.IsMap()) {
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it->first.Scalar() == "expect") key = it->first.Mark();
    }
    if (key) {
      for (auto it = root.begin(); it != root.end(); ++it) {
        const auto line = static_cast<std::size_t>(it->first.Mark().line);
        if (line > static_cast<std::size_t>(key->line)) nextKeyLine = std::min(nextKeyLine, line);
      }
    }
  }
  if (!key) {
    std::string out = text;
    if (!out.empty() && out.back() != '\n') out += crlf ? "\r\n" : "\n";
    return out + ending;
  }
  if (key->column != 0) {
    throw std::invalid_argument("expect: is not a key at the start of a line (line " +
                                std::to_string(key->line + 1) + ")");
  }
  auto lineText = [&](std::size_t line) {
    const std::size_t begin = starts[line];
    const std::size_t end = line + 1 < starts.size() ? starts[line + 1] : text.size();
    return text.substr(begin, end - begin);
  };
  // The block: the key's line, then every line indented under it, up to the next top-level key;
  // blank lines and comments at column 0 after its last line belong to what follows.
  std::size_t last = static_cast<std::size_t>(key->line);
  for (std::size_t line = last + 1; line < nextKeyLine; ++line) {
    const std::string content = lineText(line);
    const bool blank = content.find_first_not_of(" \t\r\n") == std::string::npos;
    if (blank || content.front() == '#') continue;
    if (content.front() != ' ' && content.front() != '\t') break;  // "...", "---": not ours
    last = line;
  }
  const std::size_t begin = starts[static_cast<std::size_t>(key->line)];
  const std::size_t end = last + 1 < starts.size() ? starts[last + 1] : text.size();
  std::string out = text.substr(0, begin) + ending + text.substr(end);
  return out;
}

FileExplanation explainText(const std::string& text, const std::string& file,
                            const ExplainOptions& options) {
  return explain(text, file, options, nullptr);
}

FileExplanation explainFile(const std::string& path, const ExplainOptions& options) {
  std::string text;
  try {
    text = readFile(path);
  } catch (const ScenarioError& e) {
    FileExplanation out;
    out.file = path;
    out.error = e.what();
    return out;
  }
  std::string newText;
  FileExplanation out = explain(text, path, options, &newText);
  if (options.writeExpect && !newText.empty() && newText != text) {
    try {
      writeFile(path, newText);
      out.written = true;
      out.result = ExplainResult::kAgrees;
      out.report += "wrote " + path + ": the file now agrees\n";
    } catch (const std::exception& e) {
      out.result = ExplainResult::kInvalid;
      out.error = e.what();
    }
  }
  return out;
}

int runExplain(const std::vector<std::string>& paths, const ExplainOptions& options,
               std::ostream& out, std::ostream& err) {
  std::vector<std::string> files;
  if (!expandScenarioPaths(paths, files, err)) return 2;
  int agree = 0, differ = 0, notDerived = 0, invalid = 0, written = 0;
  for (const std::string& file : files) {
    const FileExplanation explanation = explainFile(file, options);
    out << explanation.report;
    if (!explanation.error.empty()) err << explanation.error << "\n";
    if (explanation.written) ++written;
    switch (explanation.result) {
      case ExplainResult::kAgrees:
        ++agree;
        break;
      case ExplainResult::kNotDerived:
        ++notDerived;
        break;
      case ExplainResult::kDiffers:
        ++differ;
        break;
      case ExplainResult::kInvalid:
        ++invalid;
        break;
    }
  }
  out << files.size() << (files.size() == 1 ? " file" : " files") << " explained: " << agree
      << " agree, " << differ << " differ, " << notDerived << " not derived, " << invalid
      << " invalid";
  if (options.writeExpect) out << ", " << written << " written";
  out << "\n";
  if (invalid > 0) return 2;
  return differ > 0 ? 1 : 0;
}

}  // namespace peerconf::harness::expectation
