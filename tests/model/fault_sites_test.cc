// The fault-site trait table (harness/model/fault_sites.h) against everything that must agree
// with it: the fault vocabulary (every site has one row), the parser (a site accepts exactly the
// keys and points its row lists, and needs the keys its row requires), the writer (what it writes
// parses back), and the editor schema (scenarios/schema.json states the same keys per site).
#include "model/fault_sites.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "model/scenario.h"
#include "scenario/load.h"
#include "scenario/writer.h"

namespace peerconf::harness {

using model::Fault;
using model::FaultSite;
using model::Key;
using model::Point;
using model::Scenario;
using model::ScenarioError;
using model::takes;
using model::Traits;
using scenario::parseScenario;
using scenario::writeScenario;
namespace {

namespace fs = std::filesystem;
using model::Key;
using model::Traits;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kScenarios = PEERCONF_SCENARIOS_DIR;

std::string name(FaultSite site) { return std::string(faults::siteName(site)); }
std::string name(Key key) { return std::string(model::keyName(key)); }

// A value the parser accepts for `key` on `site` (a three-rank scenario; the fault is on rank 0).
std::string valueFor(FaultSite site, Key key) {
  switch (key) {
    case Key::kPeer:
      return "1";
    case Key::kError:
      return "hipErrorMapFailed";
    case Key::kCount:
      return "1";
    case Key::kProbability:
      return "0.5";
    case Key::kAt: {
      const auto points = model::traitsOf(site).points;
      return std::string(faults::pointName(points.empty() ? Point::kClose : points.back()));
    }
    case Key::kDelay:
      return "10ms";
    case Key::kCode:
      return "3";
    case Key::kStep:  // with `at: close` the parser refuses it, but not as a key of the site
      return "3";
    case Key::kBuffer:
      return "0";
    case Key::kSize:  // not the listed 64KiB: a size that changes nothing is refused
      return "8KiB";
    case Key::kLabel:  // not the listed "" (no label)
      return "x";
    case Key::kPart:
      return "magic";
    case Key::kCall:  // `peer` is valid only with `call: open`
      return "open";
  }
  return "?";
}

// A fault of `site` with its required keys, `extra` keys, and without `omit`.
std::string faultYaml(FaultSite site, const std::vector<Key>& extra, std::optional<Key> omit = {},
                      int ranks = 3) {
  std::set<Key> keys(extra.begin(), extra.end());
  for (Key key : model::traitsOf(site).required) keys.insert(key);
  if (omit) keys.erase(*omit);
  std::string yaml =
      "ranks: " + std::to_string(ranks) + "\nfaults:\n  - site: " + name(site) + "\n    rank: 0\n";
  for (Key key : keys) yaml += "    " + name(key) + ": " + valueFor(site, key) + "\n";
  return yaml + "expect: {outcome: raise}\n";
}

// The message parsing `yaml` fails with, or "" when it parses and validates.
std::string messageOf(const std::string& yaml) {
  try {
    parseScenario(yaml, "traits.yaml");
  } catch (const ScenarioError& e) {
    return e.message();
  }
  return "";
}

TEST(FaultSitesTest, EverySiteHasOneRowInTheVocabularysOrder) {
  const auto sites = faults::allSites();
  const auto rows = model::allTraits();
  ASSERT_EQ(rows.size(), sites.size());
  for (std::size_t i = 0; i < sites.size(); ++i) {
    EXPECT_EQ(rows[i].site, sites[i]) << "row " << i;
    EXPECT_EQ(&model::traitsOf(sites[i]), &rows[i]) << name(sites[i]);
  }
}

TEST(FaultSitesTest, RowsAreConsistent) {
  for (const Traits& row : model::allTraits()) {
    const std::string site = name(row.site);
    // A required key is one the site takes; `at` comes with its points, and only with them.
    for (Key key : row.required) EXPECT_TRUE(model::takes(row.site, key)) << site;
    EXPECT_EQ(model::takes(row.site, Key::kAt), !row.points.empty()) << site;
    // A site sits at its `at` exactly when it takes one.
    EXPECT_EQ(row.position == model::kTimelineAtPoint, !row.points.empty()) << site;
    if (row.position != model::kTimelineAtPoint) {
      EXPECT_NE(model::positionName(row.position), "never") << site;
    }
    // Error sites are those with a default hipError_t.
    EXPECT_EQ(model::isErrorSite(row.site), faults::defaultError(row.site) != 0) << site;
    // Not every point: the row says why.
    const bool everyPoint = row.points.size() == faults::allPoints().size();
    EXPECT_EQ(row.pointsWhy.empty(), row.points.empty() || everyPoint) << site;
    // Listed in declaration order, without repeats (the parser's "it takes" lists them so).
    EXPECT_TRUE(std::is_sorted(row.keys.begin(), row.keys.end(), [](Key a, Key b) {
      // at and delay first, then the rest in declaration order.
      const auto rank = [](Key k) {
        return k == Key::kAt ? -2 : k == Key::kDelay ? -1 : static_cast<int>(k);
      };
      return rank(a) < rank(b);
    })) << site;
  }
}

TEST(FaultSitesTest, TimelinePositionsFollowTheirPoints) {
  Fault fault;
  for (const Traits& row : model::allTraits()) {
    fault.site = row.site;
    for (Point point : faults::allPoints()) {
      fault.at = point;
      const int expected =
          row.position == model::kTimelineAtPoint ? model::timelinePosition(point) : row.position;
      EXPECT_EQ(model::timelinePosition(fault), expected) << name(row.site);
    }
  }
  EXPECT_EQ(model::positionName(model::timelinePosition(Point::kAgree)), "agree");
  EXPECT_EQ(model::positionName(model::kTimelineNever), "never");
}

// The parser accepts every key a row lists and refuses every other one, naming what it takes.
TEST(FaultSitesTest, TheParserAcceptsExactlyTheKeysOfTheRow) {
  for (const Traits& row : model::allTraits()) {
    for (Key key : model::allKeys()) {
      const std::string message = messageOf(faultYaml(row.site, {key}));
      const std::string what = name(row.site) + " with " + name(key);
      if (model::takes(row.site, key)) {
        EXPECT_THAT(message, Not(HasSubstr("is not valid for site"))) << what;
      } else {
        std::string takes = "site, rank|ranks";
        for (Key k : row.keys) takes += ", " + name(k);
        EXPECT_THAT(message, HasSubstr("key '" + name(key) + "' is not valid for site '" +
                                       name(row.site) + "' (it takes: " + takes + ")"))
            << what;
      }
    }
  }
}

TEST(FaultSitesTest, TheParserNeedsTheRequiredKeys) {
  for (const Traits& row : model::allTraits()) {
    for (Key key : row.required) {
      EXPECT_THAT(messageOf(faultYaml(row.site, {}, key)),
                  HasSubstr(name(row.site) + " fault needs '" + name(key) + "'"))
          << name(row.site);
    }
  }
}

TEST(FaultSitesTest, TheParserAcceptsExactlyThePointsOfTheRow) {
  for (const Traits& row : model::allTraits()) {
    if (row.points.empty()) continue;
    for (Point point : faults::allPoints()) {
      std::string yaml = faultYaml(row.site, {}, Key::kAt);
      yaml.insert(yaml.find("expect:"), "    at: " + std::string(faults::pointName(point)) + "\n");
      const std::string message = messageOf(yaml);
      const std::string what = name(row.site) + " at " + std::string(faults::pointName(point));
      if (model::takesPoint(row.site, point)) {
        EXPECT_THAT(message, Not(HasSubstr("happens at"))) << what;
        EXPECT_THAT(message, Not(HasSubstr("unknown point"))) << what;
      } else {
        EXPECT_THAT(message, HasSubstr("a " + name(row.site) + " fault happens at")) << what;
        EXPECT_THAT(message, HasSubstr(std::string(row.pointsWhy))) << what;
      }
    }
  }
}

TEST(FaultSitesTest, SitesThatNeedPeersDoNotTakeOneRank) {
  for (const Traits& row : model::allTraits()) {
    // One rank: no peer key, and an `at` that a single rank meets.
    std::string yaml = "ranks: 1\nfaults:\n  - site: " + name(row.site) + "\n    rank: 0\n";
    if (model::takes(row.site, Key::kAt)) {
      yaml += "    at: " + std::string(faults::pointName(row.points.back())) + "\n";
    }
    if (model::takes(row.site, Key::kDelay)) yaml += "    delay: 10ms\n";
    yaml += "expect: {outcome: raise}\n";
    const std::string message = messageOf(yaml);
    if (row.needsPeers) {
      EXPECT_THAT(message, HasSubstr("never fires with 1 rank")) << name(row.site);
    } else {
      EXPECT_THAT(message, Not(HasSubstr("never fires with 1 rank"))) << name(row.site);
    }
  }
}

// What the writer writes of a fault with every field set is what its row takes, and it reads back.
TEST(FaultSitesTest, TheWriterWritesTheKeysOfTheRow) {
  for (const Traits& row : model::allTraits()) {
    Scenario scenario;
    scenario.name = "traits";
    scenario.ranks = 3;
    Fault fault;
    fault.site = row.site;
    fault.ranks = {0};
    fault.peer = 1;
    fault.error = 205;
    fault.delay = std::chrono::milliseconds(10);
    fault.at = row.points.empty() ? Point::kBeforeConstruct : row.points.back();
    // `step` means something only at `dataplane` (the writer writes it there only).
    if (model::takesPoint(row.site, Point::kDataplane)) fault.at = Point::kDataplane;
    fault.step = 5;
    fault.count = 2;
    fault.probability = 0.5;
    fault.onBuffer = 1;  // a handshake fault's `buffer` (the one it is aimed at)
    scenario.faults.push_back(fault);
    const std::string text = writeScenario(scenario);
    for (Key key : model::allKeys()) {
      const bool written = text.find("\n    " + name(key) + ": ") != std::string::npos;
      EXPECT_EQ(written, model::takes(row.site, key)) << name(row.site) << " " << name(key) << "\n"
                                                      << text;
    }
  }
}

// scenarios/schema.json states per site which keys are forbidden (`false`), which are required,
// and which points `at` may take: the same as the rows.
TEST(FaultSitesTest, TheSchemaStatesTheKeysOfEachRow) {
  std::ifstream in(kScenarios / "schema.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json schema = nlohmann::json::parse(text.str());
  const nlohmann::json& fault = schema.at("$defs").at("fault");
  std::set<std::string> every;
  for (const auto& [key, value] : fault.at("properties").items()) every.insert(key);
  const std::vector<std::string> points = [&] {
    std::vector<std::string> out;
    for (const auto& p : schema.at("$defs").at("point").at("enum")) out.push_back(p);
    return out;
  }();

  for (const Traits& row : model::allTraits()) {
    const std::string site = name(row.site);
    std::set<std::string> allowed = every;
    std::set<std::string> required{"site"};
    std::vector<std::string> atPoints = points;
    for (const nlohmann::json& branch : fault.at("allOf")) {
      const nlohmann::json& when = branch.at("if").at("properties").at("site");
      const bool applies = when.contains("const")
                               ? when.at("const") == site
                               : std::find(when.at("enum").begin(), when.at("enum").end(), site) !=
                                     when.at("enum").end();
      if (!applies) continue;
      const nlohmann::json& then = branch.at("then");
      const nlohmann::json keys = then.value("properties", nlohmann::json::object());
      for (const auto& [key, value] : keys.items()) {
        if (value == false) allowed.erase(key);
        if (key == "at" && value.is_object() && value.contains("enum")) {
          atPoints = value.at("enum").get<std::vector<std::string>>();
        }
      }
      const nlohmann::json needed = then.value("required", nlohmann::json::array());
      for (const auto& key : needed) required.insert(key);
    }
    std::set<std::string> expected{"site", "rank", "ranks"};
    for (Key key : row.keys) expected.insert(name(key));
    // `peers` (a set of peers) wherever `peer` names the peer a fault aims at; not on a stop
    // (one open to stop in) nor on foreign-exception (one call that throws).
    const bool stops = row.effect == model::Effect::kStop;
    if (expected.count("peer") != 0 && !stops && row.site != faults::Site::kForeignException) {
      expected.insert("peers");
    }
    EXPECT_EQ(allowed, expected) << site;
    std::set<std::string> expectedRequired{"site"};
    for (Key key : row.required) expectedRequired.insert(name(key));
    EXPECT_EQ(required, expectedRequired) << site;
    if (!row.points.empty()) {
      std::vector<std::string> rowPoints;
      for (Point point : row.points) rowPoints.emplace_back(faults::pointName(point));
      EXPECT_EQ(atPoints, rowPoints) << site;
    }
  }
}

}  // namespace
}  // namespace peerconf::harness
