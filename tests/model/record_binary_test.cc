// The binary codec between the isolating parent and its child (record_binary.cc): every scenario
// of the suite and synthetic records survive the trip, several values follow one another in one
// message, and bytes that end early or a count past them are refused.
#include "model/record_binary.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/record_json.h"
#include "scenario/load.h"
#include "synthetic_run.h"

namespace peerconf::harness::model {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::string encoded(const T& value) {
  std::string out;
  encodeBinary(value, out);
  return out;
}

TEST(RecordBinary, EveryScenarioOfTheSuiteComesBackTheSame) {
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(PEERCONF_SCENARIOS_DIR)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;
    Scenario scenario;
    try {
      scenario = scenario::loadScenario(entry.path().string());
    } catch (const std::exception&) {
      continue;  // not the codec's concern
    }
    const std::string bytes = encoded(scenario);
    std::string_view in(bytes);
    const Scenario back = scenarioFromBinary(in);
    EXPECT_TRUE(in.empty()) << entry.path();
    EXPECT_EQ(toJson(back), toJson(scenario)) << entry.path();
    EXPECT_EQ(encoded(back), bytes) << entry.path() << ": a field lost on the way";
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(RecordBinary, RecordsComeBackTheSameOneAfterTheOther) {
  const std::vector<RunRecord> records = {checkers::testing::successRun(4),
                                          checkers::testing::openFailureRun(4, 2, 0),
                                          checkers::testing::hangRun(3, 1)};
  std::string message;
  for (const RunRecord& record : records) encodeBinary(record, message);
  std::string_view in(message);
  for (const RunRecord& record : records) {
    const RunRecord back = runRecordFromBinary(in);
    EXPECT_EQ(toJson(back), toJson(record));
    EXPECT_EQ(encoded(back), encoded(record));
  }
  EXPECT_TRUE(in.empty());
}

TEST(RecordBinary, BytesThatEndEarlyOrACountPastThemAreRefused) {
  const std::string bytes = encoded(checkers::testing::openFailureRun());
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    std::string_view in(bytes.data(), cut);
    EXPECT_THROW(runRecordFromBinary(in), std::invalid_argument) << "cut at " << cut;
  }
  // A scenario's first field is its file name: a count of 2^40 bytes with a handful left.
  std::string lying = encoded(Scenario{});
  const std::uint64_t huge = std::uint64_t{1} << 40;
  lying.replace(0, sizeof huge, reinterpret_cast<const char*>(&huge), sizeof huge);
  std::string_view in(lying);
  EXPECT_THROW(scenarioFromBinary(in), std::invalid_argument);
}

}  // namespace
}  // namespace peerconf::harness::model
