// `peerconf validate` on hostile input: a 20 MB key or value must be refused (exit 2) in under
// 1 s of CPU and 100 MB of memory, with a message of readable length. The binary runs as a child
// under RLIMIT_CPU (1 s: the kernel stops it with SIGXCPU past that) and RLIMIT_AS (so a
// regression fails here instead of eating the machine), and its peak RSS is read with wait4.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sanitizer.h"

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kHuge = 20'000'000;
constexpr long kMaxRssKiB = 100 * 1024;
constexpr rlim_t kAddressSpace = rlim_t{1} << 30;  // the binary maps ~0.1 GiB of libraries

struct Child {
  bool exited = false;
  int code = -1;
  int signal = 0;
  long maxRssKiB = 0;
  std::string err;
};

// Runs argv[0] with argv under the limits; stderr is kept, stdout dropped.
Child runLimited(const std::vector<std::string>& argv, const fs::path& errFile) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit cpu{1, 2};  // soft: SIGXCPU after 1 s of CPU; hard: SIGKILL after 2 s
    ::setrlimit(RLIMIT_CPU, &cpu);
#ifndef PEERCONF_SHADOW_SANITIZER  // the sanitizer reserves terabytes of address space
    const rlimit as{kAddressSpace, kAddressSpace};
    ::setrlimit(RLIMIT_AS, &as);
#endif
    const rlimit noCore{0, 0};
    ::setrlimit(RLIMIT_CORE, &noCore);
    std::FILE* err = std::freopen(errFile.c_str(), "w", stderr);
    std::FILE* out = std::freopen("/dev/null", "w", stdout);
    if (err == nullptr || out == nullptr) ::_exit(126);
    std::vector<char*> raw;
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  Child child;
  int status = 0;
  rusage usage{};
  EXPECT_EQ(::wait4(pid, &status, 0, &usage), pid);
  child.exited = WIFEXITED(status);
  child.code = child.exited ? WEXITSTATUS(status) : -1;
  child.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  child.maxRssKiB = usage.ru_maxrss;
  std::ifstream in(errFile);
  std::ostringstream text;
  text << in.rdbuf();
  child.err = text.str();
  return child;
}

class ValidateLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("peerconf_validate_limits_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `before` + `size` times `fill` + `after` and validates it.
  Child validate(const std::string& before, std::size_t size, char fill, const std::string& after) {
    const fs::path file = dir_ / "huge.yaml";
    {
      std::ofstream out(file, std::ios::binary);
      out << before << std::string(size, fill) << after;
    }
    return runLimited({PEERCONF_BINARY, "validate", file.string()}, dir_ / "stderr.txt");
  }

  // Exit 2 within the CPU limit and under kMaxRssKiB, with a short message holding `fragment`.
  void expectRefusedCheaply(const Child& child, const std::string& fragment) {
    EXPECT_TRUE(child.exited) << "killed by " << strsignal(child.signal)
                              << (child.signal == SIGXCPU || child.signal == SIGKILL
                                      ? " (past 1 s of CPU)"
                                      : "");
    EXPECT_EQ(child.code, 2) << child.err.substr(0, 2000);
#ifndef PEERCONF_SHADOW_SANITIZER  // the sanitizer's shadow inflates the peak
    EXPECT_LT(child.maxRssKiB, kMaxRssKiB) << "peak RSS " << child.maxRssKiB << " KiB";
#endif
    EXPECT_NE(child.err.find(fragment), std::string::npos) << child.err.substr(0, 2000);
    EXPECT_LT(child.err.size(), 1000u) << child.err.substr(0, 2000);
  }

  fs::path dir_;
};

// 20 MB: refused before the YAML parser (which takes ~0.3 s of CPU a MB on a long scalar).
TEST_F(ValidateLimits, AHugeKey) {
  expectRefusedCheaply(validate("ranks: 1\n", kHuge, 'x', ": 1\nexpect: {outcome: success}\n"),
                       "huge.yaml: more than 256KiB: a scenario file may be at most 256KiB");
}

TEST_F(ValidateLimits, AHugeExplicitKey) {
  expectRefusedCheaply(validate("ranks: 1\n? ", kHuge, 'x', "\n: 1\nexpect: {outcome: success}\n"),
                       "more than 256KiB");
}

TEST_F(ValidateLimits, AHugeValue) {
  expectRefusedCheaply(validate("ranks: 1\nexpect: {outcome: ", kHuge, 'y', "}\n"),
                       "more than 256KiB");
}

// Just under the cap, the long key or value reaches the parser's messages: the suggestion is
// skipped (no name is near that long) and the echo is cut to 80 bytes and the size.
constexpr std::size_t kUnderCap = 250'000;

TEST_F(ValidateLimits, ALongKeyIsEchoedCut) {
  // An explicit key ("? "): yaml-cpp refuses plain keys past 1024 bytes itself.
  const Child child =
      validate("ranks: 1\nexpect: {outcome: success}\n? ranks", kUnderCap, 's', "\n: 1\n");
  expectRefusedCheaply(child, "unknown key 'rankssss");
  EXPECT_NE(child.err.find("s... (" + std::to_string(kUnderCap + 5) + " bytes)' in the scenario"),
            std::string::npos)
      << child.err;
}

TEST_F(ValidateLimits, ALongValueIsEchoedCut) {
  const Child child = validate("ranks: 1\nexpect: {outcome: ", kUnderCap, 'y', "}\n");
  expectRefusedCheaply(child, "unknown outcome 'yyyy");
  EXPECT_NE(child.err.find("y... (" + std::to_string(kUnderCap) + " bytes)'; expected one of"),
            std::string::npos)
      << child.err;
}

TEST_F(ValidateLimits, ALongQuotedValueIsEchoedCut) {
  const Child child = validate("ranks: \"", kUnderCap, '7', "\"\nexpect: {outcome: success}\n");
  expectRefusedCheaply(child, "'ranks' must be an integer, got the string \"7777");
  EXPECT_NE(child.err.find("7... (" + std::to_string(kUnderCap) + " bytes)\""), std::string::npos)
      << child.err;
}

// The limits bite: a child that spins past 1 s of CPU is stopped by the kernel, so a validator
// that takes too long fails the tests above instead of passing slowly.
TEST_F(ValidateLimits, TheCpuLimitStopsASpinningChild) {
  const Child child = runLimited({"/bin/sh", "-c", "while :; do :; done"}, dir_ / "spin.txt");
  EXPECT_FALSE(child.exited);
  EXPECT_TRUE(child.signal == SIGXCPU || child.signal == SIGKILL) << strsignal(child.signal);
}

}  // namespace
