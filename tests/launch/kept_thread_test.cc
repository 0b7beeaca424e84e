// KeptThread and FiberHosts (kept_thread.cc): jobs one after the other on one thread kept between
// them, a stuck job abandoned without waiting, and a host given back taken again.
#include "launch/kept_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace peerconf::harness::launch {
namespace {

TEST(KeptThread, RunsEachJobInTurnOnOneThread) {
  auto kept = KeptThread::start();
  std::vector<std::thread::id> ids;
  std::vector<int> order;
  for (int i = 0; i < 50; ++i) {
    // submit waits for the job before: the vectors are never written by two jobs at once.
    kept->submit([&, i] {
      ids.push_back(std::this_thread::get_id());
      order.push_back(i);
    });
  }
  kept->waitIdle();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  for (const auto& id : ids) EXPECT_EQ(id, ids.front());
  EXPECT_NE(ids.front(), std::this_thread::get_id());
  kept->stop(/*join=*/true);
}

TEST(KeptThread, WaitIdleReturnsOnlyOnceTheJobHasReturned) {
  auto kept = KeptThread::start();
  std::promise<void> go;
  std::atomic<bool> returned{false};
  kept->submit([&, ready = go.get_future().share()] {
    ready.wait();
    returned = true;
  });
  auto waiter = std::async(std::launch::async, [&] {
    kept->waitIdle();
    return returned.load();
  });
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  go.set_value();
  EXPECT_TRUE(waiter.get());
  kept->stop(/*join=*/true);
}

TEST(KeptThread, AStuckJobIsAbandonedWithoutWaiting) {
  auto kept = KeptThread::start();
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  kept->submit([released] { released.wait(); });
  const auto before = std::chrono::steady_clock::now();
  kept->stop(/*join=*/false);  // returns with the job still under way
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  kept.reset();
  release->set_value();  // the thread ends on its own, holding its KeptThread alive until then
}

TEST(FiberHosts, AHostGivenBackIsTakenForTheNextRun) {
  auto first = FiberHosts::take();
  KeptThread* const seen = first.get();
  FiberHosts::giveBack(std::move(first));
  auto again = FiberHosts::take();
  EXPECT_EQ(again.get(), seen);
  auto other = FiberHosts::take();  // none idle: a new one
  EXPECT_NE(other.get(), seen);
  FiberHosts::giveBack(std::move(again));
  FiberHosts::giveBack(std::move(other));
}

}  // namespace
}  // namespace peerconf::harness::launch
