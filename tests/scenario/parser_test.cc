// Scenario parsing and validation: the checked-in suite parses and covers every fault site, every
// broken example fails at its expected line and column, and the parser's defaults hold (the
// cross-key rules' defaults: rules_test.cc; the value formats: values_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "scenario/load.h"
#include "scenario/refusal.h"
#include "scenario/values.h"

namespace peerconf::harness {

using model::Fault;
using model::FaultSite;
using model::kNotReadyThisRankMessage;
using model::MessageKind;
using model::Outcome;
using model::Point;
using model::Scenario;
using model::ScenarioError;
using model::toString;
using scenario::expandScenarioPaths;
using scenario::expectedRefusal;
using scenario::loadScenario;
using scenario::parseScenario;
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const fs::path kScenarios = PEERCONF_SCENARIOS_DIR;
const fs::path kInvalid = PEERCONF_INVALID_SCENARIOS_DIR;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> yamlFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".yaml" || extension == ".yml")) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The GPU suites (scenarios/gpu*/) run on their own on the lent GPU machine, where an open takes
// milliseconds: they keep longer deadlines and may reuse the names of the mock suite's scenarios.
bool inGpuSuite(const fs::path& path) {
  const std::string top = fs::relative(path, kScenarios).begin()->string();
  return top.rfind("gpu", 0) == 0;
}

// gtest parameter names: letters, digits and underscores only.
std::string testName(const fs::path& path, const fs::path& root) {
  std::string name = fs::relative(path, root).replace_extension().generic_string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// Parses `text`, expecting a ScenarioError; returns it.
ScenarioError errorOf(const std::string& text, const std::string& file = "inline.yaml") {
  try {
    parseScenario(text, file);
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ScenarioError for:\n" << text;
  return ScenarioError(file, {}, "no error");
}

// ---------------------------------------------------------------------------------------------
// The checked-in suite: every file parses and is documented (GPU suites included), and the mock
// suite covers what it claims.

class SuiteFileTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(SuiteFileTest, ParsesAndIsDocumented) {
  const fs::path& path = GetParam();
  Scenario scenario;
  ASSERT_NO_THROW(scenario = loadScenario(path.string())) << path;
  EXPECT_EQ(scenario.file, path.string());
  EXPECT_FALSE(scenario.description.empty()) << path << ": give it a description";

  // Line 1: the editor modeline, pointing at the real schema; line 2: what the file checks.
  std::istringstream lines(readFile(path));
  std::string modeline;
  std::string purpose;
  std::getline(lines, modeline);
  std::getline(lines, purpose);
  const std::string prefix = "# yaml-language-server: $schema=";
  ASSERT_THAT(modeline, StartsWith(prefix)) << path;
  const fs::path schema = path.parent_path() / modeline.substr(prefix.size());
  EXPECT_TRUE(fs::exists(schema)) << path << ": the modeline's schema " << schema << " is missing";
  EXPECT_TRUE(fs::equivalent(schema, kScenarios / "schema.json")) << path;
  EXPECT_THAT(purpose, StartsWith("# ")) << path << ": line 2 says what the scenario checks";
}

INSTANTIATE_TEST_SUITE_P(Suite, SuiteFileTest, ::testing::ValuesIn(yamlFiles(kScenarios)),
                         [](const auto& info) { return testName(info.param, kScenarios); });

class SuiteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const fs::path& path : yamlFiles(kScenarios)) {
      if (inGpuSuite(path)) continue;
      try {
        suite_.push_back(loadScenario(path.string()));
      } catch (const ScenarioError&) {
        // Reported by SuiteFileTest; coverage is computed over the files that parse.
      }
    }
  }
  static std::vector<Scenario> suite_;
};
std::vector<Scenario> SuiteTest::suite_;

TEST_F(SuiteTest, HasAtLeastThirtyScenariosWithUniqueNames) {
  EXPECT_GE(suite_.size(), 30u);
  std::map<std::string, std::string> names;
  for (const Scenario& scenario : suite_) {
    auto [it, inserted] = names.emplace(scenario.name, scenario.file);
    EXPECT_TRUE(inserted) << "name " << scenario.name << " used by " << it->second << " and "
                          << scenario.file;
  }
}

TEST_F(SuiteTest, CoversEveryFaultSiteAndPoint) {
  std::set<std::string> sites;
  std::set<std::string> deathPoints;
  std::set<std::string> hangPoints;
  std::set<std::string> exitPoints;
  std::set<std::string> delayPoints;
  bool stopInsideOpenOfPeer = false;
  bool exitInsideFailingOpen = false;
  std::set<std::string> groupFailPoints;
  bool probability = false;
  bool count = false;
  bool several = false;
  for (const Scenario& scenario : suite_) {
    several = several || scenario.faults.size() >= 2;
    // vLLM's CUDACHECK -> exit(): an open of a peer fails, and the rank exits inside that call.
    for (const Fault& exit : scenario.faults) {
      if (exit.site != FaultSite::kExit || !exit.peer) continue;
      for (const Fault& open : scenario.faults) {
        if (open.site == FaultSite::kOpen && open.peer == exit.peer && open.ranks == exit.ranks) {
          exitInsideFailingOpen = true;
        }
      }
    }
    for (const Fault& fault : scenario.faults) {
      sites.insert(toString(fault.site));
      probability = probability || fault.probability < 1.0;
      count = count || fault.count > 0;
      if (fault.site == FaultSite::kDeath) deathPoints.insert(toString(fault.at));
      if (fault.site == FaultSite::kHang) hangPoints.insert(toString(fault.at));
      if (fault.site == FaultSite::kExit) exitPoints.insert(toString(fault.at));
      if (fault.peer && (fault.site == FaultSite::kDeath || fault.site == FaultSite::kHang ||
                         fault.site == FaultSite::kExit)) {
        stopInsideOpenOfPeer = true;
      }
      if (fault.site == FaultSite::kDelay) delayPoints.insert(toString(fault.at));
      if (fault.site == FaultSite::kGroupFail) groupFailPoints.insert(toString(fault.at));
    }
  }
  // Every site of the vocabulary: a site added without a scenario of the suite fails here.
  std::set<std::string> everySite;
  for (const FaultSite site : faults::allSites()) everySite.insert(toString(site));
  const std::set<std::string> everyPoint{"before-construct", "exchange", "open", "agree", "close"};
  std::set<std::string> everyStopPoint = everyPoint;
  everyStopPoint.insert({"alloc", "get-handle", "exchange-send", "exchange-recv", "dataplane"});
  EXPECT_EQ(sites, everySite);
  EXPECT_EQ(deathPoints, everyStopPoint);
  EXPECT_EQ(hangPoints, everyStopPoint);
  EXPECT_EQ(exitPoints,
            (std::set<std::string>{"before-construct", "alloc", "get-handle", "exchange-recv",
                                   "open", "agree", "dataplane", "close"}));
  EXPECT_EQ(delayPoints, everyPoint);
  EXPECT_TRUE(stopInsideOpenOfPeer) << "no death, hang or exit inside the open of one peer";
  EXPECT_TRUE(exitInsideFailingOpen) << "no exit inside a failing open (CUDACHECK -> exit)";
  EXPECT_EQ(groupFailPoints, (std::set<std::string>{"exchange", "agree"}));
  EXPECT_TRUE(probability) << "no scenario uses probability";
  EXPECT_TRUE(count) << "no scenario uses count";
  EXPECT_TRUE(several) << "no scenario plants several faults";
}

