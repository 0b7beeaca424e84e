// The Group conformance checks: each runs inside every rank of a fresh group.
#include "group_conformance.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"

namespace peerconf::testing {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kGenerous{20000};

std::vector<std::byte> pattern(int rank, int salt, std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<std::byte>((rank * 131 + salt * 17 + static_cast<int>(i) * 7 + 1) & 0xff);
  }
  return out;
}

std::vector<std::byte> intBytes(int value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

std::string rankTag(const Group& group) { return "rank " + std::to_string(group.rank()); }

TEST_P(GroupConformance, RanksAreDistinctAndSizeIsTheGroup) {
  const GroupHarness& h = GetParam();
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    ASSERT_EQ(g.size(), h.ranks);
    ASSERT_GE(g.rank(), 0);
    ASSERT_LT(g.rank(), g.size());
    const auto all = g.allGather(intBytes(g.rank()));
    ASSERT_EQ(all.size(), static_cast<std::size_t>(h.ranks));
    for (int r = 0; r < h.ranks; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], intBytes(r));
  });
}

TEST_P(GroupConformance, AllReduceMinGivesTheMinimumOnEveryRank) {
  const GroupHarness& h = GetParam();
  struct Pattern {
    const char* name;
    std::function<int(int rank, int size)> value;
  };
  const std::vector<Pattern> patterns = {
      {"rank", [](int r, int) { return r; }},
      {"size - rank", [](int r, int n) { return n - r; }},
      {"all equal", [](int, int) { return 42; }},
      {"one zero among ones", [](int r, int n) { return r == n / 2 ? 0 : 1; }},
      {"all ones (tpAgree true)", [](int, int) { return 1; }},
      {"INT_MIN on the last rank", [](int r, int n) { return r == n - 1 ? INT_MIN : INT_MAX - r; }},
      {"negative", [](int r, int) { return -1000 - 3 * r; }},
      {"scrambled", [](int r, int) { return static_cast<int>((r * 2654435761u) % 1000003u); }},
  };
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    for (const auto& p : patterns) {
      SCOPED_TRACE(p.name);
      int expected = INT_MAX;
      for (int r = 0; r < g.size(); ++r) expected = std::min(expected, p.value(r, g.size()));
      EXPECT_EQ(g.allReduceMin(p.value(g.rank(), g.size())), expected);
    }
  });
}

TEST_P(GroupConformance, AllGatherReturnsEveryRanksBytesIndexedByRank) {
  const GroupHarness& h = GetParam();
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{64}, std::size_t{4096}}) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      const auto all = g.allGather(pattern(g.rank(), static_cast<int>(n), n));
      ASSERT_EQ(all.size(), static_cast<std::size_t>(g.size()));
      for (int r = 0; r < g.size(); ++r) {
        EXPECT_EQ(all[static_cast<std::size_t>(r)], pattern(r, static_cast<int>(n), n))
            << "slot of rank " << r;
      }
    }
  });
}

TEST_P(GroupConformance, RepeatedCallsDoNotMixGenerations) {
  const GroupHarness& h = GetParam();
  constexpr int kRounds = 300;
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    for (int i = 0; i < kRounds; ++i) {
      // Ranks drift apart so that a fast rank enters round i+1 while others still leave round i.
      if ((i + g.rank()) % 5 == 0) std::this_thread::yield();
      const int min = g.allReduceMin(i * 1000 + g.rank());
      ASSERT_EQ(min, i * 1000) << "round " << i;
      const auto all = g.allGather(intBytes(i * 1000 + g.rank()));
      ASSERT_EQ(all.size(), static_cast<std::size_t>(g.size()));
      for (int r = 0; r < g.size(); ++r) {
        ASSERT_EQ(all[static_cast<std::size_t>(r)], intBytes(i * 1000 + r))
            << "round " << i << ", slot of rank " << r;
      }
    }
  });
}

TEST_P(GroupConformance, AllGatherOfDifferentSizesFailsOnEveryRank) {
  const GroupHarness& h = GetParam();
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    try {
      g.allGather(pattern(g.rank(), 0, static_cast<std::size_t>(g.rank()) + 1));
      ADD_FAILURE() << "all-gather of different sizes returned";
    } catch (const GroupTimeout& e) {
      ADD_FAILURE() << "expected GroupError, got a timeout: " << e.what();
    } catch (const GroupError& e) {
      EXPECT_EQ(e.op(), Op::kAllGather);
      EXPECT_EQ(e.rank(), g.rank());
    }
    // Agreed failure: the group stays usable.
    EXPECT_EQ(g.allReduceMin(g.rank()), 0);
  });
}

