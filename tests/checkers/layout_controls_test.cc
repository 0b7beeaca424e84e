// Every broken layout shipped as a negative control is caught, by the property it breaks and by
// no other, run after run; and the reference layout passes the very same setups.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/liveness.h"
#include "checkers/no_overwrite.h"
#include "checkers/no_stale.h"
#include "dataplane_test_support.h"
#include "launch/thread_launcher.h"

namespace peerconf::harness::dataplane {

using checkers::Analysis;
using checkers::analyzeOverwrites;
using checkers::checkBoundedWithDataPlane;
using launch::runOnThreads;
using model::Prefill;
using model::Role;
using model::RunRecord;
using model::Spec;
using model::Verdict;
using model::Workload;
namespace {

using testing::describe;
using testing::recordOf;
using testing::runOnThreads;
using namespace std::chrono_literals;

struct Control {
  std::string name;
  Spec spec;
  int ranks = 2;
  bool c6 = false;       // C6 must fail
  bool c7 = false;       // C7 must fail
  std::string c6Needle;  // a finding C6 must show
  std::string c7Needle;
};

std::vector<Control> controls() {
  std::vector<Control> out;
  {
    // Writers wait as if there were two slots; with one, a late reader's pair is overwritten.
    Control c{"single-buffer", {}, 2, true, false, "unread", ""};
    c.spec.layout = "single-buffer";
    c.spec.steps = 300;
    c.spec.late.push_back({1, Role::kReader, 50, {}, 5ms});
    out.push_back(c);
  }
  {
    // From two steps before the wrap, a late writer: the reader takes 0xfffffffe for epoch 0.
    Control c{"epoch-ge", {}, 2, false, true, "", "this step's tag is"};
    c.spec.layout = "epoch-ge";
    c.spec.startEpoch = 0xfffffffeu;
    c.spec.steps = 64;
    c.spec.late.push_back({0, Role::kWriter, 0, {2}, 50ms});
    out.push_back(c);
  }
  {
    // From two steps before 2^31, a late writer: a signed compare takes 2147483646 (INT_MAX - 1)
    // for 2147483648 (INT_MIN).
    Control c{"epoch-signed-ge", {}, 2, false, true, "", "this step's tag is"};
    c.spec.layout = "epoch-signed-ge";
    c.spec.startEpoch = 0x7ffffffeu;
    c.spec.steps = 64;
    c.spec.late.push_back({0, Role::kWriter, 0, {2}, 50ms});
    out.push_back(c);
  }
  {
    // An earlier buffer's pairs for the very epochs of this run; the writer is late at first.
    Control c{"no-generation", {}, 2, false, true, "", "never pushed"};
    c.spec.layout = "no-generation";
    c.spec.prefill = Prefill::kEarlierBuffer;
    c.spec.steps = 64;
    c.spec.late.push_back({0, Role::kWriter, 0, {0}, 50ms});
    c.c7Needle = "before rank 0 stored that tag";
    out.push_back(c);
  }
  {
    // The tag lands 2 ms before the payload; late writers make readers wait on the tag.
    Control c{"tag-before-payload", {}, 2, false, true, "", "still storing its payload"};
    c.spec.layout = "tag-before-payload";
    c.spec.steps = 100;
    c.spec.late.push_back({0, Role::kWriter, 10, {}, 5ms});
    out.push_back(c);
  }
  {
    // Every rank zeroes its receive slots, landing after the peers' first push.
    Control c{"zero-then-push", {}, 3, true, true, "zeroed", "over a payload"};
    c.spec.layout = "zero-then-push";
    c.spec.steps = 50;
    out.push_back(c);
  }
  return out;
}

class DataPlaneControl : public ::testing::TestWithParam<Control> {};

TEST_P(DataPlaneControl, IsCaughtByThePropertyItBreaksAndNoOther) {
  const Control& control = GetParam();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(control.name + ", seed " + std::to_string(seed));
    for (Workload workload : {Workload::kExchange, Workload::kAllReduce}) {
      SCOPED_TRACE(toString(workload));
      Spec spec = control.spec;
      spec.workload = workload;
      const auto run = runOnThreads(spec, control.ranks, 2000ms, seed);
      ASSERT_TRUE(run.errors.empty()) << run.errors.front();
      const RunRecord record = recordOf(run.results);
      const Verdict c6 = checkers::checkNoOverwrite(record);
      const Verdict c7 = checkers::checkNoStale(record);
      const Verdict c8 = checkBoundedWithDataPlane(record);
      EXPECT_EQ(c6.failed(), control.c6) << describe(c6);
      EXPECT_EQ(c7.failed(), control.c7) << describe(c7);
      EXPECT_FALSE(c8.failed()) << describe(c8);  // caught, never by a hang
      if (!control.c6Needle.empty()) {
        EXPECT_TRUE(testing::anyFinding(c6, control.c6Needle)) << describe(c6);
      }
      if (!control.c7Needle.empty()) {
        EXPECT_TRUE(testing::anyFinding(c7, control.c7Needle)) << describe(c7);
      }
      // Every finding names a slot and an epoch.
      for (const Verdict* v : {&c6, &c7}) {
        for (const auto& f : v->findings) {
          if (f.text.rfind("... and", 0) == 0) continue;
          EXPECT_NE(f.text.find("epoch"), std::string::npos) << f.text;
          if (f.text.find("sum") == std::string::npos) {
            EXPECT_NE(f.text.find("slot"), std::string::npos) << f.text;
          }
        }
      }
    }
  }
}

TEST_P(DataPlaneControl, TheReferenceLayoutPassesTheSameSetup) {
  const Control& control = GetParam();
  for (Workload workload : {Workload::kExchange, Workload::kAllReduce}) {
    Spec spec = control.spec;
    spec.layout = "reference";
    spec.workload = workload;
    const auto run = runOnThreads(spec, control.ranks);
    const RunRecord record = recordOf(run.results);
    const Verdict c6 = checkers::checkNoOverwrite(record);
    const Verdict c7 = checkers::checkNoStale(record);
    const Verdict c8 = checkBoundedWithDataPlane(record);
    EXPECT_EQ(c6.status, Verdict::Status::kPass) << describe(c6);
    EXPECT_EQ(c7.status, Verdict::Status::kPass) << describe(c7);
    EXPECT_EQ(c8.status, Verdict::Status::kPass) << describe(c8);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, DataPlaneControl, ::testing::ValuesIn(controls()),
                         [](const ::testing::TestParamInfo<Control>& info) {
                           std::string name;
                           for (char c : info.param.name) name += c == '-' ? '_' : c;
                           return name;
                         });

// The single-buffer control is caught by the replay even when no reader is late: its second
// push into the one slot is not ordered after the read of the first.
TEST(DataPlaneControlReplay, SingleBufferIsUnorderedEvenWithoutDelays) {
  Spec spec;
  spec.layout = "single-buffer";
  spec.steps = 20;
  const auto run = runOnThreads(spec, 2);
  const RunRecord record = recordOf(run.results);
  const Analysis analysis = analyzeOverwrites(record);
  EXPECT_GT(analysis.replayed, 0u);
  const Verdict c6 = checkers::checkNoOverwrite(record);
  EXPECT_TRUE(testing::anyFinding(c6, "epoch 0 there was unread")) << describe(c6);
}

// The signed compare is right where epoch-ge is wrong: across the 2^32 wrap, -2 < 0 as ints, so
// epoch-ge's own setup (a late writer at epoch 0, two steps after 0xfffffffe) passes it. The
// bug is 2^31's, and only a control that crosses 2^31 shows it.
TEST(DataPlaneControlEpochs, SignedCompareHoldsAtTheWrapOf2To32) {
  Spec spec;
  spec.layout = "epoch-signed-ge";
  spec.startEpoch = 0xfffffffeu;
  spec.steps = 64;
  spec.late.push_back({0, Role::kWriter, 0, {2}, 50ms});
  const RunRecord record = recordOf(runOnThreads(spec, 2).results);
  const Verdict c7 = checkers::checkNoStale(record);
  EXPECT_EQ(c7.status, Verdict::Status::kPass) << describe(c7);
}

// wait-names-self moves the data as the reference does (C6, C7 and C8 pass a run without a
// stop); when a rank stops, every survivor's timeout names the survivor itself, so C8 finds the
// stop unreported. The reference's timeouts name the stopped rank: C8 passes the same stop.
TEST(DataPlaneControlStop, WaitNamesSelfLeavesTheStoppedRankUnreported) {
  for (Workload workload : {Workload::kExchange, Workload::kAllReduce}) {
    SCOPED_TRACE(toString(workload));
    Spec spec;
    spec.layout = "wait-names-self";
    spec.workload = workload;
    spec.steps = 100;
    {
      const RunRecord record = recordOf(runOnThreads(spec, 3).results);
      for (const Verdict& v : {checkers::checkNoOverwrite(record), checkers::checkNoStale(record),
                               checkBoundedWithDataPlane(record)}) {
        EXPECT_EQ(v.status, Verdict::Status::kPass) << describe(v);
      }
    }
    spec.stop = model::Stop{2, 40};
    const auto run = runOnThreads(spec, 3, 300ms);
    ASSERT_TRUE(run.errors.empty()) << run.errors.front();
    int timeouts = 0;
    for (int r : {0, 1}) {
      const model::Result& result = run.results[static_cast<std::size_t>(r)];
      if (result.outcome != model::DataplaneOutcome::kTimeout) continue;
      ++timeouts;
      EXPECT_EQ(result.waitPeer, r) << result.detail;
    }
    EXPECT_GE(timeouts, 1);
    const Verdict c8 = checkBoundedWithDataPlane(recordOf(run.results));
    EXPECT_TRUE(c8.failed()) << describe(c8);
    EXPECT_TRUE(testing::anyFinding(c8,
                                    "rank(s) 2 stopped mid-run but no other rank's wait "
                                    "timed out on them"))
        << describe(c8);

    spec.layout = "reference";
    const Verdict reference =
        checkBoundedWithDataPlane(recordOf(runOnThreads(spec, 3, 300ms).results));
    EXPECT_EQ(reference.status, Verdict::Status::kPass) << describe(reference);
  }
}

}  // namespace
}  // namespace peerconf::harness::dataplane