TEST_F(SuiteTest, CoversSuccessAtEveryRankCountAndEveryOutcome) {
  std::set<int> successRanks;
  std::set<Outcome> outcomes;
  bool latePastDeadline = false;
  bool lateWithinDeadline = false;
  for (const Scenario& scenario : suite_) {
    outcomes.insert(scenario.expect.outcome);
    if (scenario.expect.outcome == Outcome::kSuccess && scenario.faults.empty()) {
      successRanks.insert(scenario.ranks);
    }
    for (const Fault& fault : scenario.faults) {
      if (fault.site != FaultSite::kDelay || fault.at == Point::kClose) continue;
      if (fault.delay >= scenario.deadline && scenario.expect.outcome == Outcome::kRaise) {
        latePastDeadline = true;
      }
      if (fault.delay < scenario.deadline && scenario.expect.outcome == Outcome::kSuccess) {
        lateWithinDeadline = true;
      }
    }
  }
  for (int ranks : {1, 2, 4, 8, 16}) {
    EXPECT_EQ(successRanks.count(ranks), 1u) << "no plain success scenario at " << ranks;
  }
  EXPECT_EQ(outcomes.size(), 3u);
  EXPECT_TRUE(latePastDeadline);
  EXPECT_TRUE(lateWithinDeadline);
}

TEST(ScenarioSuite, DeadlinesStayShort) {
  // The suite runs on a loaded 2-core CI box: scenarios that wait out a deadline must keep it
  // short, and no scenario should need more than a couple of seconds per group call.
  for (const fs::path& path : yamlFiles(kScenarios)) {
    if (inGpuSuite(path)) continue;
    const Scenario scenario = loadScenario(path.string());
    // A data plane without faults never waits a deadline out; its deadline only sets the run's
    // bound (C8), which must leave room for thousands of steps under ASan on a loaded box.
    const bool neverWaits = scenario.dataPlane && scenario.faults.empty();
    EXPECT_LE(scenario.deadline, milliseconds(neverWaits ? 5000 : 2000)) << path;
  }
}

TEST(ScenarioSuite, ExpandFindsEveryFileAndNoInvalidOne) {
  const std::vector<std::string> paths = expandScenarioPaths({kScenarios.string()});
  EXPECT_EQ(paths.size(), yamlFiles(kScenarios).size());
  for (const std::string& path : paths) EXPECT_THAT(path, ::testing::Not(HasSubstr("invalid")));
}

// ---------------------------------------------------------------------------------------------
// Broken examples: tests/data/invalid_scenarios/*.yaml, each opening with
// "# expect-error: LINE:COL: fragment".

class InvalidFileTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(InvalidFileTest, FailsWhereItSays) {
  const fs::path& path = GetParam();
  // The header as `peerconf validate --refused` reads it (scenario/refusal.h).
  const auto expected = expectedRefusal(readFile(path));
  ASSERT_TRUE(expected) << path << ": no \"# expect-error: LINE:COL: fragment\" first line";
  const int line = expected->mark.line;
  const int column = expected->mark.column;
  const std::string& fragment = expected->fragment;

  try {
    loadScenario(path.string());
    FAIL() << path << " parsed, but should fail with: " << fragment;
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.mark().line, line) << e.what();
    EXPECT_EQ(e.mark().column, column) << e.what();
    EXPECT_THAT(e.message(), HasSubstr(fragment));
    EXPECT_THAT(std::string(e.what()), StartsWith(path.string() + ":" + std::to_string(line) + ":" +
                                                  std::to_string(column) + ": "));
  }
}

INSTANTIATE_TEST_SUITE_P(Invalid, InvalidFileTest, ::testing::ValuesIn(yamlFiles(kInvalid)),
                         [](const auto& info) { return testName(info.param, kInvalid); });

TEST(InvalidFiles, ThereAreMany) { EXPECT_GE(yamlFiles(kInvalid).size(), 40u); }

TEST(Parser, ReadsDeviceMemoryForEveryRankOrByRank) {
  EXPECT_TRUE(
      parseScenario("ranks: 2\nexpect: {outcome: success}\n", "a.yaml").deviceMemory.empty());
  EXPECT_EQ(parseScenario("ranks: 2\ndevice_memory: 64MiB\nexpect: {outcome: success}\n", "a.yaml")
                .deviceMemory,
            (std::map<int, std::size_t>{{0, 64u << 20}, {1, 64u << 20}}));
  EXPECT_EQ(parseScenario("ranks: 3\nbuffer: 1KiB\ndevice_memory: {1: 4KiB}\n"
                          "expect: {outcome: success}\n",
                          "a.yaml")
                .deviceMemory,
            (std::map<int, std::size_t>{{1, 4096u}}));
}

