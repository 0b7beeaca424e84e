// mpirun as a child (harness/mpirun/mpirun_child.h), with a stand-in `mpirun` on PATH: it runs in
// its keeper's process group, not its starter's, with stdin from /dev/null and its session
// directory in the run directory; its exit status comes back (127, no mpirun, as 2); an interrupt
// of its starter reaches it as the stop file (the signal's number), and nothing is left in $TMPDIR
// afterwards; when its starter dies first, the keeper ends it (SIGTERM) and then removes the run
// directory; the ranks' side reads the stop file (jobInterrupt) and removes it.
#include "mpirun/mpirun_child.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "launch/interrupt.h"

namespace peerconf::harness::mpirun {
namespace {

namespace fs = std::filesystem;

// The stand-in: says what it sees in $FAKE_LOG, writes one byte to descriptor $FAKE_READY_FD once
// it runs, then waits for the stop file (when $FAKE_WAIT is set) and exits with $FAKE_EXIT.
constexpr const char* kFakeMpirun = R"(#!/usr/bin/env python3
import os, signal, sys, time
if os.environ.get("FAKE_TERM"):  # the keeper's stand-in test: mpirun's own files, then SIGTERM
    def ended(sig, frame):
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write("term\n")
        with open(os.path.join(os.environ["FAKE_TERM"], "made-again"), "w") as f:
            f.write("x")
        sys.exit(0)
    signal.signal(signal.SIGTERM, ended)
    os.write(int(os.environ["FAKE_READY_FD"]), b"r")
    while True:
        signal.pause()
with open(os.environ["FAKE_LOG"], "w") as log:
    log.write("args " + " ".join(sys.argv[1:]) + "\n")
    log.write("keeper-group %s\n" % (os.getpgrp() == os.getppid()))
    log.write("starter-group %s\n" % (os.getpgrp() == int(os.environ["FAKE_STARTER_PGRP"])))
    log.write("stdin %s\n" % os.path.realpath("/proc/self/fd/0"))
    log.write("stop-file %s\n" % os.environ.get("PEERCONF_STOP_FILE", ""))
    log.write("session-base %s\n" % os.environ.get("OMPI_MCA_orte_tmpdir_base", ""))
    log.flush()
    os.write(int(os.environ["FAKE_READY_FD"]), b"r")
    if os.environ.get("FAKE_WAIT"):
        stop = os.environ["PEERCONF_STOP_FILE"]
        while not os.path.exists(stop):
            time.sleep(0.005)  # polls for the file: the stand-in's wait, not the test's
        with open(stop) as f:
            log.write("stop " + f.read())
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
)";

class MpirunChild : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("peerconf_mpirun_child_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "tmp");
    std::ofstream(dir_ / "bin" / "mpirun") << kFakeMpirun;
    fs::permissions(dir_ / "bin" / "mpirun", fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs runMpirunChild({"mpirun", "-np", "2"}) in a forked child whose environment sends the
  // stand-in's log to `log`, with `env` set; `interrupt`: once the stand-in runs, SIGINT to that
  // child. Its exit status (the function's result).
  int run(const std::string& log, std::initializer_list<std::pair<const char*, const char*>> env,
          bool interrupt) {
    int ready[2];
    if (::pipe(ready) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      launch::catchInterrupts();
      const std::string path = (dir_ / "bin").string() + ":" + std::getenv("PATH");
      ::setenv("PATH", path.c_str(), 1);
      ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
      ::setenv("FAKE_LOG", log.c_str(), 1);
      ::setenv("FAKE_READY_FD", std::to_string(ready[1]).c_str(), 1);
      ::setenv("FAKE_STARTER_PGRP", std::to_string(::getpgrp()).c_str(), 1);
      for (const auto& [name, value] : env) ::setenv(name, value, 1);
      std::ostringstream err;
      const int code = runMpirunChild({"mpirun", "-np", "2"}, err);
      std::cerr << err.str();
      ::_exit(code);
    }
    ::close(ready[1]);
    char byte = 0;
    const bool started = ::read(ready[0], &byte, 1) == 1;
    ::close(ready[0]);
    if (started && interrupt) ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  static std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path dir_;
};

TEST_F(MpirunChild, ItsOwnGroupNoTerminalAndItsExitStatus) {
  const std::string log = (dir_ / "log").string();
  EXPECT_EQ(run(log, {{"FAKE_EXIT", "3"}}, false), 3);
  const std::string said = slurp(log);
  EXPECT_NE(said.find("args -np 2\n"), std::string::npos) << said;
  EXPECT_NE(said.find("keeper-group True\n"), std::string::npos)
      << "not in the group its keeper leads: " << said;
  EXPECT_NE(said.find("starter-group False\n"), std::string::npos)
      << "in the starter's group, where a Ctrl-C would reach it: " << said;
  EXPECT_NE(said.find("stdin /dev/null\n"), std::string::npos) << said;
  EXPECT_NE(said.find("stop-file " + (dir_ / "tmp").string() + "/peerconf-mpirun."),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("session-base " + (dir_ / "tmp").string() + "/peerconf-mpirun."),
            std::string::npos)
      << "mpirun's session directory is not in the run directory: " << said;
  EXPECT_EQ(said.find("\nstop "), std::string::npos) << "a stop file without an interrupt";
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(MpirunChild, AnInterruptReachesTheRanksAsTheStopFileAndExitsWith130) {
  const std::string log = (dir_ / "log").string();
  EXPECT_EQ(run(log, {{"FAKE_WAIT", "1"}, {"FAKE_EXIT", "0"}}, true), 128 + SIGINT);
  const std::string said = slurp(log);
  EXPECT_NE(said.find("stop " + std::to_string(SIGINT) + "\n"), std::string::npos) << said;
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "the stop file is left";
}

TEST_F(MpirunChild, NoMpirunIsAUsageError) {
  fs::remove(dir_ / "bin" / "mpirun");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("PATH", (dir_ / "bin").c_str(), 1);
    std::ostringstream err;
    ::_exit(runMpirunChild({"mpirun", "-np", "2"}, err));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

// The process that started mpirun dies first (here by SIGKILL, which nothing catches): the
// keeper sends mpirun SIGTERM, waits for it, then removes the run's directory, files mpirun made
// there meanwhile included. Run under a subreaper of the test's (the keeper is reparented to it).
TEST_F(MpirunChild, WhenItsStarterDiesTheKeeperEndsMpirunThenRemovesTheRunDirectory) {
  const fs::path cleanup = dir_ / "tmp" / "run";
  fs::create_directories(cleanup / "session");
  const std::string log = (dir_ / "log").string();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t reaper = ::fork();
  ASSERT_GE(reaper, 0);
  if (reaper == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t starter = ::fork();
    if (starter == 0) {
      ::setenv("PATH", ((dir_ / "bin").string() + ":" + std::getenv("PATH")).c_str(), 1);
      ::setenv("FAKE_LOG", log.c_str(), 1);
      ::setenv("FAKE_TERM", cleanup.c_str(), 1);
      ::setenv("FAKE_READY_FD", std::to_string(ready[1]).c_str(), 1);
      if (startMpirun({"mpirun"}, "", cleanup.string()) < 0) ::_exit(10);
      char byte = 0;
      if (::read(ready[0], &byte, 1) != 1) ::_exit(11);  // the stand-in runs
      ::kill(::getpid(), SIGKILL);
    }
    ::close(ready[0]);
    ::close(ready[1]);
    int status = 0;
    if (::waitpid(starter, &status, 0) != starter || !WIFSIGNALED(status)) ::_exit(12);
    // The keeper, reparented here, then ends: nothing else is left to wait for.
    while (::waitpid(-1, &status, 0) > 0) {
    }
    ::_exit(0);
  }
  ::close(ready[0]);
  ::close(ready[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(reaper, &status, 0), reaper);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: not started, 11: the stand-in never ran, 12: the "
                                       "starter was not killed";
  EXPECT_EQ(slurp(log), "term\n") << "mpirun was not sent SIGTERM";
  EXPECT_FALSE(fs::exists(cleanup)) << "the run's directory is left";
}

// The ranks' side, in a child of its own (jobInterrupt reads the variable once).
TEST_F(MpirunChild, TheRanksReadTheStopFileAndRank0RemovesIt) {
  const std::string stop = (dir_ / "tmp" / "stop").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("PEERCONF_STOP_FILE", stop.c_str(), 1);
    if (jobInterrupt() != 0) ::_exit(10);
    std::ofstream(stop) << SIGTERM << "\n";
    if (jobInterrupt() != SIGTERM) ::_exit(11);
    removeStopFile();
    if (fs::exists(stop)) ::_exit(12);
    if (jobInterrupt() != 0) ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: an interrupt without a file, 11: the file not read, "
                                       "12: not removed, 13: read after its removal";
}

}  // namespace
}  // namespace peerconf::harness::mpirun
