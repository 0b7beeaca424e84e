// The comparison of a scenario's expect: and certain faults with the oracle's derivation.
#include "expectation/compare.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "model/buffers.h"

namespace peerconf::harness::expectation {

using model::Expectation;
using model::ExpectationMarks;
using model::Fault;
using model::Mark;
using model::MessageExpectation;
using model::Outcome;
using model::Scenario;
using model::toString;

std::string at(const std::string& file, Mark mark) {
  if (mark.line <= 0) return file;
  return file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column);
}

std::string rankList(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
    if (j >= i + 2) {
      out += "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

std::string intList(const std::vector<int>& ranks) {
  std::string out = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
  }
  return out + "]";
}

std::string pairText(const Scenario& scenario, const std::pair<std::size_t, int>& pair) {
  return "fault #" + std::to_string(pair.first) + " (" +
         toString(scenario.faults[pair.first].site) + model::aimText(scenario.faults[pair.first]) +
         ") on rank " + std::to_string(pair.second);
}

std::string drawText(const Scenario& scenario, const Draw& draw) {
  std::string out;
  for (const auto& pair : draw.fired) out += (out.empty() ? "" : ", ") + pairText(scenario, pair);
  if (!out.empty()) out += " fire" + std::string(draw.fired.size() == 1 ? "s" : "");
  std::string silent;
  for (const auto& pair : draw.silent) {
    silent += (silent.empty() ? "" : ", ") + pairText(scenario, pair);
  }
  if (!silent.empty()) {
    out += (out.empty() ? "" : "; ") + silent + " do" +
           std::string(draw.silent.size() == 1 ? "es" : "") + " not fire";
  }
  return out;
}

std::optional<MessageExpectation> derivedMessage(const Draw& draw, int rank) {
  auto it = draw.expect.messages.find(rank);
  if (it == draw.expect.messages.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<std::vector<int>, std::string>> groupRanks(
    const std::vector<std::string>& perRank) {
  std::vector<std::pair<std::vector<int>, std::string>> groups;
  for (std::size_t rank = 0; rank < perRank.size(); ++rank) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& group) { return group.second == perRank[rank]; });
    if (it == groups.end()) {
      groups.push_back({{static_cast<int>(rank)}, perRank[rank]});
    } else {
      it->first.push_back(static_cast<int>(rank));
    }
  }
  return groups;
}

bool threadsRun(const Scenario& scenario) {
  return scenario.launchers.empty() ||
         std::find(scenario.launchers.begin(), scenario.launchers.end(), "threads") !=
             scenario.launchers.end();
}

Derivation derivation(const Scenario& scenario) {
  Derivation out;
  try {
    out.draws = deriveDraws(scenario);
  } catch (const std::invalid_argument& e) {
    out.notDerived = e.what();
    return out;
  }
  const bool late = std::any_of(out.draws.begin(), out.draws.end(), [](const Draw& draw) {
    return std::any_of(draw.timelines.begin(), draw.timelines.end(),
                       [](const RankTimeline& t) { return t.lateness; });
  });
  // Under MPI a rank later than the deadline at the agreement can complete it alone (the guide's
  // "Launchers"): the oracle derives the thread launcher's outcome only. A control (violations)
  // states the contract, which the derivation is; anything else is not derived.
  if (late && !threadsRun(scenario) && scenario.expect.violations.empty()) {
    out.notDerived =
        "a rank arrives at a group call past the deadline, and this file is written "
        "for a launcher other than threads, where a late rank can still complete "
        "the agreement alone; explain derives the thread launcher's outcome only";
    out.draws.clear();
  }
  return out;
}

namespace {

// The run's or a draw's chance pairs that fire, in a set.
using Pairs = std::set<std::pair<std::size_t, int>>;

// The pairs `draw` assumes fire that its derivation reaches (a rank that stopped earlier never
// makes the call, so the pair cannot fire in a run either).
Pairs firingPairs(const Draw& draw) {
  Pairs out;
  for (const auto& [fault, rank] : draw.fired) {
    const auto& fired = draw.timelines[static_cast<std::size_t>(rank)].fired;
    if (std::find(fired.begin(), fired.end(), fault) != fired.end()) out.insert({fault, rank});
  }
  return out;
}

}  // namespace