// ranks_per_gpu: the ranks of a mocked GPU (default: the command line's); with device_memory the
// GPU's ranks share one size and it must hold all their allocations together (else which rank
// runs out would be the seed's choice).
TEST(Parser, ReadsRanksPerGpuAndHoldsASharedGpuToAllItsAllocations) {
  EXPECT_EQ(parseScenario("ranks: 2\nexpect: {outcome: success}\n", "a.yaml").ranksPerGpu, 0);
  EXPECT_EQ(parseScenario("ranks: 4\nranks_per_gpu: 2\nexpect: {outcome: success}\n", "a.yaml")
                .ranksPerGpu,
            2);
  // 2 x (64 KiB + 4 x 8 bytes): exactly the two ranks' buffers and tables.
  EXPECT_NO_THROW(
      parseScenario("ranks: 4\nbuffer: 64KiB\nranks_per_gpu: 2\ndevice_memory: 131136\n"
                    "expect: {outcome: success}\n",
                    "a.yaml"));
  try {
    parseScenario(
        "ranks: 4\nbuffer: 64KiB\nranks_per_gpu: 2\ndevice_memory: 131135\n"
        "expect: {outcome: success}\n",
        "a.yaml");
    FAIL() << "a shared GPU one byte short was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.message(), HasSubstr("holds 2 ranks needing 131136 bytes together"));
  }
  // Without sharing, the same memory a rank is room enough for each.
  EXPECT_NO_THROW(parseScenario(
      "ranks: 4\nbuffer: 64KiB\ndevice_memory: 131135\nexpect: {outcome: success}\n", "a.yaml"));
  EXPECT_THROW(parseScenario("ranks: 2\nranks_per_gpu: 0\nexpect: {outcome: success}\n", "a.yaml"),
               ScenarioError);
}

// A device too small for the buffer (or for the address table beside it) fails that allocation
// with the runtime's out-of-memory error: to the rules it is the certain fault it acts as.
TEST(Parser, ADeviceTooSmallIsTheAllocationFaultItActsAs) {
  EXPECT_THROW(
      parseScenario("ranks: 3\ndevice_memory: {1: 4KiB}\nexpect: {outcome: success}\n", "a.yaml"),
      std::exception);
  const Scenario buffer =
      parseScenario("ranks: 3\ndevice_memory: {1: 4KiB}\nexpect: {outcome: raise}\n", "a.yaml");
  EXPECT_EQ(buffer.expect.messages.at(1).kind, model::MessageKind::kThis);
  EXPECT_EQ(buffer.expect.messages.at(0).kind, model::MessageKind::kAnother);
  EXPECT_TRUE(buffer.faults.empty());  // nothing planted: the mocked runtime runs out by itself
  // 64 KiB + 16 bytes holds the buffer but not 3 ranks' table (24 bytes): the table fails.
  const Scenario table = model::withDeviceMemoryFaults(
      parseScenario("ranks: 3\ndevice_memory: {1: 65552}\nexpect: {outcome: raise}\n", "a.yaml"));
  ASSERT_EQ(table.faults.size(), 1u);
  EXPECT_EQ(table.faults[0].site, model::FaultSite::kAllocTable);
  EXPECT_EQ(table.faults[0].ranks, std::vector<int>{1});
  // Room for both: no fault.
  EXPECT_TRUE(model::withDeviceMemoryFaults(
                  parseScenario("ranks: 3\ndevice_memory: {1: 65560}\nexpect: {outcome: success}\n",
                                "a.yaml"))
                  .faults.empty());
}

TEST(Parser, ReadsTheClockAFileIsWrittenFor) {
  EXPECT_EQ(parseScenario("ranks: 2\nexpect: {outcome: success}\n", "a.yaml").clock, "");
  EXPECT_EQ(parseScenario("ranks: 2\nclock: sim\nexpect: {outcome: success}\n", "a.yaml").clock,
            "sim");
  EXPECT_EQ(parseScenario("ranks: 2\nclock: real\nexpect: {outcome: success}\n", "a.yaml").clock,
            "real");
}

// Inputs that cannot live in a file with a header comment, or that are clearer inline.
struct InlineCase {
  const char* label;
  const char* text;
  int line;
  int column;
  const char* fragment;
};

void PrintTo(const InlineCase& c, std::ostream* out) { *out << c.label; }

class InlineInvalidTest : public ::testing::TestWithParam<InlineCase> {};

TEST_P(InlineInvalidTest, FailsWhereExpected) {
  const InlineCase& c = GetParam();
  const ScenarioError e = errorOf(c.text, "in.yaml");
  EXPECT_EQ(e.mark().line, c.line) << e.what();
  EXPECT_EQ(e.mark().column, c.column) << e.what();
  EXPECT_THAT(e.message(), HasSubstr(c.fragment));
  EXPECT_THAT(std::string(e.what()), StartsWith("in.yaml:" + std::to_string(c.line) + ":" +
                                                std::to_string(c.column) + ": "));
}

