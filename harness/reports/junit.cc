// JUnit XML writer; small enough that an escaper beats an XML library dependency.
#include "reports/junit.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "judge/judgement.h"
#include "model/run_record.h"
#include "model/text.h"

namespace peerconf::harness::reports {

using judge::Failure;
using judge::Judgement;
using judge::story;
using model::escapeMarkup;
using model::markupEntity;
using model::reproduceCommand;
using model::RunRecord;
using model::Verdict;

namespace {

std::string seconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns < 0 ? 0 : ns) / 1e9);
  return text;
}

bool allowedInXml(std::uint32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

}  // namespace

std::string xmlEscape(std::string_view text, bool attribute) {
  // In an attribute quotes and whitespace other than ' ' are escaped too (attribute values are
  // normalized); in text they stand as they are. '\r' is escaped everywhere (XML turns it into
  // '\n' when parsing).
  return escapeMarkup(
      text,
      [attribute](std::uint32_t c) -> const char* {
        if (c == '\r') return "&#13;";
        if (!attribute) return markupEntity(c);
        switch (c) {
          case '"':
            return "&quot;";
          case '\'':
            return "&apos;";
          case '\t':
            return "&#9;";
          case '\n':
            return "&#10;";
          default:
            return markupEntity(c);
        }
      },
      allowedInXml);
}

std::string junitClassname(const std::string& scenarioFile) {
  std::string dir = std::filesystem::path(scenarioFile).parent_path().filename().string();
  if (dir.empty() || dir == "." || dir == "..") return model::programName();
  for (char& c : dir) {
    if (c == '.') c = '_';
  }
  return model::programName() + "." + dir;
}

void JUnitReport::onScenario(const RunRecord& record, const Judgement& judgement) {
  Case entry;
  entry.classname = junitClassname(record.scenario.file);
  entry.name = record.scenario.name.empty() ? record.scenario.file : record.scenario.name;
  entry.wallNs = record.wallNs;
  entry.failed = !judgement.passed;
  if (entry.failed) {
    entry.failureType = judgement.failures.front().title;
    std::string message;
    for (const Failure& failure : judgement.failures) {
      if (!message.empty()) message += "; ";
      message += failure.title + ": " + failure.summary;
    }
    entry.failureMessage = message;
    entry.story = story(record, judgement, "");
  }
  std::ostringstream out;
  out << "scenario " << record.scenario.file << ", seed " << record.seed << ", launcher "
      << record.launcher << ", runtime " << record.runtime << '\n';
  for (const Verdict& verdict : judgement.verdicts) {
    out << toString(verdict.property) << ": "
        << (verdict.status == Verdict::Status::kPass   ? "pass"
            : verdict.status == Verdict::Status::kFail ? "fail"
                                                       : "n/a")
        << (verdict.expectedViolation ? " (expected to fail)" : "")
        << (verdict.summary.empty() ? "" : " - " + verdict.summary) << '\n';
  }
  out << "reproduce: " << reproduceCommand(record) << '\n';
  entry.systemOut = out.str();
  cases_.push_back(std::move(entry));
}

std::size_t JUnitReport::failures() const noexcept {
  std::size_t count = 0;
  for (const Case& c : cases_) count += c.failed ? 1 : 0;
  return count;
}

void JUnitReport::write(std::ostream& out) const {
  std::int64_t totalNs = 0;
  for (const Case& c : cases_) totalNs += c.wallNs;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const bool interrupted = !interrupted_.empty();
  out << "<testsuite name=\"" << xmlEscape(model::programName(), true) << "\" tests=\""
      << tests() + (interrupted ? 1 : 0) << "\" failures=\"" << failures() << "\" errors=\""
      << (interrupted ? 1 : 0) << "\" skipped=\"0\" time=\"" << seconds(totalNs) << "\">\n";
  for (const Case& c : cases_) {
    out << "  <testcase classname=\"" << xmlEscape(c.classname, true) << "\" name=\""
        << xmlEscape(c.name, true) << "\" time=\"" << seconds(c.wallNs) << "\">\n";
    if (c.failed) {
      out << "    <failure message=\"" << xmlEscape(c.failureMessage, true) << "\" type=\""
          << xmlEscape(c.failureType, true) << "\">" << xmlEscape(c.story, false) << "</failure>\n";
    }
    out << "    <system-out>" << xmlEscape(c.systemOut, false) << "</system-out>\n";
    out << "  </testcase>\n";
  }
  if (interrupted) {
    out << "  <testcase classname=\"" << xmlEscape(model::programName(), true)
        << "\" name=\"interrupted\" time=\"0.000\">\n"
        << "    <error message=\"" << xmlEscape(interrupted_, true)
        << "\" type=\"interrupted\">the run under way was ended and is not reported; the rest "
           "of the list did not run</error>\n  </testcase>\n";
  }
  out << "</testsuite>\n";
}

void JUnitReport::writeFile(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write the JUnit report to " + path);
  write(file);
  file.flush();
  if (!file) throw std::runtime_error("failed while writing the JUnit report to " + path);
}

}  // namespace peerconf::harness::reports
