// fillVerdict: how a data-plane analysis becomes the C6/C7 verdict's status, summary and
// findings (not applicable, not run, passing counts, capped findings split in-band/history).
#include "checkers/verdict_text.h"

#include <gtest/gtest.h>

#include <string>

namespace peerconf::harness::dataplane {

using checkers::Analysis;
using checkers::fillVerdict;
using checkers::kMaxVerdictFindings;
using model::Finding;
using model::Verdict;
namespace {

Verdict filled(const Analysis& analysis) {
  Verdict verdict;
  verdict.status = Verdict::Status::kPass;
  fillVerdict(analysis, "overwrite", "pushes", verdict);
  return verdict;
}

Analysis ranAnalysis() {
  Analysis analysis;
  analysis.asked = true;
  analysis.ran = true;
  analysis.pairsChecked = 16;
  analysis.eventsReplayed = 12;
  analysis.historySteps = 8;
  return analysis;
}

std::size_t countStarting(const Verdict& verdict, const std::string& prefix) {
  std::size_t n = 0;
  for (const Finding& f : verdict.findings) n += f.text.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(VerdictText, NotAskedIsNotApplicable) {
  const Verdict v = filled(Analysis{});
  EXPECT_EQ(v.status, Verdict::Status::kNotApplicable);
  EXPECT_EQ(v.summary, "no data plane in this scenario");
  EXPECT_TRUE(v.findings.empty());
}

TEST(VerdictText, APassSaysWhatWasChecked) {
  Analysis analysis = ranAnalysis();
  analysis.notes.push_back("history of rank 1 cut short");
  const Verdict v = filled(analysis);
  EXPECT_EQ(v.status, Verdict::Status::kPass);
  EXPECT_EQ(v.summary,
            "no overwrite: 16 pairs checked in-band, 12 pushes replayed from the history of 8 "
            "steps");
  ASSERT_EQ(v.findings.size(), 1u);  // the note
  EXPECT_EQ(v.findings[0].rank, -1);
  EXPECT_EQ(v.findings[0].text, "history of rank 1 cut short");
}

TEST(VerdictText, ADataPlaneNotRunFails) {
  Analysis analysis;
  analysis.asked = true;
  analysis.notRun.push_back({1, "rank 1: data plane skipped", false});
  const Verdict v = filled(analysis);
  EXPECT_TRUE(v.failed());
  EXPECT_EQ(v.summary, "a data plane was asked for but 1 rank(s) did not run it");
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].rank, 1);
  // When the others ran it, their result is added to the summary.
  analysis.ran = true;
  analysis.historySteps = 4;
  const Verdict others = filled(analysis);
  EXPECT_TRUE(others.failed());
  EXPECT_NE(others.summary.find("; on the others no overwrite: "), std::string::npos)
      << others.summary;
}

TEST(VerdictText, ProblemsFailAndAreMarkedBySource) {
  Analysis analysis = ranAnalysis();
  analysis.inBand = 1;
  analysis.replayed = 1;
  analysis.problems.push_back({1, "slot reused", true});
  analysis.problems.push_back({0, "pushed too early", false});
  const Verdict v = filled(analysis);
  EXPECT_TRUE(v.failed());
  EXPECT_EQ(v.summary.rfind("1 overwrite(s) seen in-band, 1 found by the history replay (", 0), 0u)
      << v.summary;
  ASSERT_EQ(v.findings.size(), 2u);
  EXPECT_EQ(v.findings[0].text, "in-band: slot reused");
  EXPECT_EQ(v.findings[0].rank, 1);
  EXPECT_EQ(v.findings[1].text, "history: pushed too early");
  EXPECT_EQ(v.findings[1].rank, 0);
}

// Neither source hides the other: each gets half of kMaxVerdictFindings, then a count.
TEST(VerdictText, FindingsAreCappedHalfForEachSource) {
  Analysis analysis = ranAnalysis();
  analysis.inBand = 100;
  analysis.replayed = 3;
  for (int i = 0; i < 100; ++i) analysis.problems.push_back({0, "in " + std::to_string(i), true});
  for (int i = 0; i < 3; ++i) analysis.problems.push_back({1, "h " + std::to_string(i), false});
  const Verdict v = filled(analysis);
  EXPECT_EQ(countStarting(v, "in-band: "), kMaxVerdictFindings / 2);
  EXPECT_EQ(countStarting(v, "history: "), 3u);
  EXPECT_EQ(countStarting(v, "... and 80 more seen in-band"), 1u);
  EXPECT_EQ(countStarting(v, "... and"), 1u);
}

}  // namespace
}  // namespace peerconf::harness::dataplane