const InlineCase kInlineCases[] = {
    {"truly_empty", "", 1, 1, "empty scenario"},
    {"only_whitespace", "  \n\n", 1, 1, "empty scenario"},
    {"only_a_document_marker", "---\n", 1, 1, "empty scenario"},
    {"null_document", "~\n", 1, 1, "empty scenario"},
    {"scalar_document", "hello\n", 1, 1, "the scenario must be a mapping, got 'hello'"},
    {"second_document", "ranks: 2\nexpect: {outcome: success}\n---\nranks: 3\n", 3, 1,
     "one YAML document; a second one starts here"},
    {"unknown_clock", "ranks: 2\nclock: fast\nexpect: {outcome: success}\n", 2, 8,
     "'clock' must be sim or real"},
    {"clock_list", "ranks: 2\nclock: [sim]\nexpect: {outcome: success}\n", 2, 8,
     "'clock' must be sim or real"},
    {"trailing_document_marker", "ranks: 2\nexpect: {outcome: success}\n---\n", 3, 1,
     "one YAML document"},
    // yaml-cpp 0.7 loops for ever on these in YAML::LoadAll; the parser must not.
    {"stray_comma", ",", 1, 1, "YAML syntax error: unexpected ','"},
    {"stray_comma_after_comment", "# c\n, t\nranks: 2\n", 2, 1, "unexpected ','"},
    {"stray_comma_after_list", "- a\n, b\n", 2, 1, "unexpected ','"},
    {"tab_indentation", "ranks: 2\nexpect:\n\toutcome: success\n", 3, 9, "YAML syntax error"},
    {"duplicate_in_flow_map", "ranks: 2\nexpect: {outcome: success, outcome: raise}\n", 2, 28,
     "duplicate key 'outcome' in 'expect' (first at line 2)"},
    {"non_scalar_key", "ranks: 2\n[a]: 1\nexpect: {outcome: success}\n", 2, 1,
     "keys of the scenario must be names, got a list"},
    {"expect_is_scalar", "ranks: 2\nexpect: success\n", 2, 9,
     "'expect' must be a mapping, got 'success'"},
    {"fault_is_scalar", "ranks: 2\nfaults: [open]\nexpect: {outcome: success}\n", 2, 10,
     "a fault must be a mapping, got 'open'"},
    {"ranks_float", "ranks: 2.0\nexpect: {outcome: success}\n", 1, 8,
     "'ranks' must be an integer, got '2.0'"},
    {"ranks_empty_value", "ranks:\nexpect: {outcome: success}\n", 1, 1,
     "'ranks' must be an integer, got nothing"},
    {"ranks_hex", "ranks: 0x4\nexpect: {outcome: success}\n", 1, 8, "must be an integer"},
    {"error_negative",
     "ranks: 2\nfaults: [{site: alloc, rank: 0, error: -3}]\nexpect:\n  outcome: raise\n"
     "  messages: {others: group}\n",
     2, 40, "'error' must be a positive hipError_t number, got -3"},
    {"probability_string",
     "ranks: 2\nfaults: [{site: close, rank: 0, probability: \"0.5\"}]\n"
     "expect: {outcome: success}\n",
     2, 46, "'probability' must be a number, got the string \"0.5\""},
    {"text_empty",
     "ranks: 2\nfaults: [{site: open, rank: 0}]\nexpect:\n  outcome: raise\n"
     "  messages: {0: {text: \"\"}}\n",
     5, 24, "'text' must not be empty"},
    {"message_list",
     "ranks: 2\nfaults: [{site: open, rank: 0}]\nexpect:\n  outcome: raise\n"
     "  messages: {0: [this]}\n",
     5, 17, "a message must be this, another, group, ok or {text: \"...\"}, got a list"},
    {"violations_twice",
     "ranks: 2\nexpect: {outcome: success, violations: [{property: C1, finding: a}, "
     "{property: C1, finding: b}]}\n",
     2, 80, "property C1 is listed twice"},
    {"violations_only_may",
     "ranks: 2\nexpect: {outcome: success, violations: [{property: C8, finding: a, appear: "
     "may}]}\n",
     2, 40, "at least one finding that must appear"},
    {"violations_appear_unknown",
     "ranks: 2\nexpect: {outcome: success, violations: [{property: C6, finding: a, appear: "
     "maybe}]}\n",
     2, 76, "'appear' must be must or may, got 'maybe'"},
    {"reported_rank_twice",
     "ranks: 3\nfaults: [{site: death, rank: 1, at: agree}]\n"
     "expect: {outcome: reported, reported: [1, 1]}\n",
     3, 43, "rank 1 is listed twice"},
    {"rank_as_list", "ranks: 2\nfaults: [{site: alloc, rank: [0]}]\nexpect: {outcome: raise}\n", 2,
     30, "'rank' takes one rank; use 'ranks' for a list"},
    {"group_fail_typo",
     "ranks: 2\nfaults: [{site: group-fail, rank: 0, at: agre}]\n"
     "expect: {outcome: raise, messages: {others: group}}\n",
     2, 42, "unknown point 'agre'; did you mean 'agree'?"},
    {"seed_too_big", "ranks: 2\nseed: 18446744073709551616\nexpect: {outcome: success}\n", 2, 7,
     "'seed' must be an unsigned 64-bit integer"},
    {"buffer_too_big", "ranks: 2\nbuffer: 99999999999GiB\nexpect: {outcome: success}\n", 2, 9,
     "'buffer' must be a positive size"},
    {"device_memory_zero", "ranks: 2\ndevice_memory: 0\nexpect: {outcome: success}\n", 2, 16,
     "'device_memory' must be a positive size"},
    {"device_memory_rank_out_of_range",
     "ranks: 2\ndevice_memory: {2: 1MiB}\nexpect: {outcome: success}\n", 2, 17,
     "device_memory rank 2 is out of range"},
    {"device_memory_list", "ranks: 2\ndevice_memory: [1MiB]\nexpect: {outcome: success}\n", 2, 16,
     "or a map of rank to size"},
    {"group_fail_without_messages",
     "ranks: 2\nfaults: [{site: group-fail, rank: 0, at: exchange}]\nexpect: {outcome: raise}\n", 3,
     19, "rank 0 needs an expected message: with the group-fail fault (line 2)"},
    {"late_without_messages",
     "ranks: 2\ndeadline: 100ms\nfaults: [{site: delay, rank: 0, at: agree, delay: 1s}]\n"
     "expect: {outcome: raise}\n",
     4, 19, "the peers time out waiting for the late rank"},
    {"death_unreachable_behind_death",
     "ranks: 4\nfaults:\n  - {site: death, rank: 0, at: before-construct}\n"
     "  - {site: hang, rank: 1, at: agree}\nexpect: {outcome: reported}\n",
     4, 5,
     "rank 1 never reaches 'agree', where it hangs: the death fault (line 3) ends its handshake "
     "at 'before-construct' first"},  // in the runner's agreement, at the end of that point
    {"death_unreachable_behind_late_rank",
     "ranks: 2\ndeadline: 100ms\nfaults:\n  - {site: delay, rank: 0, at: exchange, delay: 1s}\n"
     "  - {site: death, rank: 1, at: open}\nexpect: {outcome: reported}\n",
     5, 5, "rank 1 never reaches 'open', where it dies: the delay fault (line 4)"},
    // The address table's sites take error, count and probability, like alloc.
    {"alloc_table_peer",
     "ranks: 2\nfaults: [{site: alloc-table, rank: 0, peer: 1}]\nexpect: {outcome: raise}\n", 2, 39,
     "key 'peer' is not valid for site 'alloc-table' (it takes: site, rank|ranks, error, count, "
     "probability, buffer)"},
    {"copy_table_at",
     "ranks: 2\nfaults: [{site: copy-table, rank: 0, at: agree}]\nexpect: {outcome: raise}\n", 2,
     38, "key 'at' is not valid for site 'copy-table'"},
    {"copy_table_typo",
     "ranks: 2\nfaults: [{site: copy-tabel, rank: 0}]\nexpect: {outcome: raise}\n", 2, 17,
     "unknown fault site 'copy-tabel'; did you mean 'copy-table'?"},
    {"alloc_table_error_unknown",
     "ranks: 2\nfaults: [{site: alloc-table, rank: 0, error: hipErrorOutOfMemroy}]\n"
     "expect: {outcome: raise}\n",
     2, 46, "unknown hipError_t name 'hipErrorOutOfMemroy'; did you mean 'hipErrorOutOfMemory'?"},
    {"alloc_table_success_impossible",
     "ranks: 2\nfaults: [{site: alloc-table, rank: 1}]\nexpect: {outcome: success}\n", 2, 10,
     "outcome 'success' is impossible: this alloc-table fault always fires"},
    {"copy_table_single_rank_without_messages",
     "ranks: 1\nfaults: [{site: copy-table, rank: 0}]\nexpect: {outcome: raise}\n", 3, 19,
     "rank 0 needs an expected message: with the copy-table fault (line 2) a single rank has no "
     "agreement: it raises its backend error itself (e.g. {text: \"copy failed on rank 0\"})"},
    {"alloc_table_single_rank_says_this",
     "ranks: 1\nfaults: [{site: alloc-table, rank: 0}]\n"
     "expect: {outcome: raise, messages: {0: this}}\n",
     3, 37,
     "rank 0 is expected to say 'this', but no alloc, get-handle, open, handle-corrupt, "
     "handle-stale, entry-corrupt, exchange-long, alloc-table or copy-table fault targets it"},
    {"copy_table_this_on_another_rank",
     "ranks: 3\nfaults: [{site: copy-table, rank: 0}]\n"
     "expect: {outcome: raise, messages: {1: this}}\n",
     3, 37, "rank 1 is expected to say 'this'"},
    {"alloc_table_after_hang_at_open",
     "ranks: 2\nfaults:\n  - {site: hang, rank: 1, at: open}\n  - {site: alloc-table, rank: 1}\n"
     "expect: {outcome: reported}\n",
     4, 5, "this alloc-table fault on rank 1 never fires: rank 1 hangs at 'open'"},
    {"death_at_close_behind_table",
     "ranks: 2\nfaults:\n  - {site: copy-table, rank: 0}\n  - {site: death, rank: 1, at: close}\n"
     "expect: {outcome: reported}\n",
     4, 5, "rank 1 never reaches 'close', where it dies: the copy-table fault (line 3)"},
    // runner: {agree_first: BOOL}, and the not-ready site (rank|ranks and probability only).
    {"runner_agree_first_yes", "ranks: 2\nrunner: {agree_first: yes}\nexpect: {outcome: success}\n",
     2, 23, "'agree_first' must be true or false, got 'yes'"},
    {"runner_agree_first_quoted",
     "ranks: 2\nrunner: {agree_first: \"false\"}\nexpect: {outcome: success}\n", 2, 23,
     "'agree_first' must be true or false, got the string \"false\""},
    {"runner_unknown_key", "ranks: 2\nrunner:\n  agree_frist: false\nexpect: {outcome: success}\n",
     3, 3, "unknown key 'agree_frist' in 'runner'; did you mean 'agree_first'?"},
    {"runner_not_mapping", "ranks: 2\nrunner: false\nexpect: {outcome: success}\n", 2, 9,
     "'runner' must be a mapping, got 'false'"},
    {"not_ready_peer",
     "ranks: 2\nfaults: [{site: not-ready, rank: 0, peer: 1}]\nexpect: {outcome: raise}\n", 2, 37,
     "key 'peer' is not valid for site 'not-ready' (it takes: site, rank|ranks, probability)"},
    {"not_ready_count",
     "ranks: 2\nfaults: [{site: not-ready, rank: 0, count: 1}]\nexpect: {outcome: raise}\n", 2, 37,
     "key 'count' is not valid for site 'not-ready'"},
    {"not_ready_typo", "ranks: 2\nfaults: [{site: not-redy, rank: 0}]\nexpect: {outcome: raise}\n",
     2, 17, "unknown fault site 'not-redy'; did you mean 'not-ready'?"},
    {"not_ready_success_impossible",
     "ranks: 2\nfaults: [{site: not-ready, rank: 1}]\nexpect: {outcome: success}\n", 2, 10,
     "outcome 'success' is impossible: this not-ready fault always fires"},
    {"not_ready_says_this",
     "ranks: 2\nfaults: [{site: not-ready, rank: 1}]\n"
     "expect: {outcome: raise, messages: {1: this}}\n",
     3, 37, "a rank that is not ready raises the runner's error"},
    {"not_ready_without_agreement_needs_messages",
     "ranks: 3\nrunner: {agree_first: false}\nfaults: [{site: not-ready, rank: 1}]\n"
     "expect: {outcome: raise}\n",
     4, 19,
     "rank 0 needs an expected message: with the not-ready fault (line 3) and 'runner: "
     "{agree_first: false}' the rank that is not ready leaves alone and the others wait in the "
     "exchange until the deadline (group)"},
    {"not_ready_after_death",
     "ranks: 2\nfaults:\n  - {site: death, rank: 1, at: before-construct}\n"
     "  - {site: not-ready, rank: 1}\nexpect: {outcome: reported}\n",
     4, 5, "this not-ready fault on rank 1 never fires: rank 1 dies at 'before-construct'"},
    {"death_behind_not_ready",
     "ranks: 2\nfaults:\n  - {site: not-ready, rank: 0}\n  - {site: death, rank: 1, at: exchange}\n"
     "expect: {outcome: reported}\n",
     4, 5,
     "rank 1 never reaches 'exchange', where it dies: the not-ready fault (line 3) ends its "
     "handshake at 'before-construct' first"},
};