const Draw* drawOfRun(const std::vector<Draw>& draws, const Pairs& fired) {
  Pairs chance;
  for (const Draw& draw : draws) {
    for (const auto& pair : draw.fired) chance.insert(pair);
    for (const auto& pair : draw.silent) chance.insert(pair);
  }
  Pairs ran;
  for (const auto& pair : fired) {
    if (chance.count(pair) != 0) ran.insert(pair);
  }
  for (const Draw& draw : draws) {
    if (firingPairs(draw) == ran) return &draw;
  }
  return nullptr;
}

std::string outcomeText(const Expectation& expect) {
  return expect.asDrawn ? std::string(model::kAsDrawn) : toString(expect.outcome);
}

std::string outcomeDependsOnDraw(const Scenario& scenario, const std::vector<Draw>& draws) {
  if (scenario.expect.asDrawn || !scenario.expect.violations.empty() || draws.size() < 2) {
    return {};
  }
  const auto other = std::find_if(draws.begin(), draws.end(), [&](const Draw& draw) {
    return draw.expect.outcome != draws.front().expect.outcome;
  });
  if (other == draws.end()) return {};
  return "the outcome depends on the draw of the faults left to chance: " +
         toString(draws.front().expect.outcome) + " when " + drawText(scenario, draws.front()) +
         ", " + toString(other->expect.outcome) + " when " + drawText(scenario, *other) +
         "; write 'outcome: as-drawn' (each run is held to the draw it made), or make the faults "
         "that decide it certain";
}

namespace {

struct Written {
  std::optional<MessageExpectation> message;
  Mark mark;
  std::string source;  // "", " (others)", " (the parser's default)"
};

Written writtenMessage(const Scenario& scenario, int rank) {
  const ExpectationMarks& marks = scenario.expect.marks;
  Written out;
  auto it = scenario.expect.messages.find(rank);
  if (it != scenario.expect.messages.end()) out.message = it->second;
  if (auto mark = marks.messages.find(rank); mark != marks.messages.end()) {
    out.mark = mark->second;
  } else if (marks.others && scenario.expect.others) {
    out.mark = *marks.others;
    out.source = " (others)";
  } else {
    out.mark = marks.outcome;
    out.source = out.message ? " (the parser's default)" : "";
  }
  return out;
}

std::string messageOrNone(const std::optional<MessageExpectation>& message) {
  return message ? toString(*message) : "no message (it does not raise)";
}

// One comparison under way: each compared item a line, agreeing or differing.
struct Comparer {
  const Scenario& scenario;
  const std::vector<Draw>& draws;
  const std::string& file = scenario.file;
  const Expectation& expect = scenario.expect;
  Comparison out;

  void item(Mark mark, const std::string& what, const std::string& differs) {
    ++out.compared;
    if (differs.empty()) {
      out.lines.push_back(at(file, mark) + ": " + what + ": agrees");
    } else {
      const std::string line = at(file, mark) + ": " + what + ": DIFFERS: " + differs;
      out.lines.push_back(line);
      out.differences.push_back(line);
    }
  }

  // The outcome, in every draw.
  void compareOutcome() {
    if (expect.asDrawn) {
      compareAsDrawn();
      return;
    }
    std::string outcomeDiffers;
    for (const Draw& draw : draws) {
      if (draw.expect.outcome == expect.outcome) continue;
      outcomeDiffers = "the file expects " + toString(expect.outcome) + "; " +
                       (draws.size() > 1 ? "when " + drawText(scenario, draw) + ", " : "") +
                       "the derivation says " + toString(draw.expect.outcome);
      break;
    }
    item(expect.marks.outcome, "outcome " + toString(expect.outcome), outcomeDiffers);
  }

  // `as-drawn`: each draw's outcome is the run's expectation, so the outcome agrees in every draw;
  // the line says how the draws fall (success in 1, raise in 3). A file with nothing drawn is
  // refused at load (scenario/rules.cc).
  void compareAsDrawn() {
    std::map<std::string, int> outcomes;
    for (const Draw& draw : draws) ++outcomes[toString(draw.expect.outcome)];
    std::string how;
    for (const auto& [outcome, n] : outcomes) {
      how += (how.empty() ? "" : ", ") + outcome + " in " + std::to_string(n);
    }
    item(expect.marks.outcome,
         "outcome as-drawn (" + how + " of " + std::to_string(draws.size()) + " draws)", "");
  }

