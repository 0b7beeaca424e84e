// The core's error hierarchy (errors.cc): every op's name, the fields each error carries, the
// messages built from them, and describe() of an exception_ptr.
#include "errors.h"

#include <gtest/gtest.h>

#include <exception>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace peerconf {
namespace {

TEST(ErrorsTest, EveryOpHasItsOwnName) {
  const std::vector<Op> ops = {Op::kAlloc,       Op::kFree,      Op::kGetHandle, Op::kOpenHandle,
                               Op::kCloseHandle, Op::kCopy,      Op::kSetDevice, Op::kAllReduce,
                               Op::kAllGather,   Op::kHandshake, Op::kClose};
  std::set<std::string_view> names;
  for (Op op : ops) names.insert(opName(op));
  EXPECT_EQ(names.size(), ops.size());
  EXPECT_EQ(names.count("unknown"), 0u);
  EXPECT_EQ(opName(Op::kOpenHandle), "open");
  EXPECT_EQ(opName(Op::kCloseHandle), "close-handle");
  EXPECT_EQ(opName(static_cast<Op>(99)), "unknown");
}

TEST(ErrorsTest, BackendErrorCarriesItsFieldsAndNamesThemInItsMessage) {
  const BackendError e(Op::kOpenHandle, 2, 3, 205, "mapping of buffer object failed",
                       "hipIpcOpenMemHandle(&ptr, raw, 1)", "hip_backend.cc:101");
  EXPECT_EQ(e.op(), Op::kOpenHandle);
  EXPECT_EQ(e.rank(), 2);
  EXPECT_EQ(e.peer(), 3);
  EXPECT_EQ(e.code(), 205);
  EXPECT_EQ(e.codeText(), "mapping of buffer object failed");
  EXPECT_EQ(e.call(), "hipIpcOpenMemHandle(&ptr, raw, 1)");
  EXPECT_EQ(e.where(), "hip_backend.cc:101");
  EXPECT_STREQ(e.what(),
               "open failed on rank 2 (peer 3): mapping of buffer object failed (205) in "
               "hipIpcOpenMemHandle(&ptr, raw, 1) at hip_backend.cc:101");
  const Error& base = e;  // caught as the base, the fields stay
  EXPECT_EQ(base.code(), 205);
}

TEST(ErrorsTest, ABackendMessageLeavesOutWhatIsNotKnown) {
  const BackendError e(Op::kAlloc, 0, kNoPeer, 2, "out of memory");
  EXPECT_STREQ(e.what(), "alloc failed on rank 0: out of memory (2)");
  EXPECT_EQ(e.peer(), kNoPeer);
  EXPECT_TRUE(e.call().empty());
  EXPECT_TRUE(e.where().empty());
}

TEST(ErrorsTest, AGroupTimeoutIsAGroupErrorNamingItsDeadline) {
  try {
    throw GroupTimeout(Op::kAllGather, 1, 2.5);
  } catch (const GroupError& e) {  // a timeout is caught where a group error is
    const auto* timeout = dynamic_cast<const GroupTimeout*>(&e);
    ASSERT_NE(timeout, nullptr);
    EXPECT_EQ(timeout->deadlineSeconds(), 2.5);
    EXPECT_EQ(e.op(), Op::kAllGather);
    EXPECT_EQ(e.rank(), 1);
    EXPECT_EQ(e.code(), 0);
    EXPECT_EQ(std::string(e.what()).rfind("all-gather on rank 1 did not complete within", 0), 0u)
        << e.what();
  }
}

TEST(ErrorsTest, AGroupTimeoutNamesTheRanksThatDidNotArriveWhenKnown) {
  const GroupTimeout one(Op::kAllReduce, 0, 0.3, {2});
  EXPECT_EQ(one.missing(), std::vector<int>{2});
  EXPECT_NE(std::string(one.what()).find("s (rank 2 did not arrive)"), std::string::npos)
      << one.what();
  const GroupTimeout unknown(Op::kAllReduce, 0, 0.3);
  EXPECT_TRUE(unknown.missing().empty());
  EXPECT_EQ(std::string(unknown.what()).find("did not arrive"), std::string::npos);
}

TEST(ErrorsTest, AGroupErrorCarriesTheRanksOwnEarlierFailure) {
  GroupTimeout timeout(Op::kAllReduce, 1, 0.3, {0});
  EXPECT_EQ(timeout.cause(), nullptr);
  timeout.attachCause(std::make_exception_ptr(BackendError(Op::kOpenHandle, 1, 0, 205, "boom")));
  EXPECT_NE(describe(timeout.cause()).find("boom"), std::string::npos);
}

TEST(ErrorsTest, AHandshakeErrorSaysWhichRankFailedAndKeepsTheCause) {
  const auto cause = std::make_exception_ptr(BackendError(Op::kOpenHandle, 1, 0, 205, "boom"));
  const HandshakeError here(1, true, cause, {"free: x"});
  EXPECT_STREQ(here.what(), "peer memory handshake failed on this TP rank");
  EXPECT_TRUE(here.thisRank());
  EXPECT_EQ(here.op(), Op::kHandshake);
  EXPECT_EQ(here.rank(), 1);
  EXPECT_EQ(here.cause(), cause);
  EXPECT_EQ(here.cleanupErrors(), std::vector<std::string>{"free: x"});
  const HandshakeError elsewhere(0, false, nullptr, {});
  EXPECT_STREQ(elsewhere.what(), "peer memory handshake failed on another TP rank");
  EXPECT_FALSE(elsewhere.thisRank());
  EXPECT_EQ(elsewhere.cause(), nullptr);
}

TEST(ErrorsTest, ACloseErrorListsEveryFailedRelease) {
  const CloseError e(3, {"peer 1: invalid argument", "free: out of memory"});
  EXPECT_STREQ(e.what(),
               "close on rank 3 failed 2 release(s): [peer 1: invalid argument] [free: out of "
               "memory]");
  EXPECT_EQ(e.op(), Op::kClose);
  EXPECT_EQ(e.failures().size(), 2u);
}

TEST(ErrorsTest, DescribeGivesTheMessageOfAnyException) {
  EXPECT_EQ(describe(nullptr), "");
  EXPECT_EQ(describe(std::make_exception_ptr(std::runtime_error("plain"))), "plain");
  EXPECT_EQ(describe(std::make_exception_ptr(CloseError(0, {}))),
            "close on rank 0 failed 0 release(s):");
  EXPECT_EQ(describe(std::make_exception_ptr(42)), "unknown exception");
}

}  // namespace
}  // namespace peerconf