INSTANTIATE_TEST_SUITE_P(Inline, InlineInvalidTest, ::testing::ValuesIn(kInlineCases),
                         [](const auto& info) { return std::string(info.param.label); });

// ---------------------------------------------------------------------------------------------
// Defaults and what the parser fills in.

TEST(ScenarioDefaults, MinimalScenario) {
  const Scenario s = parseScenario("ranks: 2\nexpect:\n  outcome: success\n", "dir/minimal.yaml");
  EXPECT_EQ(s.file, "dir/minimal.yaml");
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.bufferBytes, 64u * 1024u);
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.deadline, milliseconds(2000));
  EXPECT_TRUE(s.faults.empty());
  EXPECT_EQ(s.expect.outcome, Outcome::kSuccess);
  EXPECT_TRUE(s.expect.messages.empty());
  EXPECT_FALSE(s.expect.others.has_value());
  EXPECT_TRUE(s.expect.reported.empty());
  EXPECT_FALSE(s.expect.within.has_value());
  EXPECT_TRUE(s.expect.violations.empty());
  EXPECT_EQ(s.mark.line, 1);
  EXPECT_EQ(s.mark.column, 1);
}

TEST(ScenarioDefaults, EveryTopLevelValue) {
  const Scenario s = parseScenario(
      "# comment first\n"
      "name: my-name\n"
      "description: what it does\n"
      "ranks: 64\n"
      "buffer: 3 MiB\n"
      "seed: 18446744073709551615\n"
      "deadline: 1.25s\n"
      "faults: []\n"
      "expect: {outcome: success, violations: [{property: C6, finding: over}, "
      "{property: C7, finding: stale}]}\n",
      "x.yaml");
  EXPECT_EQ(s.name, "my-name");
  EXPECT_EQ(s.description, "what it does");
  EXPECT_EQ(s.ranks, 64);
  EXPECT_EQ(s.bufferBytes, 3u << 20);
  EXPECT_EQ(s.seed, 18446744073709551615ULL);
  EXPECT_EQ(s.deadline, milliseconds(1250));
  EXPECT_EQ(s.expect.violations, (std::vector<std::string>{"C6", "C7"}));
  ASSERT_EQ(s.expect.findings.size(), 2u);
  EXPECT_EQ(s.expect.findings[1].property, "C7");
  EXPECT_EQ(s.expect.findings[1].text, "stale");
  EXPECT_EQ(s.mark.line, 2);  // the document starts after the comment
}

