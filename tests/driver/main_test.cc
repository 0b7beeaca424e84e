// The `peerconf` command's argument handling (main.cc has no function of its own to call: the
// built binary is run, PEERCONF_BINARY): exit 0 for --help, 2 for a usage error (an unknown
// option, no subcommand, a value outside an option's set, an unknown --core), and the core names
// `validate --help` lists.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Ran {
  int code = -1;       // the exit code, or -1 when it did not exit
  std::string output;  // stdout and stderr together
};

// Runs the binary with `args` (shell words, no quoting needed in these tests).
Ran peerconf(const std::string& args) {
  Ran ran;
  const std::string command = std::string(PEERCONF_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return ran;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    ran.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) ran.code = WEXITSTATUS(status);
  return ran;
}

TEST(PeerconfCommand, HelpExitsZeroAndNamesTheOptions) {
  const Ran run = peerconf("run --help");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("--launcher"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("the simulator checks itself first"), std::string::npos) << run.output;
  const Ran top = peerconf("--help");
  EXPECT_EQ(top.code, 0) << top.output;
  EXPECT_NE(top.output.find("Exit status: 0 all passed, 1 a scenario failed, 2 usage"),
            std::string::npos)
      << top.output;
}

TEST(PeerconfCommand, AnUnknownOptionIsAUsageError) {
  EXPECT_EQ(peerconf("run --no-such-option x").code, 2);
}

TEST(PeerconfCommand, ASubcommandIsRequired) {
  EXPECT_EQ(peerconf("").code, 2);
  EXPECT_EQ(peerconf("frobnicate").code, 2);
}

TEST(PeerconfCommand, AValueOutsideAnOptionsSetIsAUsageError) {
  EXPECT_EQ(peerconf("run --launcher slurm x.yaml").code, 2);
  EXPECT_EQ(peerconf("run --clock wall x.yaml").code, 2);
  EXPECT_EQ(peerconf("run --repeat 0 x.yaml").code, 2);
  EXPECT_EQ(peerconf("explore --max-ranks 17").code, 2);
}

TEST(PeerconfCommand, AnUnknownCoreIsAUsageErrorListingTheCores) {
  const Ran ran = peerconf("run --core skips-agreemnt " PEERCONF_SCENARIOS_DIR "/handshake");
  EXPECT_EQ(ran.code, 2) << ran.output;
  EXPECT_NE(ran.output.find("peerconf: --core: unknown core 'skips-agreemnt'; the cores are: "
                            "accepts-long-exchange, chains-wrong-cause, "),
            std::string::npos)
      << ran.output;
}

TEST(PeerconfCommand, ValidateHelpListsTheCoresAScenarioMayName) {
  const Ran ran = peerconf("validate --help");
  EXPECT_EQ(ran.code, 0) << ran.output;
  EXPECT_NE(ran.output.find("`core:` may name: accepts-long-exchange, chains-wrong-cause,"),
            std::string::npos)
      << ran.output;
  EXPECT_NE(ran.output.find("production"), std::string::npos) << ran.output;
}

// A team's executable (peerconf's command line with its layouts; here the same binary under the
// team's name) is named in every hint and report, not `peerconf`, which lacks the team's layouts
// (issue 41 item 6): the systematic replay hint, the HTML report's title and command, JUnit.
TEST(PeerconfCommand, HintsAndReportsNameTheExecutableThatRan) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("peerconf-name-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path team = dir / "myteam-peerconf";
  std::filesystem::create_symlink(PEERCONF_BINARY, team);
  const auto ran = [&](const std::string& args) {
    Ran out;
    const std::string command = team.string() + " " + args + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while (pipe != nullptr && (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
      out.output.append(buffer.data(), n);
    if (pipe != nullptr) out.code = WEXITSTATUS(::pclose(pipe));
    return out;
  };
  const std::string file = std::string(PEERCONF_SOURCE_DIR) +
                           "/tests/data/systematic/reader-without-acquire-3-steps.yaml";
  const Ran systematic =
      ran("explore --systematic " + file + " --schedule-out " + (dir / "s").string());
  EXPECT_EQ(systematic.code, 1) << systematic.output;
  EXPECT_NE(systematic.output.find("replay: myteam-peerconf explore --systematic"),
            std::string::npos)
      << systematic.output;
  const Ran run = ran("run " + std::string(PEERCONF_SOURCE_DIR) +
                      "/scenarios/dataplane/reference-2-ranks.yaml --html " +
                      (dir / "r.html").string() + " --junit " + (dir / "r.xml").string());
  EXPECT_EQ(run.code, 0) << run.output;
  std::stringstream html;
  html << std::ifstream(dir / "r.html").rdbuf();
  EXPECT_NE(html.str().find("<h1>myteam-peerconf report"), std::string::npos);
  EXPECT_NE(html.str().find("myteam-peerconf run "), std::string::npos);
  std::stringstream junit;
  junit << std::ifstream(dir / "r.xml").rdbuf();
  EXPECT_NE(junit.str().find("<testsuite name=\"myteam-peerconf\""), std::string::npos)
      << junit.str();
  std::filesystem::remove_all(dir);
}

}  // namespace
