// peerconf's command line as a library (command_line.h), called in-process as a team's own
// executable calls it: exit 0 for --help, 2 for a usage error, and the cores the caller adds are
// the ones `validate --help` lists beside the production core.
#include "driver/command_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/run_record.h"

namespace peerconf::harness::driver {
namespace {

int runWith(std::vector<std::string> args,
            const std::function<void(launch::CoreRegistry&)>& addCores = {}) {
  args.insert(args.begin(), "myteam-peerconf");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return runCommandLine(static_cast<int>(args.size()), argv.data(), addCores);
}

TEST(CommandLine, TheCallersCoresAreListedAndUsageErrorsExitTwo) {
  bool added = false;
  const auto addCores = [&](launch::CoreRegistry& cores) {
    added = true;
    cores.add(
        "myteam-core", "a team's own core",
        cores.find("production") != nullptr ? *cores.find("production") : model::CoreFactory{});
  };
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(runWith({"validate", "--help"}, addCores), 0);
  const std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(added);
  EXPECT_NE(help.find("myteam-core"), std::string::npos) << help;
  EXPECT_NE(help.find("production"), std::string::npos) << help;

  EXPECT_NE(help.find("`dataplane: layout:` may name: reference,"), std::string::npos) << help;

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runWith({"run", "--no-such-option", "x.yaml"}), 2);
  ::testing::internal::GetCapturedStderr();
  // Reproduce lines now start with the executable's name.
  model::RunRecord record;
  record.scenario.file = "a.yaml";
  record.launcher = "threads";
  EXPECT_EQ(model::reproduceCommand(record).rfind("myteam-peerconf run a.yaml", 0), 0u);
  model::setProgramName("peerconf");
}

}  // namespace
}  // namespace peerconf::harness::driver