TEST(ScenarioDefaults, ViolationsThatMayAppear) {
  const Scenario s = parseScenario(
      "ranks: 2\n"
      "expect: {outcome: success, violations: [{property: C6, finding: over, appear: must}, "
      "{property: C8, finding: timed out, appear: may}]}\n",
      "x.yaml");
  ASSERT_EQ(s.expect.findings.size(), 2u);
  EXPECT_FALSE(s.expect.findings[0].may);
  EXPECT_TRUE(s.expect.findings[1].may);
  EXPECT_EQ(s.expect.violations, (std::vector<std::string>{"C6", "C8"}));
}

TEST(ScenarioDefaults, FaultFields) {
  const Scenario s = parseScenario(
      "ranks: 4\n"
      "faults:\n"
      "  - site: close\n"  // line 3
      "    rank: 1\n"
      "  - site: free\n"  // line 5
      "    ranks: [2, 3]\n"
      "    error: 205\n"
      "    count: 2\n"
      "    probability: 0.25\n"
      "  - site: delay\n"  // line 10
      "    rank: 0\n"
      "    at: close\n"
      "    delay: 1500\n"
      "  - site: close\n"  // line 14
      "    rank: 2\n"
      "    peer: 0\n"
      "    error: hipErrorNotSupported\n"
      "expect: {outcome: success}\n",
      "f.yaml");
  ASSERT_EQ(s.faults.size(), 4u);
  const Fault& close = s.faults[0];
  EXPECT_EQ(close.site, FaultSite::kClose);
  EXPECT_EQ(close.ranks, std::vector<int>{1});
  EXPECT_FALSE(close.peer.has_value());
  EXPECT_EQ(close.error, 1);  // hipErrorInvalidValue
  EXPECT_EQ(close.count, 0);
  EXPECT_EQ(close.probability, 1.0);
  EXPECT_EQ(close.mark.line, 3);
  EXPECT_EQ(close.mark.column, 5);

  const Fault& free = s.faults[1];
  EXPECT_EQ(free.ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(free.error, 205);
  EXPECT_EQ(free.count, 2);
  EXPECT_EQ(free.probability, 0.25);
  EXPECT_EQ(free.mark.line, 5);

  const Fault& delay = s.faults[2];
  EXPECT_EQ(delay.site, FaultSite::kDelay);
  EXPECT_EQ(delay.at, Point::kClose);
  EXPECT_EQ(delay.delay, milliseconds(1500));
  EXPECT_EQ(delay.error, 0);  // delays carry no runtime error

  EXPECT_EQ(s.faults[3].peer, 0);
  EXPECT_EQ(s.faults[3].error, 801);
}

TEST(ScenarioDefaults, EntryCorruptReadsItsPartAndPeer) {
  const Scenario s = parseScenario(
      "ranks: 3\n"
      "faults:\n"
      "  - {site: entry-corrupt, rank: 1, peer: 2, part: magic}\n"
      "  - {site: entry-corrupt, rank: 0, part: tail}\n"
      "  - {site: entry-corrupt, rank: 2, peer: 1, part: kind}\n"
      "expect: {outcome: raise}\n",
      "e.yaml");
  ASSERT_EQ(s.faults.size(), 3u);
  EXPECT_EQ(s.faults[0].site, FaultSite::kEntryCorrupt);
  EXPECT_EQ(s.faults[0].peer, 2);
  EXPECT_EQ(s.faults[0].part, faults::EntryPart::kMagic);
  EXPECT_FALSE(s.faults[1].peer.has_value());
  EXPECT_EQ(s.faults[1].part, faults::EntryPart::kTail);
  EXPECT_EQ(s.faults[2].part, faults::EntryPart::kKind);
  EXPECT_EQ(s.faults[0].error, 0);  // the decoder refuses it: no runtime code
  // Each receiving rank says "this" (its decoder's GroupError chained), no rank "another".
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(s.expect.messages.at(rank).kind, MessageKind::kThis) << rank;
  }
}

TEST(ScenarioDefaults, ForeignExceptionReadsItsCall) {
  const Scenario s = parseScenario(
      "ranks: 3\n"
      "faults:\n"
      "  - {site: foreign-exception, rank: 1, call: open, peer: 2}\n"
      "  - {site: foreign-exception, rank: 2, call: copy-table}\n"
      "expect: {outcome: raise}\n",
      "f.yaml");
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].site, FaultSite::kForeignException);
  EXPECT_EQ(s.faults[0].call, faults::SeamCall::kOpen);
  EXPECT_EQ(s.faults[0].peer, 2);
  EXPECT_EQ(s.faults[1].call, faults::SeamCall::kCopyTable);
  // They fail the calls they name: "this" where they fire, "another" elsewhere.
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kAnother);
  EXPECT_EQ(s.expect.messages.at(1).kind, MessageKind::kThis);
  EXPECT_EQ(s.expect.messages.at(2).kind, MessageKind::kThis);
}

