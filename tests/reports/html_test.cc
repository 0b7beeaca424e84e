// HTML report: every scenario and verdict in the page, escaping, no external resource, the
// swimlane's marks, and the size of a report of a thousand runs. (The page in a real browser:
// tests/reports/html_browser.py.)
#include "reports/html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "checkers/checkers.h"
#include "judge/judgement.h"
#include "synthetic_run.h"

namespace peerconf::harness::reports {

using judge::judge;
using model::EventKind;
using model::Finding;
using model::LedgerRecord;
using model::reproduceCommand;
using model::RunRecord;
using model::toString;
using model::Verdict;
namespace {

namespace testing = checkers::testing;

// Judged on every built-in checker, by the rules alone (a synthetic run has no file to explain).
judge::Judgement judged(const RunRecord& record) {
  return judge(record, checkers::checkRun(record, checkers::builtinCheckers()));
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// rank 2 never closes its mapping of peer 0: C3 fails.
RunRecord leakingRun() {
  RunRecord failing = testing::openFailureRun(4, 1, 3);
  failing.scenario.name = "leaking";
  auto& ledger = failing.ranks[2].ledger;
  ledger.erase(std::find_if(ledger.begin(), ledger.end(), [](const LedgerRecord& r) {
    return r.op == "close" && r.ownerDevice == 0;
  }));
  return failing;
}

constexpr const char* kNastyName = "x<script>alert(\"n&m\")</script>'q'";

RunRecord nastyRun() {
  RunRecord odd = testing::openFailureRun(2, 1, 0);
  odd.scenario.name = kNastyName;
  odd.scenario.file = "scenarios/a&b/<i>.yaml";
  odd.ranks[1].message = "peer <script>document.title='pwned'</script> & friends\x01\xff";
  return odd;
}

struct Sample {
  std::vector<RunRecord> records;
  std::vector<judge::Judgement> judgements;
  std::string html;
};

Sample sample() {
  Sample s;
  // Rank 1 hangs at the agreement early; the harness releases what it held and reports it
  // hung near the end of the run.
  RunRecord hang = testing::hangRun(4, 1);
  auto& hung = hang.ranks[1];
  hung.events.push_back({1'150'000'000, 1, EventKind::kCall, "closeMemHandle", 0, "ptr=0x10"});
  hung.events.push_back({1'150'010'000, 1, EventKind::kReturn, "closeMemHandle", 0, ""});
  hung.events.push_back({1'190'000'000, 1, EventKind::kOutcome, "hung", -1, "stopped at agree"});
  hung.endNs = 1'190'000'000;
  s.records = {testing::successRun(), leakingRun(), hang, nastyRun()};
  HtmlReport report({"peerconf report", "peerconf run scenarios/ --html r.html", "today"});
  for (const RunRecord& record : s.records) {
    s.judgements.push_back(judged(record));
    report.onScenario(record, s.judgements.back());
  }
  report.onSkipped("needs-mpi", "written for --launcher mpi");
  std::ostringstream out;
  report.write(out);
  s.html = out.str();
  return s;
}

TEST(HtmlReport, EveryScenarioWithItsVerdictsAndReproduceLine) {
  const Sample s = sample();
  const std::string& html = s.html;
  ASSERT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u) << html.substr(0, 200);
  EXPECT_NE(html.find("<span class=\"cp\" id=\"n-pass\">2 passed</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"cf\" id=\"n-fail\">2 failed</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"cs\" id=\"n-skip\">1 skipped</span>"), std::string::npos);
  EXPECT_NE(html.find("needs-mpi</span>: written for --launcher mpi"), std::string::npos);
  // Fault sites fired: open in two runs, hang in one.
  EXPECT_NE(html.find("<span class=\"site\">open</span><span class=\"dim\">(2 runs)"),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"site\">hang</span><span class=\"dim\">(1 run)"),
            std::string::npos);

  for (std::size_t i = 0; i < s.records.size(); ++i) {
    const RunRecord& record = s.records[i];
    const bool passed = s.judgements[i].passed;
    const std::string id = "s-" + std::to_string(i + 1);
    const std::string head = "<details class=\"sc " + std::string(passed ? "pass" : "fail") +
                             "\" id=\"" + id + "\" data-status=\"" + (passed ? "pass" : "fail") +
                             "\"" + (passed ? "" : " open") + "><summary><span class=\"b\">" +
                             (passed ? "PASS" : "FAIL") + "</span> <span class=\"nm\">" +
                             htmlEscape(record.scenario.name) + "</span>";
    const std::size_t at = html.find(head);
    ASSERT_NE(at, std::string::npos) << head;
    const std::size_t end = html.find("</details>", at);
    const std::string scenario = html.substr(at, end - at);
    // Every verdict: its property, its word, its summary and findings.
    ASSERT_GE(s.judgements[i].verdicts.size(),
              6u);  // C1-C5 and C8 (C6, C7: the data plane's checkers)
    for (const Verdict& verdict : s.judgements[i].verdicts) {
      EXPECT_NE(scenario.find("<tr><td>" + toString(verdict.property) + "</td><td class=\"v-"),
                std::string::npos)
          << id << " " << toString(verdict.property);
      EXPECT_NE(scenario.find(htmlEscape(verdict.summary)), std::string::npos) << verdict.summary;
      for (const Finding& finding : verdict.findings) {
        EXPECT_NE(scenario.find(htmlEscape(finding.text)), std::string::npos) << finding.text;
      }
    }
    EXPECT_NE(scenario.find("<code id=\"r-" + std::to_string(i + 1) + "\">" +
                            htmlEscape(reproduceCommand(record)) + "</code>"),
              std::string::npos)
        << id;
    EXPECT_NE(scenario.find("<button type=\"button\" class=\"copy\" data-for=\"r-" +
                            std::to_string(i + 1) + "\""),
              std::string::npos);
    EXPECT_EQ(count(scenario, "<svg class=\"lanes\""), 1u) << id;
    EXPECT_EQ(count(scenario, "<text x=\"4\" y=\""), record.ranks.size()) << id;
  }
  // The failing run: why, in its summary line and its box; the verdict line and its label red.
  EXPECT_NE(html.find("<span class=\"why\">C3 cleanup</span>"), std::string::npos);
  EXPECT_NE(html.find("<li><b>C3 cleanup</b>: "), std::string::npos);
  EXPECT_NE(html.find("<td class=\"v-fail\">FAIL</td>"), std::string::npos);
  EXPECT_NE(html.find("rank 2: mapping of peer 0 (gen 10) opened, never closed"),
            std::string::npos);
  EXPECT_NE(html.find("<text class=\"vt fail\""), std::string::npos);
  EXPECT_NE(html.find(">FAIL: C3 cleanup</text>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#s-2\">leaking</a>"), std::string::npos);
}

// An interrupted list (issue 44): the title and the summary say so, with the line the console
// printed (escaped); without onInterrupted, nothing of it (the control).
TEST(HtmlReport, AnInterruptedListSaysSo) {
  EXPECT_EQ(sample().html.find("interrupted"), std::string::npos);
  HtmlReport report;
  const RunRecord clean = testing::successRun();
  report.onScenario(clean, judged(clean));
  report.onInterrupted("interrupted after 1 of 9 scenarios (SIGTERM) <&>");
  std::ostringstream out;
  report.write(out);
  const std::string html = out.str();
  EXPECT_NE(html.find("<title>peerconf report: 1 passed, 0 failed, 0 skipped, interrupted</title>"),
            std::string::npos)
      << html.substr(0, 600);
  EXPECT_NE(html.find(">interrupted after 1 of 9 scenarios (SIGTERM) &lt;&amp;&gt;: the run under "
                      "way was ended and is not reported; the rest did not run.</p>"),
            std::string::npos);
  EXPECT_EQ(html.rfind("</html>\n"), html.size() - 8);
}

TEST(HtmlReport, EscapesNamesPathsAndMessages) {
  const std::string html = sample().html;
  // Our own script is the only one; the name's and the message's are text.
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<script>document"), std::string::npos);
  EXPECT_NE(html.find("x&lt;script&gt;alert(&quot;n&amp;m&quot;)&lt;/script&gt;&#39;q&#39;"),
            std::string::npos);
  EXPECT_NE(html.find("peer &lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; &amp; "
                      "friends\xef\xbf\xbd\xef\xbf\xbd"),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"file\">scenarios/a&amp;b/&lt;i&gt;.yaml</span>"),
            std::string::npos);
  // The reproduce line quotes the path for the shell, then for HTML.
  EXPECT_NE(html.find("peerconf run &#39;scenarios/a&amp;b/&lt;i&gt;.yaml&#39;"),
            std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
}

TEST(HtmlReport, NeedsNothingFromTheNetwork) {
  const std::string html = sample().html;
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  // url() only for the page's own SVG definitions.
  for (std::size_t at = html.find("url("); at != std::string::npos;
       at = html.find("url(", at + 1)) {
    EXPECT_EQ(html.compare(at, 5, "url(#"), 0) << html.substr(at, 40);
  }
  // Every href is a fragment of this page.
  for (std::size_t at = html.find("href=\""); at != std::string::npos;
       at = html.find("href=\"", at + 1)) {
    EXPECT_EQ(html.compare(at, 7, "href=\"#"), 0) << html.substr(at, 40);
  }
}

TEST(HtmlReport, SwimlanesMarkFaultsRaisesTimeoutsStopsAndTheVerdict) {
  const Sample s = sample();
  const auto scenario = [&](int n) {
    const std::size_t at = s.html.find("id=\"s-" + std::to_string(n) + "\"");
    return s.html.substr(at, s.html.find("</details>", at) - at);
  };
  const std::string clean = scenario(1);
  EXPECT_EQ(count(clean, "#pc-fault"), 0u);
  EXPECT_EQ(count(clean, "<circle class=\"o-ok\""), 4u);
  EXPECT_NE(clean.find("<path class=\"vl pass\""), std::string::npos);
  EXPECT_NE(clean.find("<path class=\"p-construct\""), std::string::npos);

  const std::string open = scenario(2);  // open fails on rank 1 for peer 3
  EXPECT_EQ(count(open, "<use href=\"#pc-fault\""), 1u);
  EXPECT_GE(count(open, "<use href=\"#pc-raise\""), 1u);
  EXPECT_EQ(count(open, "<circle class=\"o-raised\""), 4u);
  EXPECT_NE(open.find("<title>fault: open — openMemHandle fails with error 1</title>"),
            std::string::npos);

  const std::string hang = scenario(3);  // rank 1 hangs; the others time out
  EXPECT_EQ(count(hang, "<use href=\"#pc-timeout\""), 3u);
  EXPECT_EQ(count(hang, "<circle class=\"o-hung\""), 1u);
  EXPECT_EQ(count(hang, "<path class=\"stop\""), 1u);
  EXPECT_NE(hang.find("rank 1 hung from here on"), std::string::npos);
  // The hatching starts where the rank hung (its hang fault), not where the harness reported it.
  const auto after = [&](const std::string& prefix, char end) {
    const std::size_t at = hang.find(prefix);
    if (at == std::string::npos) return std::string("(no ") + prefix + ")";
    const std::size_t from = at + prefix.size();
    return hang.substr(from, hang.find(end, from) - from);
  };
  const std::string faultX = after("<use href=\"#pc-fault\" x=\"", '"');
  EXPECT_EQ(after("<path class=\"stop\" d=\"M", ' '), faultX) << hang;
  EXPECT_NE(after("<circle class=\"o-hung\" cx=\"", '"'), faultX);  // reported at the end
  EXPECT_NE(hang.find("raised GroupTimeout"), std::string::npos);
  // The legend explains every mark.
  for (const char* mark : {"#pc-fault", "#pc-raise", "#pc-timeout"}) {
    EXPECT_NE(s.html.find(std::string("<use href=\"") + mark + "\" x=\""), std::string::npos);
  }
  EXPECT_NE(s.html.find(">timed out</text>"), std::string::npos);
}

TEST(HtmlReport, EscapeFunction) {
  EXPECT_EQ(htmlEscape("a<b>&\"c\" 'd'"), "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(htmlEscape("tab\tnl\n\x01\x7f\xc2\x85\xff"),
            "tab\tnl\n\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(htmlEscape("\xc3\xa9\xe2\x80\x94"), "\xc3\xa9\xe2\x80\x94");
}

// 1000 runs (a tenth of them failing) stay under 5 MiB; every one is in the page, and only the
// first 20 failing ones start expanded.
TEST(HtmlReport, AThousandRunsStayUnderFiveMiB) {
  HtmlReport report;
  const RunRecord clean = testing::successRun(4);
  const RunRecord failing = leakingRun();
  const auto cleanJudged = judged(clean);
  const auto failingJudged = judged(failing);
  for (int i = 0; i < 1000; ++i) {
    if (i % 10 == 9) {
      report.onScenario(failing, failingJudged);
    } else {
      report.onScenario(clean, cleanJudged);
    }
  }
  std::ostringstream out;
  report.write(out);
  const std::string html = out.str();
  EXPECT_LT(html.size(), 5u * 1024 * 1024);
  EXPECT_EQ(count(html, "<details class=\"sc "), 1000u);
  EXPECT_EQ(count(html, "data-status=\"fail\""), 100u);
  // The first 20 failing runs start expanded, the page says so.
  EXPECT_EQ(count(html, "data-status=\"fail\" open>"), 20u);
  EXPECT_NE(html.find("The first 20 failing runs start expanded"), std::string::npos);
  EXPECT_NE(html.find("id=\"s-1000\""), std::string::npos);
  EXPECT_NE(html.find("id=\"n-pass\">900 passed"), std::string::npos);
  std::cout << "1000 runs: " << html.size() << " bytes\n";
}

TEST(HtmlReport, ARunOnSimulatedTimeSaysItsEventsAreSimulated) {
  HtmlReport report;
  RunRecord sim = testing::successRun(2);
  sim.clock = "sim";
  report.onScenario(sim, judged(sim));
  std::ostringstream out;
  report.write(out);
  EXPECT_NE(out.str().find("events on simulated time"), std::string::npos);
  HtmlReport real;
  const RunRecord clean = testing::successRun(2);
  real.onScenario(clean, judged(clean));
  std::ostringstream realOut;
  real.write(realOut);
  EXPECT_EQ(realOut.str().find("events on simulated time"), std::string::npos);
}

// The swimlane of one run, as the report draws it.
std::string swimlaneOf(const RunRecord& record) {
  HtmlReport report;
  report.onScenario(record, judged(record));
  std::ostringstream out;
  report.write(out);
  const std::string page = out.str();
  const std::size_t from = page.find("<svg class=\"lane");
  if (from == std::string::npos) return "(no swimlane)";
  return page.substr(from, page.find("</svg>", from) - from);
}

// On simulated time the events' axis is virtual: the real time the run took (wallNs, often far
// longer than its virtual span on a loaded machine) must not squeeze the phases into a sliver.
// On real time wallNs is the axis's end (control: there it changes the picture).
TEST(HtmlReport, ASimulatedRunsSwimlaneIgnoresItsWallTime) {
  RunRecord sim = testing::successRun(2);
  sim.clock = "sim";
  sim.wallNs = 1;
  const std::string base = swimlaneOf(sim);
  ASSERT_NE(base, "(no swimlane)");
  RunRecord slow = sim;
  slow.wallNs = 100 * sim.timelineNs();
  EXPECT_EQ(swimlaneOf(slow), base);
  RunRecord real = testing::successRun(2);
  real.wallNs = 1;
  RunRecord realSlow = real;
  realSlow.wallNs = 100 * sim.timelineNs();  // the same events as `sim`
  EXPECT_NE(swimlaneOf(realSlow), swimlaneOf(real));
}

// Which clock each time is on: the run's duration is wall time, the swimlane's axis says sim or
// wall time.
TEST(HtmlReport, SaysWhichTimesAreWallAndWhichSimulated) {
  RunRecord sim = testing::successRun(2);
  sim.clock = "sim";
  const std::string simLane = swimlaneOf(sim);
  EXPECT_NE(simLane.find(">sim time</text>"), std::string::npos) << simLane;
  EXPECT_EQ(simLane.find(">wall time</text>"), std::string::npos) << simLane;
  const RunRecord real = testing::successRun(2);
  EXPECT_NE(swimlaneOf(real).find(">wall time</text>"), std::string::npos);
  HtmlReport report;
  report.onScenario(real, judged(real));
  std::ostringstream out;
  report.write(out);
  EXPECT_NE(out.str().find(" wall · seed "), std::string::npos);
  EXPECT_NE(out.str().find("events on wall time"), std::string::npos);
  EXPECT_NE(out.str().find("wall time in all"), std::string::npos);
}

// Every run shows its faults and its expectation, as the file says them.
TEST(HtmlReport, ShowsEachRunsFaultsAndExpectation) {
  const RunRecord leaking = leakingRun();
  HtmlReport report;
  report.onScenario(leaking, judged(leaking));
  std::ostringstream out;
  report.write(out);
  const std::string page = out.str();
  EXPECT_NE(page.find("<h4>Faults and expectation</h4>"), std::string::npos);
  for (std::size_t i = 0; i < leaking.scenario.faults.size(); ++i) {
    const std::string fault = "fault #" + std::to_string(i) + ": " +
                              toString(leaking.scenario.faults[i].site) + " on rank";
    EXPECT_NE(page.find(fault), std::string::npos) << fault;
  }
  EXPECT_NE(page.find("expect: outcome " + toString(leaking.scenario.expect.outcome)),
            std::string::npos);
}

// The axis's ticks: a round step, at most five ticks, and no two labels alike, whatever the
// axis's length (a 0.2 ms axis read "0.0 ms, 0.1 ms, 0.1 ms, 0.1 ms, 0.2 ms" before).
TEST(HtmlReport, AxisTicksAllDiffer) {
  for (std::int64_t end :
       {std::int64_t{1}, std::int64_t{7}, std::int64_t{999}, std::int64_t{200'000},
        std::int64_t{1'100'000}, std::int64_t{9'990'000}, std::int64_t{12'345'678},
        std::int64_t{999'999'999}, std::int64_t{1'000'000'001}, std::int64_t{123'456'789'012}}) {
    const std::int64_t step = tickStep(end);
    ASSERT_GT(step, 0);
    EXPECT_GE(step * 4, end) << end;
    std::set<std::string> labels;
    int ticks = 0;
    for (std::int64_t ns = 0; ns <= end; ns += step, ++ticks) {
      EXPECT_TRUE(labels.insert(tickLabel(ns, step)).second)
          << end << ": " << tickLabel(ns, step) << " twice";
    }
    EXPECT_LE(ticks, 5) << end;
  }
  EXPECT_EQ(tickStep(200'000), 50'000);
  EXPECT_EQ(tickLabel(100'000, 50'000), "0.10 ms");
  EXPECT_EQ(tickLabel(4'000'000'000, 1'000'000'000), "4 s");
  // In the picture: a 0.2 ms axis's labels.
  RunRecord run = testing::successRun(2);
  run.clock = "sim";
  const std::string lane = swimlaneOf(run);
  std::set<std::string> seen;
  for (std::size_t at = lane.find("class=\"tk\""); at != std::string::npos;
       at = lane.find("class=\"tk\"", at + 1)) {
    const std::size_t from = lane.find('>', at) + 1;
    const std::string label = lane.substr(from, lane.find('<', from) - from);
    EXPECT_TRUE(seen.insert(label).second) << label << " twice in " << lane;
  }
  EXPECT_GE(seen.size(), 2u) << lane;
}

TEST(HtmlReport, WritesAFileAndNamesAPathItCannotWrite) {
  HtmlReport report;
  const RunRecord clean = testing::successRun(2);
  report.onScenario(clean, judged(clean));
  const auto path = std::filesystem::temp_directory_path() /
                    ("peerconf-html-test-" + std::to_string(::getpid()) + ".html");
  report.writeFile(path.string());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  EXPECT_NE(text.str().find("</html>"), std::string::npos);
  try {
    report.writeFile("/nonexistent-dir/r.html");
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/r.html"), std::string::npos);
  }
}

}  // namespace
}  // namespace peerconf::harness::reports