  // The reported ranks.
  void compareReported() {
    if (expect.asDrawn) return;  // the draw's
    const bool anyReported = expect.outcome == Outcome::kReported ||
                             std::any_of(draws.begin(), draws.end(), [](const Draw& d) {
                               return d.expect.outcome == Outcome::kReported;
                             });
    if (anyReported) {
      std::vector<int> written = expect.reported;
      std::sort(written.begin(), written.end());
      std::string differs;
      for (const Draw& draw : draws) {
        std::vector<int> derived = draw.expect.reported;
        std::sort(derived.begin(), derived.end());
        if (derived != written) {
          differs =
              "the file expects " + intList(written) + ", the derivation says " + intList(derived);
          break;
        }
      }
      const auto& mark = expect.marks.reported;
      item(mark.value_or(expect.marks.outcome),
           "reported " + intList(written) + (mark ? "" : " (filled in from the faults)"), differs);
    }
  }

  // Each rank's message, ranks that read the same grouped.
  void compareMessages() {
    if (expect.asDrawn) return;  // the draw's
    std::vector<std::string> perRank;
    std::map<std::string, std::pair<Mark, std::string>> detail;  // key -> (mark, what + differs)
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      const Written written = writtenMessage(scenario, rank);
      std::string differs;
      bool any = written.message.has_value();
      for (const Draw& draw : draws) {
        const auto derived = derivedMessage(draw, rank);
        any = any || derived.has_value();
        const RankTimeline& timeline = draw.timelines[static_cast<std::size_t>(rank)];
        const bool agrees = written.message && derived
                                ? messageAgrees(*written.message, *derived, timeline)
                                : !written.message && !derived;
        if (agrees) continue;
        differs = "the file expects " + messageOrNone(written.message) + "; " +
                  (draws.size() > 1 ? "when " + drawText(scenario, draw) + ", " : "") +
                  "the derivation says " +
                  (derived ? toString(*derived) + " (" + timeline.end + ")"
                           : "no message: it " + timeline.end);
        break;
      }
      if (!any) {
        perRank.emplace_back();  // neither the file nor the derivation has a message: nothing to
        continue;                // compare (ok, dead, hung: the outcome and `reported` cover it)
      }
      const std::string what = messageOrNone(written.message) + written.source;
      const std::string key = at(file, written.mark) + "|" + what + "|" + differs;
      detail[key] = {written.mark, what + "\x1f" + differs};
      perRank.push_back(key);
    }
    for (const auto& [ranks, key] : groupRanks(perRank)) {
      if (key.empty()) continue;
      const auto& [mark, text] = detail[key];
      const auto split = text.find('\x1f');
      item(mark, rankList(ranks) + ": " + text.substr(0, split), text.substr(split + 1));
    }
  }

  // Every certain fault on every rank it names: a run fails its coverage check where one never
  // fires (judgement.h), however right the outcome and messages are. Listed only when one does
  // not: the timeline above shows each fault where it fires.
  void compareCertainFaults() {
    for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
      const Fault& fault = scenario.faults[i];
      if (fault.probability < 1.0) continue;  // counted over runs, never required
      for (int rank : fault.ranks) {
        std::string why;
        for (const Draw& draw : draws) {
          if (rank < 0 || rank >= static_cast<int>(draw.timelines.size())) continue;
          const auto& timeline = draw.timelines[static_cast<std::size_t>(rank)];
          // A pair of a set of peers (`peers:`): the set fires on the rank where any pair does.
          const bool setFires =
              fault.set >= 0 &&
              std::any_of(timeline.fired.begin(), timeline.fired.end(),
                          [&](std::size_t j) { return scenario.faults[j].set == fault.set; });
          if (setFires) continue;
          for (const auto& [index, text] : timeline.neverFired) {
            if (index != i) continue;
            why = (draws.size() > 1 ? "when " + drawText(scenario, draw) + ", " : std::string()) +
                  text;
            break;
          }
          if (!why.empty()) break;
        }
        if (why.empty()) continue;
        ++out.faultDifferences;
        item(fault.mark,
             "fault #" + std::to_string(i) + " (" + toString(fault.site) + model::aimText(fault) +
                 ", probability 1) on rank " + std::to_string(rank),
             "the file declares it certain, but it never fires there (" + why +
                 "): a run fails its coverage check; the file should drop the fault, name other "
                 "ranks or make it a chance (probability below 1)");
      }
    }
  }
};

}  // namespace

Comparison compare(const Scenario& scenario, const std::vector<Draw>& draws) {
  Comparer comparer{scenario, draws};
  comparer.compareOutcome();
  comparer.compareReported();
  comparer.compareMessages();
  comparer.compareCertainFaults();
  return comparer.out;
}

}  // namespace peerconf::harness::expectation