TEST(ScenarioDefaults, AllocDefaultsToOutOfMemory) {
  const Scenario s = parseScenario(
      "ranks: 2\nfaults: [{site: alloc, rank: 0}, {site: get-handle, rank: 1}]\n"
      "expect: {outcome: raise, messages: {others: {text: failed}}}\n",
      "a.yaml");
  EXPECT_EQ(s.faults[0].error, 2);
  EXPECT_EQ(s.faults[1].error, 1);
}

TEST(ScenarioDefaults, TableSitesTakeErrorsWithAllocDefaults) {
  const Scenario s = parseScenario(
      "ranks: 3\n"
      "faults:\n"
      "  - {site: alloc-table, rank: 0}\n"
      "  - {site: copy-table, rank: 1}\n"
      "  - {site: copy-table, ranks: [2], error: hipErrorMapFailed, count: 1, probability: 0.5}\n"
      "expect: {outcome: raise}\n",
      "t.yaml");
  ASSERT_EQ(s.faults.size(), 3u);
  EXPECT_EQ(s.faults[0].site, FaultSite::kAllocTable);
  EXPECT_EQ(s.faults[0].error, 2);  // hipErrorOutOfMemory, like alloc
  EXPECT_EQ(s.faults[1].site, FaultSite::kCopyTable);
  EXPECT_EQ(s.faults[1].error, 1);  // hipErrorInvalidValue
  EXPECT_EQ(s.faults[2].error, 205);
  EXPECT_EQ(s.faults[2].count, 1);
  EXPECT_EQ(s.faults[2].probability, 0.5);
  EXPECT_FALSE(s.faults[0].peer.has_value());
}

// One rank builds its table too: the sites are valid with ranks: 1 (the rank raises the error).
TEST(ScenarioDefaults, TableFaultsTakeOneRank) {
  const Scenario s = parseScenario(
      "ranks: 1\nfaults: [{site: alloc-table, rank: 0}]\n"
      "expect: {outcome: raise, messages: {0: {text: \"alloc failed on rank 0\"}}}\n",
      "one.yaml");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kText);
  // A hang at agree comes after the table: rank 1 reaches it with its table fault planted.
  EXPECT_NO_THROW(parseScenario(
      "ranks: 2\nfaults:\n  - {site: copy-table, rank: 1, probability: 0.5}\n"
      "  - {site: hang, rank: 1, at: agree}\nexpect: {outcome: reported, within: 5s}\n",
      "h.yaml"));
}

// `runner:` parses both values; without the agreement the not-ready rank still says "this" and the
// others, left waiting in the exchange, are listed (group).
TEST(ScenarioDefaults, RunnerAgreeFirst) {
  EXPECT_TRUE(
      parseScenario("ranks: 2\nrunner: {agree_first: true}\nexpect: {outcome: success}\n", "t.yaml")
          .runner.agreeFirst);
  EXPECT_TRUE(parseScenario("ranks: 2\nrunner: {}\nexpect: {outcome: success}\n", "e.yaml")
                  .runner.agreeFirst);
  const Scenario s = parseScenario(
      "ranks: 3\nrunner:\n  agree_first: false\nfaults: [{site: not-ready, rank: 1}]\n"
      "expect: {outcome: raise, messages: {0: group, 2: group}}\n",
      "x.yaml");
  EXPECT_FALSE(s.runner.agreeFirst);
  ASSERT_EQ(s.expect.messages.size(), 3u);
  EXPECT_EQ(s.expect.messages.at(1).kind, MessageKind::kText);
  EXPECT_EQ(s.expect.messages.at(1).text, kNotReadyThisRankMessage);
  EXPECT_EQ(s.expect.messages.at(0).kind, MessageKind::kGroup);
}

// ---------------------------------------------------------------------------------------------
// A fault's error, by hipError_t name or number (the formats themselves: values_test.cc).

TEST(ScenarioValues, ErrorByNameOrNumber) {
  auto errorOfFault = [](const std::string& error) {
    return parseScenario("ranks: 2\nfaults: [{site: close, rank: 0, error: " + error +
                             "}]\nexpect: {outcome: success}\n",
                         "e.yaml")
        .faults[0]
        .error;
  };
  EXPECT_EQ(errorOfFault("hipErrorMapFailed"), 205);
  EXPECT_EQ(errorOfFault("205"), 205);
  EXPECT_EQ(errorOfFault("12345"), 12345);  // any positive number
}

// ---------------------------------------------------------------------------------------------
// The schema and the parser agree on names (the schema is what editors check against).

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override { schema_ = nlohmann::json::parse(readFile(kScenarios / "schema.json")); }
  static std::set<std::string> keysOf(const nlohmann::json& object) {
    std::set<std::string> keys;
    for (const auto& [key, value] : object.items()) keys.insert(key);
    return keys;
  }
  static std::set<std::string> stringsOf(const nlohmann::json& array) {
    std::set<std::string> out;
    for (const auto& item : array) out.insert(item.get<std::string>());
    return out;
  }
  nlohmann::json schema_;
};

