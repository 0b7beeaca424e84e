// The run directory's files (run_dir.h): item names, atomic writes, reads, the removal of a tree
// (links removed, never followed), the tail of a log, and an event file read back line by line.
#include "mpirun/run_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "model/record_json.h"

namespace peerconf::harness {

using model::dumpJson;
using model::Event;
using model::EventKind;
using model::EventLog;
using model::RankStatus;
namespace {

// A fresh directory, removed with everything in it at the end of the test.
class RunDirFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = makeTempDir(); }
  void TearDown() override {
    mpirun::removeTree(dir_);
    EXPECT_FALSE(mpirun::exists(dir_));
  }
  static std::string makeTempDir() {
    std::string pattern = ::testing::TempDir() + "peerconf-run-dir-test.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return {};
    return pattern;
  }
  std::string dir_;
};

TEST(RunDirNames, AnItemIsNamedByItsIndexRankAndWhat) {
  EXPECT_EQ(mpirun::itemName(3, 1, "events"), "s3.r1.events");
  EXPECT_EQ(mpirun::itemName(0, 12, "result"), "s0.r12.result");
}

TEST(RunDirNames, SteadyNsCountsFromTheClocksEpoch) {
  const EventLog::Clock::time_point t{std::chrono::microseconds(5)};
  EXPECT_EQ(mpirun::steadyNs(t), 5000);
}

TEST_F(RunDirFiles, AnAtomicWriteReadsBackWholeAndLeavesNoTemporary) {
  ASSERT_FALSE(dir_.empty());
  const std::string path = dir_ + "/item";
  EXPECT_FALSE(mpirun::readFile(path).has_value());
  mpirun::writeFileAtomically(path, "first\n");
  mpirun::writeFileAtomically(path, "second");
  EXPECT_EQ(mpirun::readFile(path), "second");
  EXPECT_FALSE(mpirun::exists(path + ".tmp"));
  // A directory that is not there: an error naming the file, not a silent loss.
  EXPECT_THROW(mpirun::writeFileAtomically(dir_ + "/absent/item", "x"), std::runtime_error);
}

TEST_F(RunDirFiles, WriteAllWritesEveryByteAndFailsOnABadDescriptor) {
  const std::string path = dir_ + "/big";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  const std::string text(300000, 'x');
  EXPECT_TRUE(mpirun::writeAll(fd, text));
  ::close(fd);
  EXPECT_EQ(mpirun::readFile(path), text);
  EXPECT_FALSE(mpirun::writeAll(-1, "x"));
}

TEST_F(RunDirFiles, RemoveTreeRemovesWhatIsBelowAndNeverFollowsALink) {
  const std::string outside = makeTempDir();
  ASSERT_FALSE(outside.empty());
  std::ofstream(outside + "/keep") << "kept";
  ASSERT_EQ(::mkdir((dir_ + "/a").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir_ + "/a/b").c_str(), 0700), 0);
  std::ofstream(dir_ + "/a/b/file") << "gone";
  ASSERT_EQ(::symlink(outside.c_str(), (dir_ + "/a/link").c_str()), 0);
  mpirun::removeTree(dir_ + "/a");
  EXPECT_FALSE(mpirun::exists(dir_ + "/a"));
  EXPECT_EQ(mpirun::readFile(outside + "/keep"), "kept");
  mpirun::removeTree(outside);
  EXPECT_FALSE(mpirun::exists(outside));
}

TEST_F(RunDirFiles, AStreamIsReadFromItsCompleteLinesOnly) {
  const std::string path = dir_ + "/" + mpirun::itemName(0, 1, "events");
  Event event;
  event.kind = EventKind::kCall;
  event.what = "allGather";
  event.tNs = 10;
  {
    std::ofstream out(path);
    out << R"({"header": {"rank": 1, "pid": 77, "startNs": 1234}})"
        << "\n"
        << dumpJson(nlohmann::json{{"event", toJson(event)}}) << "\n"
        << "not json\n"
        << R"({"stop": {"status": "hung", "at": "close"}})"
        << "\n"
        << dumpJson(nlohmann::json{{"event", toJson(event)}});  // not ended: still being written
  }
  const mpirun::Stream stream = mpirun::readStream(path);
  ASSERT_TRUE(stream.found);
  EXPECT_EQ(stream.pid, 77);
  EXPECT_EQ(stream.startNs, 1234);
  ASSERT_EQ(stream.events.size(), 1u);
  EXPECT_EQ(stream.events[0].what, "allGather");
  EXPECT_EQ(stream.events[0].tNs, 10);
  EXPECT_EQ(stream.stopped, RankStatus::kHung);
  EXPECT_EQ(stream.stopAt, "close");

  EXPECT_FALSE(mpirun::readStream(dir_ + "/absent").found);
}

TEST(RunDirText, LastLinesKeepsTheTailOfTheLog) {
  EXPECT_EQ(mpirun::lastLines("a\nb\nc\n", 2), "c\n");
  EXPECT_EQ(mpirun::lastLines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(mpirun::lastLines("a\nb", 5), "a\nb");
  EXPECT_EQ(mpirun::lastLines("", 3), "");
}

}  // namespace
}  // namespace peerconf::harness
