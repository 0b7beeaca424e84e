// JUnit report: structure, escaping, xmllint and the JUnit schema.
#include "reports/junit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkers/checkers.h"
#include "judge/judgement.h"
#include "synthetic_run.h"

namespace peerconf::harness::reports {

using model::LedgerRecord;
using model::RunRecord;
using model::Verdict;
namespace {

namespace testing = checkers::testing;

// Judged on every built-in checker, by the rules alone (a synthetic run has no file to explain).
judge::Judgement junitJudged(const RunRecord& record) {
  return judge::judge(record, checkers::checkRun(record, checkers::builtinCheckers()));
}

// A report of a passing, a failing and a nastily named scenario.
JUnitReport sampleReport() {
  JUnitReport report;
  const RunRecord clean = testing::successRun();
  report.onScenario(clean, junitJudged(clean));
  RunRecord failing = testing::openFailureRun(4, 1, 3);
  auto& ledger = failing.ranks[2].ledger;  // rank 2 never closes its mapping of peer 0
  ledger.erase(std::find_if(ledger.begin(), ledger.end(), [](const LedgerRecord& r) {
    return r.op == "close" && r.ownerDevice == 0;
  }));
  failing.ranks[3].message = "peer memory <handshake> & \"friends\" 'failed'\x01\xff";
  report.onScenario(failing, junitJudged(failing));
  RunRecord odd = testing::successRun(2);
  odd.scenario.name = "a<b>&\"c\" 'd'\ttab\xc3\xa9\xed\xa0\x80";
  odd.scenario.file = "scenarios/weird.dir/odd.yaml";
  report.onScenario(odd, junitJudged(odd));
  return report;
}

std::string xml() {
  std::ostringstream out;
  sampleReport().write(out);
  return out.str();
}

// A team's executable (myteam-peerconf) names the suite and the classnames, as its reproduce
// lines do (issue 41 item 6).
TEST(JUnitReport, TheSuiteIsNamedForTheExecutableThatRan) {
  model::setProgramName("/opt/team/bin/myteam-peerconf");
  const std::string text = xml();
  model::setProgramName("peerconf");
  EXPECT_NE(text.find("<testsuite name=\"myteam-peerconf\" "), std::string::npos) << text;
  EXPECT_NE(text.find("classname=\"myteam-peerconf.handshake\""), std::string::npos) << text;
  EXPECT_EQ(text.find("\"peerconf"), std::string::npos) << text;
}

TEST(JUnitReport, OneSuiteOneCasePerScenarioWithCounts) {
  const std::string text = xml();
  EXPECT_EQ(text.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"peerconf\" "
                       "tests=\"3\" failures=\"1\" errors=\"0\"",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("<testcase classname=\"peerconf.handshake\" name=\"clean\" time=\"0.012\">"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<failure message=\"C2 message: "), std::string::npos) << text;
  EXPECT_NE(text.find("type=\"C2 message\">"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2: mapping of peer 0 (gen 10) opened, never closed"), std::string::npos)
      << text;
  EXPECT_NE(text.find("classname=\"peerconf.weird_dir\""), std::string::npos) << text;
  EXPECT_NE(
      text.find("name=\"a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;&#9;tab\xc3\xa9\xef\xbf\xbd"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x01'), std::string::npos);
}

TEST(JUnitReport, Classname) {
  EXPECT_EQ(junitClassname("scenarios/handshake/open.yaml"), "peerconf.handshake");
  EXPECT_EQ(junitClassname("open.yaml"), "peerconf");
  EXPECT_EQ(junitClassname("/abs/data.plane/x.yaml"), "peerconf.data_plane");
}

TEST(JUnitReport, PassesXmllintAndTheJUnitSchema) {
  const std::string xmllint = PEERCONF_XMLLINT;
  if (xmllint.empty()) GTEST_SKIP() << "xmllint not found at configure time; install libxml2-utils";
  const auto dir =
      std::filesystem::temp_directory_path() / ("peerconf_junit_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "report.xml").string();
  sampleReport().writeFile(path);
  const std::string schema = std::string(PEERCONF_TEST_DATA_DIR) + "/junit.xsd";
  const std::string wellFormed = xmllint + " --noout " + path;
  const std::string valid = xmllint + " --noout --schema " + schema + " " + path;
  EXPECT_EQ(std::system(wellFormed.c_str()), 0) << wellFormed;
  EXPECT_EQ(std::system(valid.c_str()), 0) << valid;

  // The schema is not a rubber stamp: a case without a name is rejected.
  const std::string broken = (dir / "broken.xml").string();
  std::ofstream(broken) << "<testsuite name=\"x\" tests=\"1\" failures=\"0\" errors=\"0\">"
                           "<testcase classname=\"c\" time=\"1\"/></testsuite>\n";
  const std::string invalid =
      xmllint + " --noout --schema " + schema + " " + broken + " 2>/dev/null";
  EXPECT_NE(std::system(invalid.c_str()), 0);
  std::filesystem::remove_all(dir);
}

// An interrupted list (issue 44): what ran, then a case "interrupted" in error, counted; still
// valid against the schema. Without onInterrupted nothing of it appears (the control).
TEST(JUnitReport, AnInterruptedListEndsWithAnInterruptedErrorCase) {
  JUnitReport report = sampleReport();
  std::ostringstream before;
  report.write(before);
  EXPECT_EQ(before.str().find("interrupted"), std::string::npos);
  report.onInterrupted("interrupted after 3 of 40 scenarios (SIGINT)");
  std::ostringstream out;
  report.write(out);
  const std::string text = out.str();
  EXPECT_NE(text.find("tests=\"4\" failures=\"1\" errors=\"1\""), std::string::npos) << text;
  const std::size_t stop = text.find(
      "<testcase classname=\"peerconf\" name=\"interrupted\" time=\"0.000\">\n"
      "    <error message=\"interrupted after 3 of 40 scenarios (SIGINT)\" type=\"interrupted\">");
  ASSERT_NE(stop, std::string::npos) << text;
  EXPECT_GT(stop, text.rfind("name=\"clean\"")) << "the interrupted case comes last";
  EXPECT_EQ(report.tests(), 3u) << "tests() counts the runs";
  const std::string xmllint = PEERCONF_XMLLINT;
  if (xmllint.empty()) return;
  const auto path = std::filesystem::temp_directory_path() /
                    ("peerconf_junit_interrupted_" + std::to_string(::getpid()) + ".xml");
  report.writeFile(path.string());
  const std::string valid = xmllint + " --noout --schema " + std::string(PEERCONF_TEST_DATA_DIR) +
                            "/junit.xsd " + path.string();
  EXPECT_EQ(std::system(valid.c_str()), 0) << valid;
  std::filesystem::remove(path);
}

TEST(JUnitReport, WriteFileNamesAnUnwritablePath) {
  try {
    JUnitReport().writeFile("/nonexistent-dir/report.xml");
    FAIL() << "expected a throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/report.xml"), std::string::npos);
  }
}

}  // namespace
}  // namespace peerconf::harness::reports