TEST_F(SchemaTest, IsDraft2020) {
  EXPECT_EQ(schema_.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(stringsOf(schema_.at("required")), (std::set<std::string>{"ranks", "expect"}));
}

TEST_F(SchemaTest, KeysMatchTheParser) {
  const std::set<std::string> top{"name",     "description",   "ranks",  "buffer",
                                  "buffers",  "buffers_alive", "seed",   "device_memory",
                                  "deadline", "faults",        "expect", "launchers",
                                  "clock",    "dataplane",     "core",   "max_run",
                                  "runner",   "ranks_per_gpu", "nodes"};
  const std::set<std::string> fault{"site",   "rank",        "ranks", "peer",  "peers", "error",
                                    "count",  "probability", "at",    "delay", "code",  "step",
                                    "buffer", "size",        "label", "part",  "call"};
  const std::set<std::string> expect{"outcome", "messages",   "reported",
                                     "within",  "violations", "judge"};
  EXPECT_EQ(keysOf(schema_.at("properties")), top);
  EXPECT_EQ(keysOf(schema_.at("$defs").at("fault").at("properties")), fault);
  EXPECT_EQ(keysOf(schema_.at("$defs").at("expect").at("properties")), expect);
  // Every key the schema knows is one the parser knows too (else: "unknown key").
  for (const std::string& key : top) {
    if (key == "ranks" || key == "expect") continue;
    const ScenarioError e = errorOf("ranks: 2\nexpect: {outcome: success}\n" + key + ": [x]\n");
    EXPECT_THAT(e.message(), ::testing::Not(HasSubstr("unknown key"))) << key;
  }
  for (const std::string& key : fault) {
    if (key == "site") continue;
    const ScenarioError e =
        errorOf("ranks: 2\nfaults: [{" + key + ": [x], site: delay}]\nexpect: {outcome: raise}\n");
    EXPECT_THAT(e.message(), ::testing::Not(HasSubstr("unknown key"))) << key;
  }
  for (const std::string& key : expect) {
    if (key == "outcome") continue;
    const ScenarioError e = errorOf("ranks: 2\nexpect: {" + key + ": 7, outcome: success}\n");
    EXPECT_THAT(e.message(), ::testing::Not(HasSubstr("unknown key"))) << key;
  }
}

TEST_F(SchemaTest, EnumsMatchTheParser) {
  const auto& defs = schema_.at("$defs");
  std::set<std::string> sites;
  for (FaultSite site : {FaultSite::kAlloc,
                         FaultSite::kGetHandle,
                         FaultSite::kOpen,
                         FaultSite::kClose,
                         FaultSite::kFree,
                         FaultSite::kAllocTable,
                         FaultSite::kCopyTable,
                         FaultSite::kHandleCorrupt,
                         FaultSite::kHandleStale,
                         FaultSite::kHandleAliased,
                         FaultSite::kGroupFail,
                         FaultSite::kDelay,
                         FaultSite::kDeath,
                         FaultSite::kHang,
                         FaultSite::kNotReady,
                         FaultSite::kExit,
                         FaultSite::kBufferOrder,
                         FaultSite::kBufferSize,
                         FaultSite::kBufferLabel,
                         FaultSite::kEntryCorrupt,
                         FaultSite::kForeignException,
                         FaultSite::kExchangeLong,
                         FaultSite::kCollectiveOrder,
                         FaultSite::kHandleMapped,
                         FaultSite::kBufferCount}) {
    sites.insert(toString(site));
  }
  EXPECT_EQ(stringsOf(defs.at("fault").at("properties").at("site").at("enum")), sites);

  std::set<std::string> points;
  for (Point point : {Point::kBeforeConstruct, Point::kExchange, Point::kOpen, Point::kAgree,
                      Point::kClose, Point::kExchangeSend, Point::kExchangeRecv, Point::kDataplane,
                      Point::kAlloc, Point::kGetHandle}) {
    points.insert(toString(point));
  }
  EXPECT_EQ(stringsOf(defs.at("point").at("enum")), points);

  EXPECT_EQ(stringsOf(defs.at("expect").at("properties").at("outcome").at("enum")),
            (std::set<std::string>{"success", "raise", "reported", "as-drawn"}));

  std::set<std::string> hipNames(scenario::hipErrorNames().begin(),
                                 scenario::hipErrorNames().end());
  EXPECT_EQ(stringsOf(defs.at("hipError").at("oneOf").at(1).at("enum")), hipNames);
}

// ---------------------------------------------------------------------------------------------
// Files and paths.

class ScenarioFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("scenario_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& relative, const std::string& text = "ranks: 1\n") {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  std::string at(const std::string& relative) const { return (root_ / relative).string(); }
  fs::path root_;
};

TEST_F(ScenarioFilesTest, ExpandsDirectoriesRecursivelySortedAndSkipsTheRest) {
  write("b.yaml");
  write("a.yml");
  write("sub/c.yaml");
  write("sub/deeper/d.yaml");
  write("README.md");
  write("schema.json");
  write(".hidden/e.yaml");
  write(".f.yaml");
  const std::vector<std::string> paths = expandScenarioPaths({root_.string()});
  EXPECT_EQ(paths, (std::vector<std::string>{at("a.yml"), at("b.yaml"), at("sub/c.yaml"),
                                             at("sub/deeper/d.yaml")}));
}

TEST_F(ScenarioFilesTest, KeepsFilesAsGivenInOrderWithoutDuplicates) {
  write("x.yaml");
  write("dir/y.yaml");
  write("notes.txt");
  const std::vector<std::string> paths = expandScenarioPaths(
      {at("x.yaml"), at("dir"), at("notes.txt"), at("dir/y.yaml"), at("./x.yaml")});
  EXPECT_EQ(paths, (std::vector<std::string>{at("x.yaml"), at("dir/y.yaml"), at("notes.txt")}));
}

TEST_F(ScenarioFilesTest, MissingPathsAndEmptyDirectoriesAreErrors) {
  try {
    expandScenarioPaths({at("nope")});
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.mark().line, 0);
    EXPECT_EQ(std::string(e.what()), at("nope") + ": no such file or directory");
  }
  fs::create_directories(root_ / "empty");
  write("empty/readme.md");
  EXPECT_THROW(expandScenarioPaths({at("empty")}), ScenarioError);
}

TEST_F(ScenarioFilesTest, LoadScenarioReportsUnreadableFiles) {
  try {
    loadScenario(at("missing.yaml"));
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.mark().line, 0);
    EXPECT_THAT(std::string(e.what()), StartsWith(at("missing.yaml") + ": cannot open"));
  }
  EXPECT_THROW(loadScenario(root_.string()), ScenarioError);
}

TEST_F(ScenarioFilesTest, LoadScenarioNamesTheFileAfterItsStem) {
  write("nested/late-rank.yaml", "ranks: 3\nexpect: {outcome: success}\n");
  const Scenario s = loadScenario(at("nested/late-rank.yaml"));
  EXPECT_EQ(s.name, "late-rank");
  EXPECT_EQ(s.file, at("nested/late-rank.yaml"));
}

}  // namespace
}  // namespace peerconf::harness
