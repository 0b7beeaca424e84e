// Trace-event report: valid JSON, one process per scenario, spans per rank, fault markers.
#include "reports/trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "checkers/checkers.h"
#include "judge/judgement.h"
#include "synthetic_run.h"

namespace peerconf::harness::reports {

using model::RunRecord;
namespace {

namespace testing = checkers::testing;
using nlohmann::json;

json traceOf(const std::vector<RunRecord>& records, TraceOptions options = {}) {
  TraceReport report(options);
  for (const RunRecord& record : records) {
    report.onScenario(
        record, judge::judge(record, checkers::checkRun(record, checkers::builtinCheckers())));
  }
  std::ostringstream out;
  report.write(out);
  return json::parse(out.str());  // throws if the file is not JSON
}

std::vector<json> select(const json& trace, const std::string& ph, int pid) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph && e.at("pid") == pid) out.push_back(e);
  }
  return out;
}

TEST(TraceReport, ObjectFormWithProcessesAndRankThreads) {
  const json trace = traceOf({testing::successRun(4), testing::openFailureRun(3, 1, 2)});
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  ASSERT_TRUE(trace.at("traceEvents").is_array());

  for (int pid : {0, 1}) {
    std::set<int> namedThreads;
    std::string processName;
    for (const json& m : select(trace, "M", pid)) {
      if (m.at("name") == "thread_name") {
        EXPECT_EQ(m.at("args").at("name"), "rank " + std::to_string(m.at("tid").get<int>()));
        namedThreads.insert(m.at("tid").get<int>());
      }
      if (m.at("name") == "process_name") processName = m.at("args").at("name");
    }
    EXPECT_EQ(processName, pid == 0 ? "clean" : "open_fail");
    EXPECT_EQ(namedThreads.size(), pid == 0 ? 4u : 3u);

    // Spans on every rank: seam calls and phases, with µs timestamps.
    std::set<int> seamTracks, phaseTracks;
    for (const json& x : select(trace, "X", pid)) {
      EXPECT_TRUE(x.at("ts").is_number());
      EXPECT_GE(x.at("dur").get<double>(), 0.0);
      (x.at("cat") == "seam" ? seamTracks : phaseTracks).insert(x.at("tid").get<int>());
    }
    EXPECT_EQ(seamTracks, namedThreads);
    EXPECT_EQ(phaseTracks, namedThreads);
  }
}

TEST(TraceReport, ARunOnSimulatedTimeIsNamedSo) {
  RunRecord sim = testing::successRun(2);
  sim.clock = "sim";
  const json trace = traceOf({sim, testing::successRun(2)});
  std::vector<std::string> names;
  for (int pid : {0, 1}) {
    for (const json& m : select(trace, "M", pid)) {
      if (m.at("name") == "process_name") names.push_back(m.at("args").at("name"));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"clean (simulated time)", "clean"}));
}

TEST(TraceReport, SpansPairCallsWithTheirEnds) {
  const json trace = traceOf({testing::openFailureRun(3, 1, 2)});
  bool threw = false, agreed = false;
  for (const json& x : select(trace, "X", 0)) {
    if (x.at("name") == "openMemHandle" && x.at("args").contains("threw")) {
      EXPECT_EQ(x.at("tid"), 1);
      EXPECT_EQ(x.at("args").at("peer"), 2);
      threw = true;
    }
    if (x.at("name") == "allReduceMin" && x.at("tid") == 0) {
      EXPECT_EQ(x.at("args").at("call"), "in=1");
      EXPECT_EQ(x.at("args").at("returned"), "out=0");
      // Events are 20 µs apart in the synthetic log.
      EXPECT_DOUBLE_EQ(x.at("dur").get<double>(), 20.0);
      agreed = true;
    }
  }
  EXPECT_TRUE(threw);
  EXPECT_TRUE(agreed);
}

TEST(TraceReport, FaultAndOutcomeMarkers) {
  const json trace = traceOf({testing::hangRun(3, 1)});
  bool fault = false;
  std::set<int> outcomes;
  for (const json& i : select(trace, "i", 0)) {
    if (i.at("s") != "t") continue;
    if (i.at("name") == "fault: hang") {
      EXPECT_EQ(i.at("tid"), 1);
      fault = true;
    }
    if (i.at("name").get<std::string>().rfind("outcome: ", 0) == 0) {
      outcomes.insert(i.at("tid").get<int>());
    }
  }
  EXPECT_TRUE(fault);
  EXPECT_EQ(outcomes, (std::set<int>{0, 1, 2}));  // the hung rank's comes from its status

  // The hung rank's open allReduceMin runs to the end of the run, marked unfinished.
  bool unfinished = false;
  for (const json& x : select(trace, "X", 0)) {
    if (x.at("tid") == 1 && x.at("name") == "allReduceMin") {
      EXPECT_TRUE(x.at("args").at("unfinished").get<bool>());
      EXPECT_NEAR(x.at("ts").get<double>() + x.at("dur").get<double>(), 1'200'000.0, 1e-3);
      unfinished = true;
    }
  }
  EXPECT_TRUE(unfinished);
}

TEST(TraceReport, SequentialLayoutAndFailureMarkers) {
  RunRecord failing = testing::successRun(2);
  failing.ranks[1].ownSlotIsLocal = false;
  const json trace = traceOf({testing::successRun(2), failing}, {.sequential = true});
  double earliest = 1e300;
  for (const json& x : select(trace, "X", 1))
    earliest = std::min(earliest, x.at("ts").get<double>());
  EXPECT_GE(earliest, 12'000.0);  // after the first run's 12 ms
  bool marker = false;
  for (const json& i : select(trace, "i", 1)) {
    if (i.at("s") == "p" && i.at("name") == "FAIL C4 addresses") marker = true;
  }
  EXPECT_TRUE(marker);
}

TEST(TraceReport, InvalidUtf8NeverBreaksTheFile) {
  RunRecord record = testing::openFailureRun(2, 0, 1);
  record.ranks[0].events[3].detail = "bytes \xff\xfe of a corrupted handle";
  record.scenario.name = "bad\xc0name";
  EXPECT_NO_THROW(traceOf({record}));
}

}  // namespace
}  // namespace peerconf::harness::reports