// Collectives in another order across ranks (PyTorch 195501): the last rank calls allReduceMin
// where the others call allGather. Every rank must raise GroupError, at once (well before the
// generous deadline): no rank may pair the two calls and return what came back.
TEST_P(GroupConformance, DifferentCollectivesAtOnePointFailOnEveryRankAtOnce) {
  const GroupHarness& h = GetParam();
  if (h.ranks < 2) GTEST_SKIP() << "one rank has nobody to mismatch";
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    const auto start = std::chrono::steady_clock::now();
    const bool reorders = g.rank() == g.size() - 1;
    try {
      if (reorders) {
        (void)g.allReduceMin(1);
      } else {
        (void)g.allGather(pattern(g.rank(), 3, 16));
      }
      ADD_FAILURE() << "a call that met another collective returned";
    } catch (const GroupTimeout& e) {
      ADD_FAILURE() << "expected GroupError at once, got a timeout: " << e.what();
    } catch (const GroupError& e) {
      EXPECT_EQ(e.op(), reorders ? Op::kAllReduce : Op::kAllGather) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, kGenerous / 4);
  });
}

// One rank never makes the call: every rank that did throws GroupTimeout, on time, naming it.
void expectTimeout(const GroupHarness& h, Op op, int skipper) {
  using Clock = std::chrono::steady_clock;
  // Before any rank's call: no call may give up before this plus the deadline.
  const Clock::time_point runStart = Clock::now();
  h.run(h.shortDeadline, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    if (g.rank() == skipper) return;
    const Clock::time_point start = Clock::now();
    try {
      if (op == Op::kAllReduce) {
        g.allReduceMin(1);
      } else {
        g.allGather(intBytes(g.rank()));
      }
      ADD_FAILURE() << opName(op) << " returned although rank " << skipper << " never called";
    } catch (const GroupTimeout& e) {
      EXPECT_EQ(e.op(), op);
      EXPECT_EQ(e.rank(), g.rank());
      EXPECT_DOUBLE_EQ(e.deadlineSeconds(), std::chrono::duration<double>(h.shortDeadline).count());
      // The rank that never called is named (threads: who entered; MPI: presence messages).
      EXPECT_EQ(e.missing(), std::vector<int>{skipper}) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected GroupTimeout, got: " << e.what();
    }
    const Clock::time_point end = Clock::now();
    // A rank that entered late may be woken by an earlier rank's timeout, before its own
    // deadline, but never before the first deadline could have passed.
    EXPECT_GE(end - runStart, h.shortDeadline);
    EXPECT_LE(end - start, h.shortDeadline + h.timeoutSlack);
  });
}

TEST_P(GroupConformance, AllReduceTimesOutWhenOneRankNeverCalls) {
  expectTimeout(GetParam(), Op::kAllReduce, GetParam().ranks - 1);
}

TEST_P(GroupConformance, AllGatherTimesOutWhenOneRankNeverCalls) {
  expectTimeout(GetParam(), Op::kAllGather, 0);
}

TEST_P(GroupConformance, AbortWakesEveryRank) {
  const GroupHarness& h = GetParam();
  if (!h.abort) GTEST_SKIP() << "this group has no abort that leaves the process running";
  const std::string why = "rank 0 gave up on purpose";
  h.run(kGenerous, [&](Group& g) {
    SCOPED_TRACE(rankTag(g));
    const auto start = std::chrono::steady_clock::now();
    if (g.rank() == 0) {
      // Give the others time to block, so the abort has waiters to wake.
      std::this_thread::sleep_for(milliseconds(20));
      h.abort(g, why);
    } else {
      try {
        g.allReduceMin(g.rank());
        ADD_FAILURE() << "all-reduce returned although rank 0 never called it";
      } catch (const GroupTimeout& e) {
        ADD_FAILURE() << "waited for the deadline instead of waking: " << e.what();
      } catch (const GroupError& e) {
        EXPECT_EQ(e.peer(), 0) << e.what();
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
      }
      EXPECT_LT(std::chrono::steady_clock::now() - start, kGenerous / 4);
    }
    // Every later call fails the same way, on every rank.
    EXPECT_THROW(g.allGather(intBytes(g.rank())), GroupError);
    EXPECT_THROW(g.allReduceMin(0), GroupError);
  });
}

}  // namespace
}  // namespace peerconf::testing
