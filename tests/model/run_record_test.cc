// RunRecord helpers: the reproduce line, shell-quoted so that `sh -c` gives back the very words
// whatever the file's path holds, and the rank status names.
#include "model/run_record.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace peerconf::harness {

using model::EventKind;
using model::RankStatus;
using model::reproduceCommand;
using model::RunRecord;
using model::shellQuote;
namespace {

// The words `sh -c` passes to `peerconf` when running `line` (peerconf is a function that prints
// each argument on its own line, NUL-terminated so that newlines inside survive).
std::vector<std::string> wordsThroughSh(const std::string& line) {
  const std::string script =
      "peerconf() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; }; " + line;
  const std::string command = "sh -c " + shellQuote(script);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 256> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  pclose(pipe);
  std::vector<std::string> words;
  std::size_t start = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\0') {
      words.push_back(out.substr(start, i - start));
      start = i + 1;
    }
  }
  return words;
}

TEST(Reproduce, TheLineSurvivesTheShellWithAwkwardPaths) {
  for (const std::string file :
       {"scenarios/open/plain.yaml", "my scenarios/it's a \"test\".yaml",
        "$(touch /tmp/peerconf-pwned) `x` ;|&<>*?.yaml", "new\nline\ttab.yaml", "'"}) {
    SCOPED_TRACE(file);
    RunRecord record;
    record.scenario.file = file;
    record.seed = 42;
    record.launcher = "threads";
    record.runtime = "gpu";
    const std::string line = reproduceCommand(record);
    EXPECT_EQ(wordsThroughSh(line),
              (std::vector<std::string>{"run", file, "--seed", "42", "--launcher", "threads",
                                        "--runtime", "gpu", "--clock", "real"}))
        << line;
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/peerconf-pwned"));
  RunRecord plain;
  plain.scenario.file = "scenarios/open/a.yaml";
  plain.seed = 1;
  plain.launcher = "mpi";
  plain.runtime = "mock";
  EXPECT_EQ(reproduceCommand(plain), "peerconf run scenarios/open/a.yaml --seed 1 --launcher mpi");
}

// A thread run replays only on its own clock, named even when it is the command line's default
// (sim) or the record's (real); MPI runs have no clock flag.
TEST(Reproduce, NamesTheClockForThreadRunsOnly) {
  RunRecord record;
  record.scenario.file = "a.yaml";
  record.seed = 7;
  record.launcher = "threads";
  record.runtime = "mock";
  record.clock = "sim";
  EXPECT_EQ(reproduceCommand(record),
            "peerconf run a.yaml --seed 7 --launcher threads --clock sim");
  record.clock = "real";
  EXPECT_EQ(reproduceCommand(record),
            "peerconf run a.yaml --seed 7 --launcher threads --clock real");
  record.launcher = "mpi";
  EXPECT_EQ(reproduceCommand(record), "peerconf run a.yaml --seed 7 --launcher mpi");
}

// A run of a planted core replays that core: the line names it (before the clock), and names no
// core for the production one.
TEST(Reproduce, NamesAPlantedCore) {
  RunRecord record;
  record.scenario.file = "a.yaml";
  record.seed = 7;
  record.launcher = "threads";
  record.runtime = "mock";
  record.clock = "sim";
  record.core = "crashes-on-open";
  EXPECT_EQ(reproduceCommand(record),
            "peerconf run a.yaml --seed 7 --launcher threads --core crashes-on-open --clock sim");
  record.core.clear();
  EXPECT_EQ(reproduceCommand(record),
            "peerconf run a.yaml --seed 7 --launcher threads --clock sim");
}

// The events' time axis: the wall time on real time; on simulated time the latest rank end or
// event, whatever real time the run took.
TEST(RunRecord, TimelineIsTheWallTimeOnRealTimeAndTheLastEventOnSimulatedTime) {
  RunRecord record;
  record.wallNs = 5'000;
  record.ranks.resize(2);
  record.ranks[0].endNs = 700;
  record.ranks[1].endNs = 300;
  record.ranks[1].events.push_back({900, 1, EventKind::kCall, "closeMemHandle", 0, ""});
  EXPECT_EQ(record.timelineNs(), 5'000);
  record.clock = "sim";
  EXPECT_EQ(record.timelineNs(), 900);
  record.ranks[1].events.clear();
  EXPECT_EQ(record.timelineNs(), 700);
}

TEST(ShellQuote, PlainWordsStayAndOthersAreSingleQuoted) {
  EXPECT_EQ(shellQuote("dir/a-b_c.yaml"), "dir/a-b_c.yaml");
  EXPECT_EQ(shellQuote("k=v@h:1%+,"), "k=v@h:1%+,");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("a b"), "'a b'");
  EXPECT_EQ(shellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
}

TEST(RunRecord, StatusNames) {
  EXPECT_EQ(toString(RankStatus::kOk), "ok");
  EXPECT_EQ(toString(RankStatus::kRaised), "raised");
  EXPECT_EQ(toString(RankStatus::kMissing), "missing");
  RunRecord record;
  EXPECT_FALSE(record.simulatedTime());
  record.clock = "sim";
  EXPECT_TRUE(record.simulatedTime());
}

}  // namespace
}  // namespace peerconf::harness
